"""Per-key locks: one holder per key; a store failure reaches those waiting for the key."""

from __future__ import annotations

import asyncio

from a2a.decisions.locks import KeyedLocks


async def _hold(locks: KeyedLocks, key: str, seconds: float, fail: bool, log: list[str]) -> str:
    async with locks.hold(key):
        log.append(f"in {key}")
        await asyncio.sleep(seconds)
        if fail:
            raise ConnectionError("chroma timed out")
    return key


async def test_waiters_for_a_key_whose_holder_failed_with_a_shared_failure_fail_with_it() -> None:
    """Bug found by breakit: with `chroma run` hung, N reviews of one id answered -32003
    after 1, 2, .. N Chroma deadlines, each waiting for the one before it."""
    locks = KeyedLocks(shared_failures=(ConnectionError,))
    entered: list[str] = []
    holder = asyncio.create_task(_hold(locks, "a", 0.05, True, entered))
    await asyncio.sleep(0.01)
    waiters = [asyncio.create_task(_hold(locks, "a", 0.05, True, entered)) for _ in range(3)]
    other = asyncio.create_task(_hold(locks, "b", 0, False, entered))
    results = await asyncio.gather(holder, *waiters, return_exceptions=True)
    assert all(isinstance(r, ConnectionError) for r in results)
    assert entered.count("in a") == 1
    assert await other == "b"
    assert len(locks) == 0
    # Later callers start afresh.
    assert await _hold(locks, "a", 0, False, entered) == "a"


async def test_other_failures_do_not_reach_the_waiters() -> None:
    locks = KeyedLocks(shared_failures=(ConnectionError,))
    entered: list[str] = []

    async def bad() -> None:
        async with locks.hold("a"):
            await asyncio.sleep(0.02)
            raise ValueError("this call's own mistake")

    first = asyncio.create_task(bad())
    await asyncio.sleep(0.005)
    second = asyncio.create_task(_hold(locks, "a", 0, False, entered))
    results = await asyncio.gather(first, second, return_exceptions=True)
    assert isinstance(results[0], ValueError)
    assert results[1] == "a"
