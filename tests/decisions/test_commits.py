"""Group commit: concurrent items share a batch; results and errors reach their own caller."""

from __future__ import annotations

import asyncio
import gc

import pytest

from a2a.decisions.commits import GroupCommit


async def test_items_submitted_while_a_batch_is_written_share_the_next_batch() -> None:
    batches: list[list[int]] = []

    async def write(batch: list[int]) -> list[int | Exception]:
        batches.append(batch)
        await asyncio.sleep(0.01)
        return [item * 10 for item in batch]

    commits: GroupCommit[int, int] = GroupCommit(write, linger_seconds=0)
    results = await asyncio.gather(*(commits.submit(n) for n in range(6)))
    assert results == [0, 10, 20, 30, 40, 50]
    assert batches == [[0, 1, 2, 3, 4, 5]]


async def test_a_batch_is_never_bigger_than_max_batch() -> None:
    batches: list[list[int]] = []

    async def write(batch: list[int]) -> list[int | Exception]:
        batches.append(batch)
        return list(batch)

    commits: GroupCommit[int, int] = GroupCommit(write, max_batch=4)
    assert await asyncio.gather(*(commits.submit(n) for n in range(10))) == list(range(10))
    assert [len(b) for b in batches] == [4, 4, 2]


async def test_an_error_for_one_item_reaches_only_its_caller() -> None:
    async def write(batch: list[int]) -> list[int | Exception]:
        return [ValueError(n) if n == 2 else n for n in batch]

    commits: GroupCommit[int, int] = GroupCommit(write)
    results = await asyncio.gather(*(commits.submit(n) for n in range(4)), return_exceptions=True)
    assert [type(r) for r in results] == [int, int, ValueError, int]


async def test_a_failed_write_fails_every_item_of_its_batch_and_the_next_batch_runs() -> None:
    calls = 0

    async def write(batch: list[int]) -> list[int | Exception]:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ConnectionError("chroma down")
        return list(batch)

    commits: GroupCommit[int, int] = GroupCommit(write)
    failed = await asyncio.gather(*(commits.submit(n) for n in range(3)), return_exceptions=True)
    assert all(isinstance(r, ConnectionError) for r in failed)
    assert await commits.submit(7) == 7


async def test_a_caller_that_stops_waiting_does_not_cancel_the_batch() -> None:
    written: list[int] = []
    writing, release = asyncio.Event(), asyncio.Event()

    async def write(batch: list[int]) -> list[int | Exception]:
        writing.set()
        await release.wait()
        written.extend(batch)
        return list(batch)

    commits: GroupCommit[int, int] = GroupCommit(write)
    impatient = asyncio.create_task(commits.submit(1))
    patient = asyncio.create_task(commits.submit(2))
    await writing.wait()  # the batch of both is in flight
    impatient.cancel()
    release.set()
    assert await patient == 2
    with pytest.raises(asyncio.CancelledError):
        await impatient
    assert written == [1, 2]


async def test_items_queued_while_a_batch_fails_with_a_shared_failure_fail_with_it() -> None:
    """Bug found by breakit: with `chroma run` hung, a write queued behind the batch in
    flight waited for it (one Chroma deadline), then for its own (a second one)."""
    batches: list[list[int]] = []
    writing, fail = asyncio.Event(), asyncio.Event()

    async def write(batch: list[int]) -> list[int | Exception]:
        batches.append(batch)
        writing.set()
        await fail.wait()
        raise ConnectionError("chroma timed out")

    commits: GroupCommit[int, int] = GroupCommit(write, shared_failures=(ConnectionError,))
    first = asyncio.create_task(commits.submit(1))
    await writing.wait()  # [1] in flight
    queued = asyncio.create_task(commits.submit(2))
    await asyncio.sleep(0)  # the second submit runs to its wait: 2 is queued
    fail.set()
    results = await asyncio.gather(first, queued, return_exceptions=True)
    assert all(isinstance(r, ConnectionError) for r in results)
    assert batches == [[1]]


async def test_an_error_after_its_caller_left_is_read_and_told_by_its_kind(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 44 item 5: the outcome of an item whose caller stopped waiting is read (no
    "Future exception was never retrieved"); a shared failure (the store: its caller had
    -32003) at debug, anything else still told at WARNING."""

    class Down(Exception):
        pass

    async def write(batch: list[int]) -> list[int | Exception]:
        await asyncio.sleep(0.05)
        if batch == [1]:
            raise Down("store down")
        raise ValueError("a bug")

    commits: GroupCommit[int, int] = GroupCommit(write, shared_failures=(Down,))
    caplog.set_level("DEBUG")
    for item in (1, 2):
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.01):
                await commits.submit(item)
        await asyncio.sleep(0.1)
    gc.collect()
    await asyncio.sleep(0)
    told = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert not any("never retrieved" in message for _, message in told), told
    assert (
        "DEBUG",
        "group commit: a batch failed after its caller left: Down('store down')",
    ) in told
    assert (
        "WARNING",
        "group commit: a batch failed after its caller left: ValueError('a bug')",
    ) in told
