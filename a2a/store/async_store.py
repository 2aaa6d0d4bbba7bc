"""Chroma calls off the event loop, each with a deadline."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from a2a.store.chroma import ChromaDecisionStore, Hit, StoredRecord
from a2a.store.errors import StoreUnavailable

T = TypeVar("T")


class AsyncStore:
    """Async face of ChromaDecisionStore: blocking calls run in worker threads.

    A call that outlives `timeout_seconds` raises StoreUnavailable; its thread is
    abandoned (Chroma calls cannot be interrupted) and counted against `max_threads`.
    `on_error(kind)`, when given, hears of every failed call: kind `timeout` or `failure`.
    """

    def __init__(
        self,
        store: ChromaDecisionStore,
        timeout_seconds: float,
        max_threads: int = 8,
        on_error: Callable[[str], None] | None = None,
    ):
        self.sync = store
        self._timeout = timeout_seconds
        self._limiter = anyio.CapacityLimiter(max_threads)
        self._on_error = on_error or (lambda kind: None)

    async def query(
        self, embedding: Sequence[float], where: dict[str, Any] | None, n_results: int
    ) -> list[Hit]:
        """See ChromaDecisionStore.query."""
        return await self._run(lambda: self.sync.query(embedding, where, n_results))

    async def get(
        self,
        *,
        ids: Sequence[str] | None = None,
        where: dict[str, Any] | None = None,
        documents: bool = False,
        metadata: bool = True,
    ) -> list[StoredRecord]:
        """See ChromaDecisionStore.get."""
        return await self._run(
            lambda: self.sync.get(ids=ids, where=where, documents=documents, metadata=metadata)
        )

    async def revision(self) -> str | None:
        """See ChromaDecisionStore.revision."""
        return await self._run(self.sync.revision)

    async def count(self) -> int:
        """See ChromaDecisionStore.count."""
        return await self._run(self.sync.count)

    async def check(self) -> None:
        """See ChromaDecisionStore.check."""
        await self._run(self.sync.check)

    async def run_sync(self, call: Callable[[], T]) -> T:
        """Any other blocking work (embedding a query, say) in the same worker pool."""
        return await anyio.to_thread.run_sync(call, limiter=self._limiter)

    async def _run(self, call: Callable[[], T]) -> T:
        with anyio.move_on_after(self._timeout) as scope:
            try:
                return await anyio.to_thread.run_sync(
                    call, limiter=self._limiter, abandon_on_cancel=True
                )
            except StoreUnavailable:
                self._on_error("failure")
                raise
        assert scope.cancelled_caught
        self._on_error("timeout")
        raise StoreUnavailable(f"Chroma did not answer within {self._timeout:g} s")
