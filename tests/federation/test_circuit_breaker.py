"""A peer's circuit breaker on a manual clock (CONTRACT.md, Federation: 3 failures in a
row, then skipped and tried again after 1, 2, 4 ... 30 s; one success closes it), in
process: a2a.federation.peers.Peers against a port where nothing listens, then a live
server on that port (tests.federation.peer_servers)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from pydantic import SecretStr

from a2a.federation.config import PeerConfig
from a2a.federation.peers import Peers
from a2a.observability.metrics import Metrics
from a2a.query.results import QueryDecisionsResult
from a2a.results import EmbeddingModel
from tests.federation.peer_servers import GOOD_MODEL, GarbagePeer, serving
from tests.servers import free_port

TOKEN = "breaker-token-0123456789"
UNREACHABLE = "the peer cannot be reached (connection failed)"


class Clock:
    """Monotonic seconds that move only when a test sets them."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Breaker:
    """One peer `p` at `port` (its `good` path), with every request it is sent recorded."""

    def __init__(self, port: int, clock: Clock, http: httpx.AsyncClient) -> None:
        config = PeerConfig(name="p", url=f"http://127.0.0.1:{port}/good", token=SecretStr(TOKEN))
        self.metrics = Metrics()
        self.peers = Peers([config], timeout=5.0, clock=clock, metrics=self.metrics, http=http)

    async def status(self) -> str:
        """The status of one call to `p`."""
        [answer] = await self.peers.ask(
            ["p"], "cstp.queryDecisions", {"query": "q"}, QueryDecisionsResult
        )
        if answer.status == "failed":
            assert answer.error is not None
            assert (answer.error.code, answer.error.message) == (-32003, UNREACHABLE)
        if answer.status == "successful":
            assert answer.result is not None
            assert [d.id for d in answer.result.decisions] == ["g1"]
        return answer.status

    def counted(self, status: str) -> float:
        value = self.metrics.registry.get_sample_value(
            "cstp_peer_calls_total", {"peer": "p", "status": status}
        )
        return value or 0.0


@contextmanager
def recording() -> Iterator[tuple[httpx.AsyncClient, list[str]]]:
    """An HTTP client recording each request it starts ("POST /good/cstp", ...), whether or
    not a connection is made."""
    sent: list[str] = []

    async def seen(request: httpx.Request) -> None:
        sent.append(f"{request.method} {request.url.path}")

    yield httpx.AsyncClient(event_hooks={"request": [seen]}), sent


async def test_three_failures_open_it_tries_back_off_to_30_s_and_one_success_closes_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    port, clock = free_port(), Clock()
    with recording() as (http, sent):
        breaker = Breaker(port, clock, http)
        posts = lambda: sent.count("POST /good/cstp")  # noqa: E731

        # Closed: each call is made, and fails.
        assert [await breaker.status() for _ in range(3)] == ["failed"] * 3
        assert posts() == 3
        # Open: skipped, no connection attempted.
        assert [await breaker.status() for _ in range(5)] == ["skipped"] * 5
        assert posts() == 3

        # Tried again 1 s after opening, then 2, 4, 8, 16, 30, 30 s after each try.
        for at in (1, 3, 7, 15, 31, 61, 91):
            clock.now = at - 0.001
            assert await breaker.status() == "skipped", at
            clock.now = at
            assert await breaker.status() == "failed", at  # the try
            assert await breaker.status() == "skipped", at  # the calls meanwhile
        assert posts() == 3 + 7

        with serving(GarbagePeer().app, port):
            clock.now = 121 - 0.001
            assert await breaker.status() == "skipped"
            clock.now = 121
            assert await breaker.status() == "successful"  # the try closes it
            assert [await breaker.status() for _ in range(3)] == ["successful"] * 3
        assert posts() == 3 + 7 + 4
        await http.aclose()

    assert (breaker.counted("failed"), breaker.counted("successful")) == (10, 4)
    assert breaker.counted("skipped") == 5 + 7 * 2 + 1
    # Going down and coming back are each logged once; the token never.
    lines = [r.getMessage() for r in caplog.records if r.name == "a2a.limits.outage"]
    assert lines == [
        f"peer p unreachable ({UNREACHABLE}); skipping it",
        "peer p answers again; calls to it resume",
    ]
    assert TOKEN not in caplog.text


async def test_only_failures_in_a_row_open_it() -> None:
    port, clock = free_port(), Clock()
    with recording() as (http, _):
        breaker = Breaker(port, clock, http)
        statuses = [await breaker.status() for _ in range(2)]
        with serving(GarbagePeer().app, port):
            statuses.append(await breaker.status())
        statuses += [await breaker.status() for _ in range(4)]
        await http.aclose()
    assert statuses == ["failed", "failed", "successful", "failed", "failed", "failed", "skipped"]


async def test_a_peer_back_from_an_outage_has_its_card_read_again() -> None:
    port, clock = free_port(), Clock()
    with recording() as (http, sent):
        breaker = Breaker(port, clock, http)
        cards = lambda: sent.count("GET /good/.well-known/agent-card.json")  # noqa: E731
        # Down at its first call: no card, no model (merged by rank meanwhile).
        assert await breaker.peers.model_of("p") is None
        assert [await breaker.status() for _ in range(3)] == ["failed"] * 3
        assert cards() == 1
        # While its circuit is open its card is not read either, even past the card's
        # 5 minutes: a peer that is skipped costs nothing.
        clock.now = 400
        assert await breaker.status() == "failed"  # the try due since 1 s
        assert await breaker.status() == "skipped"
        assert await breaker.peers.model_of("p") is None
        assert cards() == 1
        with serving(GarbagePeer().app, port):
            clock.now = 402
            assert await breaker.status() == "successful"
            # Back: its card is read at the next call, not 5 minutes after the failed read.
            assert await breaker.peers.model_of("p") == EmbeddingModel.model_validate(GOOD_MODEL)
            assert cards() == 2
            assert await breaker.peers.model_of("p") == EmbeddingModel.model_validate(GOOD_MODEL)
            assert cards() == 2
        await http.aclose()
