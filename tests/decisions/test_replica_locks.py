"""Replica locks in a real Redis: one holder of a key across clients, waiters go in turn,
a holder past the wait bound is -32005 for every waiter of this process at once, a dead
holder's lease lapses, a Redis away or hung is skipped after one try."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import AsyncIterator

import pytest

from a2a.decisions.locks import KeyedLocks
from a2a.decisions.replica_locks import ReplicaLocks, SharedRedis, replica_redis
from a2a.errors import LockedElsewhere
from a2a.limits.outage import Outage
from tests.redis_server import running_redis, start_redis
from tests.servers import free_port, stop


@pytest.fixture
async def two_replicas() -> AsyncIterator[list[SharedRedis]]:
    """Two clients of one fresh Redis: two replicas' connections."""
    with running_redis() as uri:
        shared = [replica_redis(uri), replica_redis(uri)]
        clients = [s for s in shared if s is not None]
        assert len(clients) == 2
        yield clients
        for client in clients:
            await client.aclose()


def locks(shared: SharedRedis, collection: str = "decisions", wait: float = 10) -> ReplicaLocks:
    return ReplicaLocks(shared, collection, lease_seconds=30, max_wait_seconds=wait)


async def test_holders_of_one_key_on_two_clients_take_turns(
    two_replicas: list[SharedRedis],
) -> None:
    first, second = (KeyedLocks(replicas=locks(shared)) for shared in two_replicas)
    order: list[str] = []
    release = asyncio.Event()

    async def hold(keyed: KeyedLocks, name: str, gate: asyncio.Event | None) -> None:
        async with keyed.hold("d1"):
            order.append(f"{name} in")
            if gate is not None:
                await gate.wait()
            order.append(f"{name} out")

    holder = asyncio.create_task(hold(first, "first", release))
    while order != ["first in"]:
        await asyncio.sleep(0)
    waiter = asyncio.create_task(hold(second, "second", None))
    async with locks(two_replicas[1]).hold("d2"):  # another id is free meanwhile
        order.append("d2")
    release.set()
    await asyncio.gather(holder, waiter)
    assert order == ["first in", "d2", "first out", "second in", "second out"]


async def test_a_key_held_past_the_wait_is_refused_to_every_waiter_here_at_once(
    two_replicas: list[SharedRedis],
) -> None:
    """Reported: with a dead replica's lock, 6 updates of its id on one replica were
    answered one wait apart (10, 20, then 30 s); the waiters now share the first refusal."""
    elsewhere = locks(two_replicas[0])
    here = KeyedLocks(shared_failures=(LockedElsewhere,), replicas=locks(two_replicas[1], wait=0.2))
    entered: list[str] = []

    async def update(name: str) -> str:
        async with here.hold("d1"):
            entered.append(name)
        return name

    held = elsewhere.hold("d1")
    await held.__aenter__()
    first = asyncio.create_task(update("first"))
    await asyncio.sleep(0)  # `first` holds this process's lock and waits for Redis
    second = asyncio.create_task(update("second"))
    with pytest.raises(LockedElsewhere) as refused:
        await first
    assert refused.value.retry_after == 1
    await held.__aexit__(None, None, None)  # free now: `second` would get it if it tried
    with pytest.raises(LockedElsewhere):
        await second
    assert entered == []
    assert await update("later") == "later"  # a later call starts afresh


async def test_other_tenants_never_wait(two_replicas: list[SharedRedis]) -> None:
    acme, globex = locks(two_replicas[0]), locks(two_replicas[1], "tenant-b", wait=0.05)
    entered = []
    async with acme.hold("d1"), globex.hold("d1"):
        entered.append("both")
    assert entered == ["both"]


async def test_the_lease_of_a_holder_that_died_lapses(two_replicas: list[SharedRedis]) -> None:
    dead = ReplicaLocks(two_replicas[0], "decisions", lease_seconds=0.2, max_wait_seconds=10)
    await dead.hold("d1").__aenter__()  # never left: its replica died holding it
    async with locks(two_replicas[1]).hold("d1"):
        ttl = await two_replicas[1].client.pttl("cstp:lock:decisions:d1")
        assert ttl > 1000  # the new holder's own lease (30 s), not the dead one's


