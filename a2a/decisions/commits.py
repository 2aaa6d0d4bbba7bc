"""Group commit: writes that arrive while one batch is being stored go to Chroma together."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")
log = logging.getLogger(__name__)


class GroupCommit(Generic[T, R]):
    """Runs `write(batch)` for items submitted concurrently, one batch at a time.

    While a batch is being written, new items queue up; the next batch takes them all (at
    most `max_batch`). `write` returns one result per item, in order: a value, or an
    exception for that item alone; if it raises, every item of the batch gets the error.
    Each `submit` returns once its batch is written, so an answer is never sent before its
    record is durable. Why: an embedded Chroma upsert costs about the same for 1 record as
    for 8 (one SQLite commit), so eight writers get several times one writer's rate.

    Once a batch of more than one item has been seen (writers are concurrent), a batch
    waits up to `linger_seconds` for more items before it starts: without it, writers
    answered together fall into step and alternate between a batch of one and a batch of
    the rest. A lone writer never waits.

    When `write` raises one of `shared_failures` (the store failing or timing out), the
    items queued meanwhile fail with it too, rather than each wait for a write of their
    own: a caller never waits more than one store deadline beyond the batch in flight.
    """

    def __init__(
        self,
        write: Callable[[list[T]], Awaitable[list[R | Exception]]],
        max_batch: int = 64,
        linger_seconds: float = 0.005,
        shared_failures: tuple[type[Exception], ...] = (),
    ) -> None:
        self._write = write
        self._max_batch = max_batch
        self._linger = linger_seconds
        self._shared_failures = shared_failures
        self._concurrent = False
        self._pending: list[tuple[T, asyncio.Future[R]]] = []
        self._flusher: asyncio.Task[None] | None = None

    async def submit(self, item: T) -> R:
        """Write `item` with whatever else is waiting; its result once it is stored."""
        done: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._pending.append((item, done))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        # Shielded: a caller that stops waiting never cancels the batch others wait on.
        try:
            return await asyncio.shield(done)
        except asyncio.CancelledError:
            # The caller has gone (its deadline): its outcome is read here, or asyncio logs
            # "Future exception was never retrieved" at ERROR, with a traceback, for a
            # failure its caller was already answered for (issue 44).
            if not done.done():
                done.add_done_callback(self._orphaned)
            raise

    def _orphaned(self, done: asyncio.Future[R]) -> None:
        """Read the outcome of an item whose caller stopped waiting. A `shared_failures`
        error (the store failing: the caller got -32003 by its deadline, the store logged
        the cause) at debug; any other error is still told, one line at WARNING."""
        if done.cancelled() or (exc := done.exception()) is None:
            return
        if isinstance(exc, self._shared_failures):
            log.debug("group commit: a batch failed after its caller left: %r", exc)
        else:
            log.warning("group commit: a batch failed after its caller left: %r", exc)

    async def _flush(self) -> None:
        while self._pending:
            if self._concurrent and len(self._pending) < self._max_batch:
                await asyncio.sleep(self._linger)
            batch = self._pending[: self._max_batch]
            self._concurrent = len(batch) > 1
            del self._pending[: self._max_batch]
            try:
                results = await self._write([item for item, _ in batch])
            except Exception as exc:
                if isinstance(exc, self._shared_failures):
                    batch += self._pending
                    self._pending.clear()
                results = [exc] * len(batch)
            for (_, done), result in zip(batch, results, strict=True):
                if done.done():
                    continue
                if isinstance(result, Exception):
                    done.set_exception(result)
                else:
                    done.set_result(result)
