"""A frozen peer under concurrent calls must cost each call its deadline and nothing more:
not the other peers' answers, and not the calls after it (CONTRACT.md, Federation: a peer's
failure is `partial`, its circuit reopens to it once it answers). In process:
a2a.federation.peers.Peers, its own HTTP client, against a socket that listens but never
accepts (a frozen peer: connections complete in the kernel, nothing answers) and a live
server (tests.federation.peer_servers).

Reported: with one HTTP pool of 64 connections for every peer, 200 calls over a frozen peer
and a healthy one failed most of the healthy one's answers, and left the pool full for good
(httpcore leaks the slot of a request cancelled while waiting for one, encode/httpcore#1093:
our peer deadline cancels it), so every peer then timed out until the service restarted.
"""

from __future__ import annotations

import asyncio
import socket
from collections import Counter
from collections.abc import Iterator

import pytest

from a2a.federation.config import PeerConfig
from a2a.federation.peers import Peers
from a2a.query.results import QueryDecisionsResult
from tests.federation.peer_servers import GarbagePeer, serving

#: Concurrent calls, each asking both peers: well past one pool's worth of connections.
CALLS = 200


@pytest.fixture(scope="module")
def frozen() -> Iterator[int]:
    """The port of a peer that never answers: its socket listens, never accepts."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4096)
        yield listener.getsockname()[1]


@pytest.fixture(scope="module")
def good() -> Iterator[str]:
    with serving(GarbagePeer().app) as url:
        yield f"{url}/good"


async def test_a_frozen_peer_costs_the_others_nothing_then_or_after(frozen: int, good: str) -> None:
    configs = [
        PeerConfig(name="frozen", url=f"http://127.0.0.1:{frozen}"),
        PeerConfig(name="good", url=good),
    ]
    peers = Peers(configs, timeout=1.0)
    try:

        async def ask(names: list[str]) -> Counter[tuple[str, str]]:
            answers = await peers.ask(
                names, "cstp.queryDecisions", {"query": "q"}, QueryDecisionsResult
            )
            return Counter((a.peer, a.status) for a in answers)

        burst = sum(
            await asyncio.gather(*(ask(["frozen", "good"]) for _ in range(CALLS))), Counter()
        )
        # After it, the healthy peer still answers every call.
        after = sum(await asyncio.gather(*(ask(["good"]) for _ in range(10))), Counter())
        assert (burst, after) == (
            {("frozen", "failed"): CALLS, ("good", "successful"): CALLS},
            {("good", "successful"): 10},
        )
    finally:
        await peers.aclose()
