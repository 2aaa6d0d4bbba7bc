"""Lanes: honest overload (-32005), deadlines that start with the work, one call's pools."""

from __future__ import annotations

import asyncio
import gc
import itertools
import threading
import time
from pathlib import Path

import httpx
import pytest

from a2a.concurrency import Admission, Lane, Serial, in_order
from a2a.embeddings import Embedder
from a2a.errors import Saturated
from a2a.settings import load_settings
from tests.conftest import rpc_call
from tests.http.live import live_server


def _blocked(release: threading.Event) -> str:
    release.wait(10)
    return "done"


async def test_a_full_queue_is_saturated_at_once() -> None:
    pool, release = Lane(1, Admission(queue=1, max_wait_seconds=10)), threading.Event()
    running = asyncio.create_task(pool.run(lambda: _blocked(release)))
    await asyncio.sleep(0.05)
    waiting = asyncio.create_task(pool.run(lambda: "queued"))
    await asyncio.sleep(0.05)
    with pytest.raises(Saturated) as raised:
        await pool.run(lambda: "refused")
    assert raised.value.retry_after == 10
    release.set()
    assert (await running, await waiting) == ("done", "queued")
    pool.close()


async def test_waiting_longer_than_the_bound_is_saturated() -> None:
    pool, release = Lane(1, Admission(queue=5, max_wait_seconds=0.1)), threading.Event()
    running = asyncio.create_task(pool.run(lambda: _blocked(release)))
    await asyncio.sleep(0.05)
    with pytest.raises(Saturated):
        await pool.run(lambda: "late")
    release.set()
    await running
    pool.close()


async def test_work_that_must_not_be_refused_waits_past_a_full_queue_and_the_bound() -> None:
    """The rest of a write Chroma has stored (a2a.decisions.writes) is never Saturated."""
    pool, release = Lane(1, Admission(queue=0, max_wait_seconds=0.05)), threading.Event()
    running = asyncio.create_task(pool.run(lambda: _blocked(release)))
    await asyncio.sleep(0.05)
    with pytest.raises(Saturated):  # the queue holds nothing: refused at once
        await pool.run(lambda: "refused")
    kept = asyncio.create_task(pool.run(lambda: "finished", refusable=False))
    await asyncio.sleep(0.2)  # four times the wait bound
    assert not kept.done() and pool.waiting == 1
    release.set()
    assert (await running, await kept) == ("done", "finished")
    assert pool.busy == 0
    pool.close()


async def test_the_deadline_starts_when_a_thread_starts_the_work() -> None:
    pool, release = Lane(1, Admission(queue=5, max_wait_seconds=10)), threading.Event()
    running = asyncio.create_task(pool.run(lambda: _blocked(release)))
    await asyncio.sleep(0.05)
    queued = asyncio.create_task(pool.run(lambda: "quick", deadline_seconds=0.2))
    await asyncio.sleep(0.5)  # waits far longer than its deadline for the thread
    release.set()
    assert await queued == "quick"
    await running
    pool.close()


async def test_work_past_its_deadline_keeps_its_thread_until_it_returns() -> None:
    pool, release = Lane(1, Admission(queue=0, max_wait_seconds=1)), threading.Event()
    with pytest.raises(TimeoutError):
        await pool.run(lambda: _blocked(release), deadline_seconds=0.05)
    with pytest.raises(Saturated):  # the abandoned call still holds the only thread
        await pool.run(lambda: "next")
    release.set()
    await asyncio.sleep(0.05)
    assert await pool.run(lambda: "next") == "next"
    pool.close()


async def test_an_abandoned_call_that_fails_later_is_read_and_told_at_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 44 item 5: a thread failing after its caller's deadline leaves no "Future
    exception was never retrieved" (ERROR, with a traceback); one WARNING line says it."""
    pool, release = Lane(1, Admission(queue=0, max_wait_seconds=1)), threading.Event()

    def fails_late() -> None:
        release.wait(10)
        raise ConnectionError("Chroma went away")

    with pytest.raises(TimeoutError):
        await pool.run(fails_late, deadline_seconds=0.05)
    release.set()
    await asyncio.sleep(0.1)
    gc.collect()
    await asyncio.sleep(0)
    told = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert not any("never retrieved" in message for _, message in told), told
    assert any(
        level == "WARNING" and "ConnectionError('Chroma went away')" in message
        for level, message in told
    ), told
    pool.close()


