"""Per-key locks: one holder per key; a store failure reaches those waiting for the key."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from a2a.decisions.locks import KeyedLocks


async def _hold(
    locks: KeyedLocks, key: str, gate: asyncio.Event | None, fail: bool, log: list[str]
) -> str:
    """Hold `key` until `gate` is set (None: not at all), then fail or return `key`."""
    async with locks.hold(key):
        log.append(f"in {key}")
        if gate is not None:
            await gate.wait()
        if fail:
            raise ConnectionError("chroma timed out")
    return key


async def _until(done: Callable[[], bool]) -> None:
    """Let the other tasks run until `done()` is true."""
    while not done():
        await asyncio.sleep(0)


async def test_waiters_for_a_key_whose_holder_failed_with_a_shared_failure_fail_with_it() -> None:
    """Bug found by breakit: with `chroma run` hung, N reviews of one id answered -32003
    after 1, 2, .. N Chroma deadlines, each waiting for the one before it."""
    locks = KeyedLocks(shared_failures=(ConnectionError,))
    entered: list[str] = []
    gate = asyncio.Event()
    holder = asyncio.create_task(_hold(locks, "a", gate, True, entered))
    await _until(lambda: entered == ["in a"])
    waiters = [asyncio.create_task(_hold(locks, "a", gate, True, entered)) for _ in range(3)]
    other = asyncio.create_task(_hold(locks, "b", None, False, entered))
    await _until(lambda: "in b" in entered)  # the waiters have all run to the lock
    gate.set()
    results = await asyncio.gather(holder, *waiters, return_exceptions=True)
    assert all(isinstance(r, ConnectionError) for r in results)
    assert entered.count("in a") == 1
    assert await other == "b"
    assert len(locks) == 0
    # Later callers start afresh.
    assert await _hold(locks, "a", None, False, entered) == "a"


async def test_other_failures_do_not_reach_the_waiters() -> None:
    locks = KeyedLocks(shared_failures=(ConnectionError,))
    entered: list[str] = []

    gate = asyncio.Event()

    async def bad() -> None:
        async with locks.hold("a"):
            entered.append("bad in a")
            await gate.wait()
            raise ValueError("this call's own mistake")

    first = asyncio.create_task(bad())
    await _until(lambda: entered == ["bad in a"])
    second = asyncio.create_task(_hold(locks, "a", None, False, entered))
    await asyncio.sleep(0)  # the second runs to the lock and waits
    gate.set()
    results = await asyncio.gather(first, second, return_exceptions=True)
    assert isinstance(results[0], ValueError)
    assert results[1] == "a"
