"""Where blocking work runs: the lanes of threads work is handed to, and every thread of a2a.

The one module of a2a that starts threads (as starlette's concurrency.py is for starlette).
The threads of a process, by name:
- `cstp-worker`: the request lane (`Lanes.request`), a call's blocking work (Chroma reads
  and writes, searches not answered on the event loop, embeddings of a non-batched model).
  CSTP_WORKER_THREADS threads; overload refused by `Admission` (Saturated, -32005).
- `cstp-background`: the background lane (`Lanes.background`), work never refused for
  load: index loads, the freshness check a call waits for, snapshot writes, graph and
  union-graph builds, the Redis calls of shared rate limits. Apart from the request lane,
  and large, for the reasons docs/scaling.md gives ("Where blocking work runs"); what
  starts the work bounds it.
- `cstp-parse`: the parser lane, large JSON bodies parsed one at a time (a2a.rpc.dispatcher).
- `cstp-page`, `cstp-minilm`: the pools of one call (`in_order`): a load's Chroma page
  readers, one document batch's MiniLM windows.
- `cstp-index-embed`: `cstp index`'s model thread (a `Serial`, a2a.embeddings.background).
- Threads of their own (`start_thread`), for loops their modules own: the query batcher's
  model threads `cstp-embed-N` (a2a.embeddings.batching: they take shares of the queries
  waiting, by design), and in the model's child process its parent watchdog `cstp-parent`
  (a2a.embeddings.child).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from queue import Empty, SimpleQueue
from typing import Any, TypeVar

from a2a.errors import Saturated

T = TypeVar("T")
A = TypeVar("A")
log = logging.getLogger(__name__)

#: Threads of the background lane: anyio's default limiter, which ran this work before.
BACKGROUND_THREADS = 40


@dataclass(frozen=True, slots=True)
class Admission:
    """The one admission rule for work that waits for a thread: the request lane's calls and
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