def test_batches_beyond_the_pool_get_32005_never_32003_and_health_answers(
    tmp_path: Path, embedder: Embedder
) -> None:
    """Edge 1, bounded: 4 clients x a batch of 50 queries against 1 thread and a queue of 4."""
    settings = load_settings(
        data_dir=tmp_path / "data",
        worker_threads=1,
        worker_queue=4,
        worker_queue_timeout_seconds=0.5,
        chroma_timeout_seconds=2,
    )
    batch = [rpc_call("cstp.queryDecisions", {"query": f"q {n}"}, n) for n in range(50)]
    codes: list[int | None] = []
    health: list[int] = []

    def client(url: str) -> None:
        replies = httpx.post(f"{url}/cstp", json=batch, timeout=60).json()
        codes.extend(reply.get("error", {}).get("code") for reply in replies)

    with live_server(settings, embedder) as url:
        threads = [threading.Thread(target=client, args=(url,)) for _ in range(4)]
        for thread in threads:
            thread.start()
        while any(thread.is_alive() for thread in threads):
            health.append(httpx.get(f"{url}/health", timeout=10, verify=False).status_code)
            time.sleep(0.01)
        for thread in threads:
            thread.join()
    assert len(codes) == 200
    assert codes.count(-32003) == 0
    assert codes.count(-32005) > 0
    assert set(codes) <= {None, -32005}
    assert health and set(health) == {200}


async def test_busy_counts_calls_running_or_waiting_and_returns_to_zero() -> None:
    pool = Lane(1, Admission(queue=1, max_wait_seconds=0.2))
    gate = threading.Event()
    holder = asyncio.create_task(pool.run(gate.wait))
    await asyncio.sleep(0.02)
    waiter = asyncio.create_task(pool.run(lambda: 1))
    await asyncio.sleep(0.02)
    assert pool.busy == 2  # one running, one waiting
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    assert pool.busy == 1
    gate.set()
    await holder
    with pytest.raises(ZeroDivisionError):
        await pool.run(lambda: 1 / 0)
    assert pool.busy == 0
    pool.close()
    with pytest.raises(RuntimeError):  # shut down: the call is refused, not counted for good
        await pool.run(lambda: 1)
    assert pool.busy == 0


def test_one_calls_pool_yields_in_order_and_reads_only_a_little_ahead() -> None:
    asked: list[int] = []

    def square(n: int) -> int:
        asked.append(n)
        time.sleep(0.01 if n % 2 else 0)  # out of order in the threads, in order out
        return n * n

    results = in_order(square, itertools.count(), 2, name="cstp-test")
    assert [next(results) for _ in range(5)] == [0, 1, 4, 9, 16]
    results.close()
    assert max(asked) <= 4 + 3  # at most threads + 1 items past the last one yielded


def test_one_calls_pool_of_one_thread_is_the_callers_thread() -> None:
    names = list(in_order(lambda _: threading.current_thread().name, range(3), 1, name="x"))
    assert names == [threading.current_thread().name] * 3


def test_a_serial_thread_runs_calls_in_order_and_abandon_cancels_those_not_started() -> None:
    serial, release = Serial("cstp-test"), threading.Event()
    order: list[str] = []

    def first_call() -> str:
        order.append("first")
        release.wait(10)
        return "first"

    first = serial.submit(first_call)
    second = serial.submit(lambda: order.append("second"))
    third = serial.submit(lambda: 1 / 0)
    while not order:  # the first call is running
        time.sleep(0.01)
    serial.abandon()  # returns at once: the call in flight is not waited for
    assert not first.done()
    release.set()
    assert first.result(timeout=10) == "first"
    assert second.cancelled() and third.cancelled() and order == ["first"]


def test_a_serial_threads_call_raises_what_it_raised_and_the_next_still_runs() -> None:
    serial = Serial("cstp-test")
    failed = serial.submit(lambda: 1 / 0)
    later = serial.submit(lambda: "next")
    serial.close()  # waits for both
    assert isinstance(failed.exception(), ZeroDivisionError) and later.result() == "next"
