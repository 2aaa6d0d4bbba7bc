"""The bounded pool of worker threads every blocking piece (embedding, store, index) runs in."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from a2a.errors import Saturated

T = TypeVar("T")
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Admission:
    """The one admission rule for work that waits for a thread: the worker pool's calls and
    the query embedder's queries (a2a.embeddings.batching) alike.

    A call that finds a thread free runs. Otherwise it waits in a queue of at most `queue`
    calls: it is refused at once when `queue` calls already wait beyond the free threads,
    and refused when it is still waiting `max_wait_seconds` after it came. Refused means
    Saturated (CSTP -32005, CONTRACT.md), `retry_after` the wait bound rounded up.
    """

    queue: int
    max_wait_seconds: float

    @property
    def retry_after(self) -> int:
        """Whole seconds a refused caller is told to wait, at least 1."""
        return max(1, math.ceil(self.max_wait_seconds))

    def admit(self, waiting: int) -> None:
        """Raises Saturated when `waiting` calls (those no free thread is there for) fill
        the queue."""
        if waiting >= self.queue:
            raise self.refusal()

    def refusal(self) -> Saturated:
        """The error of a refused call."""
        return Saturated(self.retry_after)


class WorkerPool:
    """`threads` worker threads and a queue of at most `queue` calls waiting for one.

    A call that finds the queue full, or waits longer than `max_wait_seconds` for a thread,
    raises Saturated (the Admission rule; CSTP -32005): the honest answer to overload,
    never reported as Chroma failing. A call whose caller stops waiting (a
    deadline) keeps its thread until the blocking function returns, so the bound on threads
    holds even for work that cannot be interrupted.
    """

    def __init__(self, threads: int, queue: int, max_wait_seconds: float) -> None:
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="cstp-worker")
        self._free = asyncio.Semaphore(threads)
        self.admission = Admission(queue, max_wait_seconds)
        self._waiting = 0
        self._running = 0
        self.threads = threads

    @property
    def waiting(self) -> int:
        """Calls waiting for a thread right now."""
        return self._waiting

    @property
    def busy(self) -> int:
        """Calls holding a thread or waiting for one right now (0: the pool is idle)."""
        return self._running + self._waiting

    @property
    def retry_after(self) -> int:
        """Whole seconds a saturated caller is told to wait, at least 1."""
        return self.admission.retry_after

    async def run(
        self,
        fn: Callable[[], T],
        *,
        deadline_seconds: float | None = None,
        refusable: bool = True,
    ) -> T:
        """`fn()` in a worker thread; its result, or what it raised.

        `deadline_seconds` counts from the moment a thread starts `fn` (time spent waiting
        for a thread is not the callee's time); past it, TimeoutError is raised and the
        thread is left to finish on its own. Raises Saturated when no thread is free within
        the wait bound, or the queue of waiting calls is full; never with `refusable`
        false, which waits for a thread however long it takes: for the rest of a call
        whose effect is already committed (a write Chroma stored), where Saturated
        (-32005, "retry") would be untrue and a retry would write twice.
        """
        await self._acquire(refusable)
        # submit + wrap_future is what run_in_executor does, less its checks of `fn`.
        try:
            submitted = self._executor.submit(fn)
        except BaseException:  # shut down: give the slot back, or `busy` stays up for good
            self._free.release()
            raise
        self._running += 1
        future = asyncio.wrap_future(submitted)
        # The slot is given back when the thread is done, not when the caller gives up.
        future.add_done_callback(self._release)
        try:
            if deadline_seconds is None:
                return await asyncio.shield(future)
            # asyncio.timeout, not wait_for: no extra waiter future and callbacks per call.
            async with asyncio.timeout(deadline_seconds):
                return await asyncio.shield(future)
        except (asyncio.CancelledError, TimeoutError):
            if not future.done():  # abandoned: nobody else reads what the thread ends with
                future.add_done_callback(_abandoned)
            raise

    def _release(self, _: object) -> None:
        self._running -= 1
        self._free.release()

    async def _acquire(self, refusable: bool = True) -> None:
        if not self._free.locked():
            await self._free.acquire()
            return
        if not refusable:
            self._waiting += 1
            try:
                await self._free.acquire()
            finally:
                self._waiting -= 1
            return
        self.admission.admit(self._waiting)
        self._waiting += 1
        try:
            # asyncio.timeout, not wait_for: wait_for wraps the acquire in a Task of its own.
            async with asyncio.timeout(self.admission.max_wait_seconds):
                await self._free.acquire()
        except TimeoutError:
            raise self.admission.refusal() from None
        finally:
            self._waiting -= 1

    def close(self) -> None:
        """Stop taking work; threads still running finish in the background."""
        self._executor.shutdown(wait=False, cancel_futures=True)


def _abandoned(future: asyncio.Future[Any]) -> None:
    """Read what a thread whose caller stopped waiting ended with, so that asyncio does not
    log "Future exception was never retrieved" at ERROR (issue 44): the caller was answered
    at its deadline. An error is still told, one line at WARNING."""
    if not future.cancelled() and (exc := future.exception()) is not None:
        log.warning("a call ended with %r after its caller stopped waiting", exc)