class Lane:
    """`threads` threads named `name`, and the calls waiting for one.

    With `admission`, a call that finds the queue full, or waits longer than its bound for
    a thread, raises Saturated (CSTP -32005): the honest answer to overload, never reported
    as Chroma failing. Without, a call waits for a thread however long it takes. A call
    whose caller stops waiting (a deadline, a cancel) keeps its thread until the blocking
    function returns, so the bound on threads holds even for work that cannot be
    interrupted.
    """

    def __init__(
        self, threads: int, admission: Admission | None = None, *, name: str = "cstp-lane"
    ) -> None:
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name)
        self._free = asyncio.Semaphore(threads)
        self.admission = admission
        self._waiting = 0
        self._running = 0
        self.threads = threads

    @property
    def waiting(self) -> int:
        """Calls waiting for a thread right now."""
        return self._waiting

    @property
    def busy(self) -> int:
        """Calls holding a thread or waiting for one right now (0: the lane is idle)."""
        return self._running + self._waiting

    async def run(
        self,
        fn: Callable[[], T],
        *,
        deadline_seconds: float | None = None,
        refusable: bool = True,
    ) -> T:
        """`fn()` in one of the lane's threads; its result, or what it raised.

        `deadline_seconds` counts from the moment a thread starts `fn` (time spent waiting
        for a thread is not the callee's time); past it, TimeoutError is raised and the
        thread is left to finish on its own (an error it ends with is logged at WARNING).
        Raises Saturated (a lane with admission) when no thread is free within the wait
        bound, or the queue of waiting calls is full; never with `refusable` false, which
        waits for a thread however long it takes: for the rest of a call whose effect is
        already committed (a write Chroma stored), where Saturated (-32005, "retry") would
        be untrue and a retry would write twice. Raises RuntimeError once the lane is
        closed.
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

    async def _acquire(self, refusable: bool) -> None:
        if not self._free.locked():
            await self._free.acquire()
            return
        admission = self.admission if refusable else None
        if admission is None:
            self._waiting += 1
            try:
                await self._free.acquire()
            finally:
                self._waiting -= 1
            return
        admission.admit(self._waiting)
        self._waiting += 1
        try:
            # asyncio.timeout, not wait_for: wait_for wraps the acquire in a Task of its own.
            async with asyncio.timeout(admission.max_wait_seconds):
                await self._free.acquire()
        except TimeoutError:
            raise admission.refusal() from None
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


class Lanes:
    """The lanes of one service, built once by the composition root and closed with it.

    `request`: `request_threads` threads, admission by `queue` and `max_wait_seconds`
    (CSTP_WORKER_THREADS, CSTP_WORKER_QUEUE, CSTP_WORKER_QUEUE_TIMEOUT_SECONDS).
    `background`: `background_threads`, never refusing. `parser`: one thread. See the
    module's docstring for what runs where, and why apart.
    """

    def __init__(
        self,
        request_threads: int,
        queue: int,
        max_wait_seconds: float,
        background_threads: int = BACKGROUND_THREADS,
    ) -> None:
        self.request = Lane(request_threads, Admission(queue, max_wait_seconds), name="cstp-worker")
        self.background = Lane(background_threads, name="cstp-background")
        self.parser = Lane(1, name="cstp-parse")

    def close(self) -> None:
        """Close every lane (Lane.close)."""
        for lane in (self.request, self.background, self.parser):
            lane.close()


def in_order(
    call: Callable[[A], T], items: Iterable[A], threads: int, *, name: str
) -> Generator[T, None, None]:
    """`call(item)` for each of `items` (read lazily: it may be endless), yielded in order.

    With `threads` above 1, computed by a pool of this call's own, `threads + 1` items
    ahead of the one yielded (an extra item or two may be computed past where the caller
    stops); else in the caller's thread as it iterates. Closing the generator early, or an
    error of one call, cancels the calls not started and waits for those running.
    """
    if threads <= 1:
        yield from map(call, items)
        return
    ahead = iter(items)
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name) as pool:
        pending = deque(pool.submit(call, item) for item in itertools.islice(ahead, threads + 1))
        try:
            while pending:
                yield pending.popleft().result()
                for item in ahead:
                    pending.append(pool.submit(call, item))
                    break
        finally:
            for future in pending:
                future.cancel()


class Serial:
    """One daemon thread named `name` running the calls submitted to it, one at a time, in
    order, while the submitter goes on (blocking code's own background worker: `cstp
    index`'s model, a2a.embeddings.background). A daemon: a call in flight never holds up
    the interpreter's exit.
    """

    def __init__(self, name: str) -> None:
        self._calls: SimpleQueue[tuple[Callable[[], Any], Future[Any]] | None] = SimpleQueue()
        self._abandoned = False
        self._thread = start_thread(self._run, name, daemon=True)

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """`fn()` once the calls submitted before are done; its future raises what it
        raised."""
        done: Future[T] = Future()
        self._calls.put((fn, done))
        return done

    def abandon(self) -> None:
        """Cancel the calls not started; the one in flight finishes, unwaited for."""
        self._abandoned = True
        while True:
            try:
                call = self._calls.get_nowait()
            except Empty:
                break
            if call is not None:
                call[1].cancel()
        self._calls.put(None)

    def close(self) -> None:
        """Wait for the calls submitted (unless abandoned), then stop the thread."""
        if not self._abandoned:
            self._calls.put(None)
            self._thread.join()

    def _run(self) -> None:
        while (call := self._calls.get()) is not None:
            fn, done = call
            if not done.set_running_or_notify_cancel():
                continue
            try:
                done.set_result(fn())
            except BaseException as error:  # handed to the submitter, who raises it
                done.set_exception(error)


def start_thread(target: Callable[[], object], name: str, *, daemon: bool) -> threading.Thread:
    """A thread named `name` running `target()`, started. A daemon never holds up the
    interpreter's exit, and is killed wherever it is then."""
    thread = threading.Thread(target=target, name=name, daemon=daemon)
    thread.start()
    return thread
