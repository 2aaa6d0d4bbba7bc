"""Per-agent, per-method rate limits on JSON-RPC calls (CONTRACT.md section Rate limiting)."""

from __future__ import annotations

import asyncio
import logging
import signal
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from limits.storage import MemoryStorage
from typer.testing import CliRunner

from a2a.app.runtime import Runtime
from a2a.cli.main import app as cli_app
from a2a.embeddings import Embedder
from a2a.errors import RateLimited, SettingsError
from a2a.http.app import create_app
from a2a.limits.admission import RateLimits
from a2a.limits.config import LimitPolicy
from a2a.rpc.methods import CallContext
from a2a.settings import Settings, load_settings
from tests.conftest import rpc_call
from tests.redis_server import running_redis, start_redis
from tests.servers import free_port, freeze, stop

TOKENS = "alice:alice-token-1,bob:bob-token-2,carol:carol-token-3"
QUERY = {"query": "database migration"}


def limit_settings(tmp_path: Path, **overrides: Any) -> Settings:
    return load_settings(data_dir=tmp_path / "data", agent_id="test-agent", **overrides)


class CountingEmbedder:
    """The real model, counting the queries it embeds."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.queries = 0

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return self.inner.embed_query(text)


@asynccontextmanager
async def served(
    settings: Settings, embedder: Embedder, address: str = "127.0.0.1"
) -> AsyncIterator[tuple[httpx.AsyncClient, Any]]:
    """A client to the app over ASGI, calling from `address`, and a client factory."""
    runtime = Runtime.open(settings, role="test", embedder=embedder)
    app = create_app(settings, runtime)

    def client_from(host: str) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=app, client=(host, 40000))
        return httpx.AsyncClient(transport=transport, base_url="http://cstp.test")

    try:
        async with app.router.lifespan_context(app), client_from(address) as client:
            yield client, client_from
    finally:
        runtime.close()


def as_agent(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def query(client: httpx.AsyncClient, token: str | None = None, id: Any = 1) -> dict[str, Any]:
    headers = as_agent(token) if token else {}
    response = await client.post(
        "/cstp", json=rpc_call("cstp.queryDecisions", QUERY, id), headers=headers
    )
    return dict(response.json())


def codes(replies: list[dict[str, Any]]) -> list[int | None]:
    return [reply.get("error", {}).get("code") for reply in replies]


async def test_each_agent_has_its_own_bucket(tmp_path: Path, embedder: Embedder) -> None:
    settings = limit_settings(
        tmp_path, auth_tokens=TOKENS, rate_limits="cstp.queryDecisions=3/minute"
    )
    async with served(settings, embedder) as (client, _):
        alice = [await query(client, "alice-token-1", i) for i in range(5)]
        bob = [await query(client, "bob-token-2", i) for i in range(4)]
        carol = [await query(client, "carol-token-3", i) for i in range(1)]
    assert codes(alice) == [None, None, None, -32002, -32002]
    assert codes(bob) == [None, None, None, -32002]
    assert codes(carol) == [None]


async def test_batch_of_50_under_5_per_minute_gives_5_results_and_45_rate_limited(
    tmp_path: Path, embedder: Embedder
) -> None:
    settings = limit_settings(
        tmp_path, auth_tokens=TOKENS, rate_limits="cstp.queryDecisions=5/minute"
    )
    batch = [rpc_call("cstp.queryDecisions", QUERY, f"q{i}") for i in range(50)]
    async with served(settings, embedder) as (client, _):
        response = await client.post("/cstp", json=batch, headers=as_agent("alice-token-1"))
        again = await client.post("/cstp", json=batch[:3], headers=as_agent("alice-token-1"))
    replies = response.json()
    assert response.status_code == 200 and len(replies) == 50
    assert sorted(r["id"] for r in replies) == sorted(f"q{i}" for i in range(50))
    assert sum("result" in r for r in replies) == 5
    limited = [r for r in replies if "error" in r]
    assert len(limited) == 45
    assert all(r["error"]["code"] == -32002 for r in limited)
    assert all(55 <= r["error"]["data"]["retryAfter"] <= 60 for r in limited)
    # Some calls ran, so no Retry-After; a batch has no single X-RateLimit-* to report.
    assert "retry-after" not in response.headers
    assert "x-ratelimit-remaining" not in response.headers
    # Every call of the next batch is limited: now the response says when to retry.
    assert codes(again.json()) == [-32002] * 3
    assert 55 <= int(again.headers["retry-after"]) <= 60


async def test_notifications_consume_quota_and_retry_after_is_right(
    tmp_path: Path, embedder: Embedder
) -> None:
    settings = limit_settings(
        tmp_path, auth_tokens=TOKENS, rate_limits="cstp.queryDecisions=2/second"
    )
    notification = {"jsonrpc": "2.0", "method": "cstp.queryDecisions", "params": QUERY}
    alice = as_agent("alice-token-1")
    async with served(settings, embedder) as (client, _):
        sent = [await client.post("/cstp", json=notification, headers=alice) for _ in range(2)]
        limited = await client.post(
            "/cstp", json=rpc_call("cstp.queryDecisions", QUERY, 7), headers=alice
        )
        window_ends = float(sent[0].headers["x-ratelimit-reset"])
        await asyncio.sleep(max(0.0, window_ends - time.time()) + 0.05)
        later = await client.post(
            "/cstp", json=rpc_call("cstp.queryDecisions", QUERY, 8), headers=alice
        )
    assert [r.status_code for r in sent] == [204, 204]
    assert [r.headers["x-ratelimit-remaining"] for r in sent] == ["1", "0"]
    assert limited.json()["id"] == 7
    assert limited.json()["error"]["code"] == -32002
    assert limited.json()["error"]["data"] == {"retryAfter": 1}
    assert limited.headers["retry-after"] == "1"
    assert limited.headers["x-ratelimit-limit"] == "2"
    assert limited.headers["x-ratelimit-remaining"] == "0"
    assert "result" in later.json()


async def test_single_call_carries_x_ratelimit_headers(tmp_path: Path, embedder: Embedder) -> None:
    settings = limit_settings(
        tmp_path, auth_tokens=TOKENS, rate_limits="cstp.queryDecisions=5/minute"
    )
    async with served(settings, embedder) as (client, _):
        started = time.time()
        response = await client.post(
            "/cstp", json=rpc_call("cstp.queryDecisions", QUERY), headers=as_agent("bob-token-2")
        )
    assert response.headers["x-ratelimit-limit"] == "5"
    assert response.headers["x-ratelimit-remaining"] == "4"
    assert started + 59 <= int(response.headers["x-ratelimit-reset"]) <= started + 61
    assert "retry-after" not in response.headers


async def test_overall_default_limit_counts_every_method(
    tmp_path: Path, embedder: Embedder
) -> None:
    settings = limit_settings(
        tmp_path,
        auth_tokens=TOKENS,
        rate_limit_default="3/minute",
        rate_limits="cstp.queryDecisions=100/minute",
    )
    batch = [
        rpc_call("rpc.discover", id=1),
        *(rpc_call("cstp.queryDecisions", QUERY, i) for i in (2, 3, 4)),
    ]
    async with served(settings, embedder) as (client, _):
        response = await client.post("/cstp", json=batch, headers=as_agent("alice-token-1"))
        bob = await query(client, "bob-token-2")
    replies = response.json()
    assert sum("result" in r for r in replies) == 3
    assert codes([r for r in replies if "error" in r]) == [-32002]
    assert "result" in bob


async def test_limited_calls_do_no_embedding_work(tmp_path: Path, embedder: Embedder) -> None:
    counting = CountingEmbedder(embedder)
    settings = limit_settings(
        tmp_path, auth_tokens=TOKENS, rate_limits="cstp.queryDecisions=2/minute"
    )
    batch = [rpc_call("cstp.queryDecisions", QUERY, i) for i in range(10)]
    async with served(settings, counting) as (client, _):
        await client.post("/cstp", json=batch, headers=as_agent("alice-token-1"))
    assert counting.queries == 2


async def test_with_auth_off_each_client_address_is_its_own_agent(
    tmp_path: Path, embedder: Embedder
) -> None:
    settings = limit_settings(tmp_path, rate_limits="cstp.queryDecisions=1/minute")
    async with served(settings, embedder, "10.0.0.1") as (first, client_from):
        second = client_from("10.0.0.2")
        try:
            replies = [await query(first), await query(first), await query(second)]
        finally:
            await second.aclose()
    assert codes(replies) == [None, -32002, None]


@pytest.mark.parametrize(
    "overrides",
    [
        {"rate_limits": "cstp.queryDecisions=120/fortnight"},
        {"rate_limits": "cstp.queryDecisions"},
        {"rate_limits": "cstp.queryDecisions=many"},
        {"rate_limit_default": "600 a minute"},
        {"rate_limit_storage": "mongodb://localhost"},
    ],
    ids=["bad-unit", "no-limit", "not-a-limit", "bad-default", "unknown-storage"],
)
def test_bad_limit_settings_fail_start_up_naming_the_setting(overrides: dict[str, str]) -> None:
    name = "CSTP_" + next(iter(overrides)).upper()
    with pytest.raises(SettingsError) as raised:
        load_settings(**overrides)
    assert name in str(raised.value)


def test_limits_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CSTP_RATE_LIMITS", "cstp.queryDecisions=120/minute, rpc.discover=1/second")
    monkeypatch.setenv("CSTP_RATE_LIMIT_DEFAULT", "600/minute")
    monkeypatch.setenv("CSTP_RATE_LIMIT_STORAGE", "redis://cache:6379/2")
    monkeypatch.setenv("CSTP_RATE_LIMIT_FAIL_CLOSED", "true")
    settings = load_settings()
    assert settings.rate_limits == {"cstp.queryDecisions": "120/minute", "rpc.discover": "1/second"}
    assert settings.rate_limit_default == "600/minute"
    assert settings.rate_limit_storage == "redis://cache:6379/2"
    assert settings.rate_limit_fail_closed is True


def test_limits_on_a_method_that_is_not_served_are_refused() -> None:
    with pytest.raises(ValueError, match="CSTP_RATE_LIMITS"):
        LimitPolicy.from_strings(None, {"cstp.queryDecision": "5/minute"}, ["cstp.queryDecisions"])


def test_several_workers_with_memory_storage_are_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CSTP_DATA_DIR", str(tmp_path))
    result = CliRunner().invoke(cli_app, ["serve", "--workers", "2"])
    assert result.exit_code == 2
    assert "CSTP_RATE_LIMIT_STORAGE" in result.output


# Redis: shared counting, and what happens when it goes away.


def redis_limits(uri: str, *, fail_closed: bool = False, clock: Any = time.monotonic) -> RateLimits:
    settings = load_settings(
        rate_limits="cstp.queryDecisions=3/minute",
        rate_limit_storage=uri,
        rate_limit_fail_closed=fail_closed,
    )
    return RateLimits.from_settings(settings, ["cstp.queryDecisions"], clock)


async def admitted(limits: RateLimits, agent: str = "alice") -> bool:
    try:
        await limits.admit("cstp.queryDecisions", CallContext(agent))
    except RateLimited:
        return False
    return True


async def test_two_processes_sharing_redis_count_one_limit() -> None:
    with running_redis() as uri:
        first, second = redis_limits(uri), redis_limits(uri)
        results = [await admitted(first if i % 2 else second) for i in range(6)]
        other = await admitted(first, "bob")
    assert results == [True, True, True, False, False, False]
    assert other


def redis_limited(tmp_path: Path, **overrides: Any) -> tuple[subprocess.Popen[bytes], Settings]:
    """A Redis server just started, and settings (TOKENS, queryDecisions 3/minute) keeping
    the limits in it."""
    port = free_port()
    process = start_redis(port)
    settings = limit_settings(
        tmp_path,
        auth_tokens=TOKENS,
        rate_limits="cstp.queryDecisions=3/minute",
        rate_limit_storage=f"redis://127.0.0.1:{port}",
        **overrides,
    )
    return process, settings


async def test_redis_going_away_falls_back_to_per_process_limits_with_a_warning(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    process, settings = redis_limited(tmp_path)
    try:
        async with served(settings, embedder) as (client, _):
            before = await query(client, "alice-token-1", 1)
            stop(process)
            with caplog.at_level(logging.WARNING, logger="a2a.limits.admission"):
                after = [await query(client, "alice-token-1", i) for i in range(2, 6)]
    finally:
        stop(process)
    assert codes([before]) == [None]
    # Per-process limits start afresh in memory: 3 more calls, then limited again.
    assert codes(after) == [None, None, None, -32002]
    assert any(r.levelno == logging.WARNING for r in caplog.records)


async def test_redis_going_away_with_fail_closed_refuses_calls_with_rate_limited(
    tmp_path: Path, embedder: Embedder
) -> None:
    process, settings = redis_limited(tmp_path, rate_limit_fail_closed=True)
    try:
        async with served(settings, embedder) as (client, _):
            before = await query(client, "alice-token-1", 1)
            stop(process)
            response = await client.post(
                "/cstp",
                json=rpc_call("cstp.queryDecisions", QUERY, 2),
                headers=as_agent("alice-token-1"),
            )
    finally:
        stop(process)
    assert codes([before]) == [None]
    assert response.json()["error"]["code"] == -32002
    assert response.json()["error"]["data"]["retryAfter"] >= 1
    assert int(response.headers["retry-after"]) >= 1


async def test_shared_limits_come_back_when_redis_answers_again() -> None:
    now = [0.0]
    port = free_port()
    process = start_redis(port)
    limits = redis_limits(f"redis://127.0.0.1:{port}", clock=lambda: now[0])
    try:
        assert await admitted(limits)
        stop(process)
        assert await admitted(limits)
        assert limits.storage_down
        process = start_redis(port)
        assert await admitted(limits) and limits.storage_down  # not probed again yet
        now[0] += 2
        assert await admitted(limits)
        assert not limits.storage_down
    finally:
        stop(process)


async def test_fail_closed_refuses_until_redis_is_probed_again() -> None:
    now = [0.0]
    port = free_port()
    process = start_redis(port)
    limits = redis_limits(f"redis://127.0.0.1:{port}", fail_closed=True, clock=lambda: now[0])
    try:
        assert await admitted(limits)
        stop(process)
        assert not await admitted(limits)
        process = start_redis(port)
        assert not await admitted(limits)
        now[0] += 2
        assert await admitted(limits)
    finally:
        stop(process)


async def test_redis_that_stops_answering_times_out_into_the_fallback() -> None:
    port = free_port()
    process = start_redis(port)
    limits = redis_limits(f"redis://127.0.0.1:{port}")
    try:
        assert await admitted(limits)
        freeze(process.pid)
        # A hang guard, not a measurement: without Redis' 1 s command timeout the call
        # would wait forever on the stopped server.
        async with asyncio.timeout(60):
            assert await admitted(limits)
        assert limits.storage_down
    finally:
        process.send_signal(signal.SIGCONT)
        stop(process)


async def test_the_memory_storage_counts_on_the_calling_thread() -> None:
    """No thread hop for in-memory counting (~0.1 ms of CPU per call); Redis keeps one."""
    threads: list[int] = []

    class Watched(MemoryStorage):
        def acquire_entry(self, *args: Any, **kwargs: Any) -> bool:
            threads.append(threading.get_ident())
            return super().acquire_entry(*args, **kwargs)

    policy = LimitPolicy.from_strings("2/minute", {}, ["cstp.queryDecisions"])
    limits = RateLimits(policy, Watched())
    for _ in range(2):
        await limits.admit("cstp.queryDecisions", CallContext("a"))
    with pytest.raises(RateLimited):
        await limits.admit("cstp.queryDecisions", CallContext("a"))
    assert threads == [threading.get_ident()] * 3
