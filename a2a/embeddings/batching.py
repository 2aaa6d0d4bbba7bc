"""Dynamic batching of query embeddings: concurrent queries share one model call.

A network model (MiniLM int8) spends ~5.7 ms of CPU on a lone query here and ~4.1 ms a
query in calls of 4-16 (bench/http_load.py measures both). Under load, queries wait for a
core anyway; here they wait in a queue that the model's threads, one per core, drain in
batches, so that the model also never has more calls in flight than cores. Measured over
HTTP at 16 and 64 clients (bench/http_load.py, 100k decisions): 6.8-7.7 ms of server CPU a
request with 8 worker threads each calling the model, 4.4-5.3 ms batched.

This is the dynamic batcher of inference servers (NVIDIA Triton's `dynamic_batching`)
without its delay: a free thread takes what is waiting at once, never waits for more.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from a2a.concurrency import Admission, start_thread
from a2a.embeddings.base import Embedder, available_cores, is_batchable, is_static

#: The most queries one model call takes. MiniLM int8's CPU per query is flat from 4 to
#: 32 (4.1-4.0 ms against 5.7 alone); 16 bounds what one slow call holds back.
MAX_BATCH = 16
#: How often an idle model thread checks that the main thread still runs (interpreter exit).
IDLE_CHECK_SECONDS = 0.5

#: texts -> (positions in texts, their float32 vectors) per group, as each is computed.
EmbedGroups = Callable[
    [Sequence[str]], Iterable[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]
]


def query_batcher(
    embedder: Embedder,
    queue: int,
    max_wait_seconds: float,
    on_batch: Callable[[int], None] | None = None,
) -> DynamicBatcher | None:
    """A DynamicBatcher of `embedder`'s queries with one thread per available core, or None
    when the model does not declare batched vectors identical to lone ones (is_batchable)
    or is static (its queries cost ~0.1 ms: a thread hop would cost more)."""
    if not is_batchable(embedder) or is_static(embedder):
        return None
    query_groups: EmbedGroups = embedder.query_groups  # type: ignore[attr-defined]
    return DynamicBatcher(
        query_groups, available_cores(), queue, max_wait_seconds, on_batch=on_batch
    )


@dataclass(slots=True, eq=False)  # compared by identity: a deque's remove() finds this one
class _Request:
    text: str
    future: asyncio.Future[npt.NDArray[np.float32]]


class DynamicBatcher:
    """Query embeddings from `embed_groups` (texts -> groups of (positions, float32 vectors
    of shape (n, dimension)), computed lazily), on `threads` threads of its own, each
    taking up to `max_batch` waiting queries at once and handing out each group's vectors
    as soon as it is computed. `on_batch(size)` is called from a model thread as each call
    starts (a Prometheus histogram's `observe`).

    A free thread takes its share of what waits, ceil(waiting / threads), at most
    `max_batch`: two threads split a backlog of 16 into two calls of 8, not one of 16 and
    an idle core, and two queries waiting for two threads never share a call (~9.7 ms
    together against ~5.7 ms each, side by side). `embed_groups` must give each text the
    vector it would get alone, bit for bit (a2a.embeddings.is_batchable): then batching
    changes no answer.

    Overload is refused by the worker pool's rule (a2a.concurrency.Admission): Saturated
    (CSTP -32005) at once when `queue` queries already wait beyond the threads free to
    take them, and when a query is still waiting `max_wait_seconds` after it came (a timer
    on its loop; a query that found a thread free is never timed out). Nothing is embedded
    for a refused or cancelled query. Thread-safe; `embed` may be awaited from any event
    loop. The threads are not daemons: at interpreter exit they finish the model call in
    hand (a daemon thread killed inside onnxruntime aborts the process) and stop within
    IDLE_CHECK_SECONDS once the main thread has ended.
    """

    def __init__(
        self,
        embed_groups: EmbedGroups,
        threads: int,
        queue: int,
        max_wait_seconds: float,
        max_batch: int = MAX_BATCH,
        on_batch: Callable[[int], None] | None = None,
    ) -> None:
        if threads < 1 or max_batch < 1:
            raise ValueError("threads and max_batch must be at least 1")
        self._embed_groups = embed_groups
        self.admission = Admission(queue, max_wait_seconds)
        self._max_batch = max_batch
        self._waiting: deque[_Request] = deque()
        self._changed = threading.Condition()
        self._closed = False
        self._idle = 0  # threads waiting for work
        self._on_batch = on_batch
        self._thread_count = threads  # read by the threads as they start
        self._threads = [
            start_thread(self._serve, f"cstp-embed-{i}", daemon=False) for i in range(threads)
        ]

    @property
    def waiting(self) -> int:
        """Queries waiting for a model thread right now."""
        return len(self._waiting)

    @property
    def retry_after(self) -> int:
        """Whole seconds a refused caller is told to wait, at least 1."""
        return self.admission.retry_after

    async def embed(self, text: str) -> npt.NDArray[np.float32]:
        """The query's vector, float32, shape (dimension,).

        Raises Saturated when the queue is full or the query waited past the bound, what
        the model raised, and RuntimeError once the batcher is closed.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[npt.NDArray[np.float32]] = loop.create_future()
        request = _Request(text, future)
        with self._changed:
            if self._closed:
                raise RuntimeError("the query embedder is closed")
            # As in the worker pool, `queue` counts the queries no free thread is there for.
            beyond = len(self._waiting) - self._idle
            self.admission.admit(beyond)
            self._waiting.append(request)
            self._changed.notify()
        wait = self.admission.max_wait_seconds
        timer = None if beyond < 0 else loop.call_later(wait, self._expire, request)
        future.add_done_callback(functools.partial(self._finished, request, timer))
        return await future

    def close(self) -> None:
        """Stop the threads once their model calls return; queries still waiting fail."""
        with self._changed:
            self._closed = True
            left = list(self._waiting)
            self._waiting.clear()
            self._changed.notify_all()
        _deliver(left, None, RuntimeError("the query embedder is closed"))

    def _expire(self, request: _Request) -> None:
        """On the caller's loop, `max_wait_seconds` after it came: refuse it if no thread
        has taken it yet."""
        if self._withdraw(request) and not request.future.done():
            request.future.set_exception(self.admission.refusal())

    def _finished(
        self, request: _Request, timer: asyncio.TimerHandle | None, future: object
    ) -> None:
        if timer is not None:
            timer.cancel()
        if request.future.cancelled():  # the caller is gone: no model time for it
            self._withdraw(request)

    def _withdraw(self, request: _Request) -> bool:
        """Take `request` out of the queue; False when a thread already took it."""
        with self._changed:
            try:
                self._waiting.remove(request)
            except ValueError:
                return False
            return True

    def _take(self) -> list[_Request] | None:
        """The next batch for the calling thread, None once closed or the main thread is
        gone (interpreter exit)."""
        with self._changed:
            self._idle += 1
            try:
                while not self._waiting and not self._closed:
                    idle_long = not self._changed.wait(IDLE_CHECK_SECONDS)
                    if idle_long and not threading.main_thread().is_alive():
                        return None
            finally:
                self._idle -= 1
            if self._closed:
                return None
            share = -(-len(self._waiting) // self._thread_count)  # ceil
            return [self._waiting.popleft() for _ in range(min(share, self._max_batch))]

    def _serve(self) -> None:
        while (batch := self._take()) is not None:
            self._embed(batch)

    def _embed(self, batch: list[_Request]) -> None:
        """One model call for `batch`, each group's vectors handed out as it is computed."""
        try:
            groups = iter(self._embed_groups([r.text for r in batch]))
            if self._on_batch is not None:  # before any answer: its caller sees it counted
                self._on_batch(len(batch))
            for rows, vectors in groups:
                _deliver([batch[row] for row in rows.tolist()], vectors, None)
        except BaseException as exc:  # to every request not yet answered (_settle checks)
            _deliver(batch, None, exc)


def _deliver(
    requests: list[_Request],
    vectors: npt.NDArray[np.float32] | None,
    error: BaseException | None,
) -> None:
    """Hand each request its vector (row i of `vectors` for the i-th request) or `error`
    on its own loop: one wake-up of each loop per group, not one per query."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[int, _Request]]] = {}
    for i, request in enumerate(requests):
        by_loop.setdefault(request.future.get_loop(), []).append((i, request))
    for loop, pairs in by_loop.items():
        # A closed loop raises RuntimeError: nobody waits for these any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_settle, pairs, vectors, error)


def _settle(
    pairs: list[tuple[int, _Request]],
    vectors: npt.NDArray[np.float32] | None,
    error: BaseException | None,
) -> None:
    for i, request in pairs:
        if request.future.done():  # cancelled, or refused by its timer
            continue
        if error is not None:
            request.future.set_exception(error)
        else:
            assert vectors is not None
            request.future.set_result(vectors[i])
