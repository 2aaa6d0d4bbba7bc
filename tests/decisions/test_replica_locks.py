"""Replica locks in a real Redis: one holder of a key across clients, waiters go in turn,
a holder past the wait bound is -32005, a dead holder's lease lapses, Redis away is a
warning and the call goes on."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest
import redis.asyncio

from a2a.decisions.locks import KeyedLocks, ReplicaLocks, replica_redis
from a2a.workers import Saturated
from tests.redis_server import running_redis
from tests.servers import free_port


@pytest.fixture
async def shared_redis() -> AsyncIterator[list[redis.asyncio.Redis]]:
    """Two clients of one fresh Redis: two replicas' connections."""
    with running_redis() as uri:
        clients = [replica_redis(uri), replica_redis(uri)]
        assert clients[0] is not None and clients[1] is not None
        yield [c for c in clients if c is not None]
        for client in clients:
            assert client is not None
            await client.aclose()


def locks(
    client: redis.asyncio.Redis, collection: str = "decisions", wait: float = 10
) -> ReplicaLocks:
    return ReplicaLocks(client, collection, lease_seconds=30, max_wait_seconds=wait)


async def test_holders_of_one_key_on_two_clients_take_turns(
    shared_redis: list[redis.asyncio.Redis],
) -> None:
    first, second = (KeyedLocks(replicas=locks(client)) for client in shared_redis)
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
    other_key = locks(shared_redis[1])
    async with other_key.hold("d2"):  # another id is free meanwhile
        order.append("d2")
    release.set()
    await asyncio.gather(holder, waiter)
    assert order == ["first in", "d2", "first out", "second in", "second out"]


async def test_a_key_held_past_the_wait_bound_is_saturated_and_other_tenants_never_wait(
    shared_redis: list[redis.asyncio.Redis],
) -> None:
    holder, waiter = locks(shared_redis[0]), locks(shared_redis[1], wait=0.05)
    async with holder.hold("d1"):
        with pytest.raises(Saturated) as refused:
            async with waiter.hold("d1"):
                pytest.fail("held twice")
        assert refused.value.retry_after == 1
        async with locks(shared_redis[1], collection="tenant-b", wait=0.05).hold("d1"):
            pass
    async with waiter.hold("d1"):  # released: free again
        pass


async def test_the_lease_of_a_holder_that_died_lapses(
    shared_redis: list[redis.asyncio.Redis],
) -> None:
    dead = ReplicaLocks(shared_redis[0], "decisions", lease_seconds=0.2, max_wait_seconds=10)
    held = dead.hold("d1")
    await held.__aenter__()  # never left: its replica died holding it
    async with locks(shared_redis[1]).hold("d1"):
        ttl = await shared_redis[1].pttl("cstp:lock:decisions:d1")
        assert ttl > 1000  # the new holder's own lease (30 s), not the dead one's


async def test_redis_away_is_a_warning_and_the_call_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = replica_redis(f"redis://127.0.0.1:{free_port()}")
    assert client is not None
    keyed = KeyedLocks(replicas=locks(client))
    with caplog.at_level(logging.WARNING, logger="a2a.decisions.locks"):
        async with keyed.hold("d1"):
            entered = True
    await client.aclose()
    assert entered
    assert "'d1' held in this process only" in caplog.text


def test_a_storage_that_is_not_redis_shares_no_locks() -> None:
    assert replica_redis("memory://") is None