async def test_a_lock_held_past_its_lease_is_a_warning_not_an_outage(
    two_replicas: list[SharedRedis], caplog: pytest.LogCaptureFixture
) -> None:
    shared = two_replicas[0]
    with caplog.at_level(logging.WARNING):
        async with locks(shared).hold("d1"):
            await shared.client.delete("cstp:lock:decisions:d1")  # its lease ran out
    assert "'d1' held past its lease" in caplog.text
    assert not shared.outage.down


async def test_redis_away_is_one_warning_and_calls_go_on(caplog: pytest.LogCaptureFixture) -> None:
    shared = replica_redis(f"redis://127.0.0.1:{free_port()}")
    assert shared is not None
    keyed = KeyedLocks(replicas=locks(shared))
    entered = 0
    with caplog.at_level(logging.WARNING, logger="a2a.limits.outage"):
        for _ in range(3):
            async with keyed.hold_all(["d1", "d2"]):
                entered += 1
    await shared.aclose()
    assert entered == 3 and shared.outage.down
    assert caplog.text.count("replica locks' Redis unreachable") == 1


async def test_a_hung_redis_is_tried_once_then_skipped(caplog: pytest.LogCaptureFixture) -> None:
    """Reported: a Redis stopped with SIGSTOP made each lock of a call wait its 1 s
    timeout in turn: 41 s for a decision with 40 links, answered -32003."""
    port = free_port()
    process = start_redis(port)
    shared = replica_redis(f"redis://127.0.0.1:{port}")
    assert shared is not None
    keyed = KeyedLocks(replicas=locks(shared))
    try:
        async with keyed.hold("warm"):  # connected while Redis answers
            pass
        os.kill(process.pid, signal.SIGSTOP)
        with caplog.at_level(logging.WARNING, logger="a2a.limits.outage"):
            async with keyed.hold_all([f"d{n}" for n in range(40)]):
                pass
        assert shared.outage.down
        assert caplog.text.count("unreachable") == 1
    finally:
        os.kill(process.pid, signal.SIGCONT)
        await shared.aclose()
        stop(process)


async def test_a_lock_set_while_redis_hung_is_released_when_it_answers() -> None:
    """Reported: an acquire that timed out on a hung Redis was applied when Redis resumed,
    leaving a lock nobody held: its decision refused -32005 for the whole lease."""
    now = [0.0]
    port = free_port()
    process = start_redis(port)
    client = replica_redis(f"redis://127.0.0.1:{port}")
    assert client is not None
    shared = SharedRedis(client.client, Outage("test Redis", clock=lambda: now[0]))
    keyed = KeyedLocks(replicas=locks(shared))
    try:
        async with keyed.hold("warm"):  # connected while Redis answers
            pass
        os.kill(process.pid, signal.SIGSTOP)
        async with keyed.hold("hub"):  # the SET waits in Redis' socket; the client gives up
            pass
        os.kill(process.pid, signal.SIGCONT)
        for _ in range(500):  # Redis applies the SET it had not read
            if await shared.client.exists("cstp:lock:decisions:hub"):
                break
            await asyncio.sleep(0.01)
        assert await shared.client.exists("cstp:lock:decisions:hub")
        now[0] += 2  # the next try of Redis is due
        async with keyed.hold("other"):
            pass
        assert not shared.outage.down
        assert not await shared.client.exists("cstp:lock:decisions:hub")
        async with locks(shared, wait=0.05).hold("hub"):  # free at once, not after 30 s
            pass
    finally:
        os.kill(process.pid, signal.SIGCONT)
        await shared.aclose()
        stop(process)


def test_no_shared_redis_without_a_redis_storage() -> None:
    assert replica_redis("memory://") is None
