"""Chroma calls off the event loop, in the shared worker pool, each with a deadline."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from a2a.store.chroma import StoredRecord
from a2a.store.errors import StoreUnavailable
from a2a.store.interface import DecisionStore
from a2a.workers import WorkerPool

T = TypeVar("T")


class AsyncStore:
    """Async face of a DecisionStore: blocking calls run in `workers`.

    A call that outlives `timeout_seconds`, counted from the moment a worker thread starts
    it, raises StoreUnavailable (CSTP -32003); the wait for a free thread is not Chroma's
    time, and a full queue raises Saturated (-32005) instead. `on_error(kind)`, when given,
    hears of every failed call: kind `timeout` or `failure`. Without `workers`, a pool of
    8 threads whose queue never fills (for scripts; the service passes its shared pool).
    """

    def __init__(
        self,
        store: DecisionStore,
        timeout_seconds: float,
        workers: WorkerPool | None = None,
        on_error: Callable[[str], None] | None = None,
    ):
        self.sync = store
        # Scripts and tests without a service get a pool of their own, queue never full.
        self.workers = workers or WorkerPool(threads=8, queue=1_000_000, max_wait_seconds=3600)
        self._timeout = timeout_seconds
        self._on_error = on_error or (lambda kind: None)

    async def get(
        self,
        *,
        ids: Sequence[str] | None = None,
        where: dict[str, Any] | None = None,
        documents: bool = False,
        metadata: bool = True,
        refusable: bool = True,
    ) -> list[StoredRecord]:
        """See ChromaDecisionStore.get; `refusable` false: never Saturated (WorkerPool.run)."""
        return await self._run(
            lambda: self.sync.get(ids=ids, where=where, documents=documents, metadata=metadata),
            refusable,
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

    async def delete(self, ids: Sequence[str]) -> None:
        """See ChromaDecisionStore.delete."""
        await self._run(lambda: self.sync.delete(ids))

    async def _run(self, call: Callable[[], T], refusable: bool = True) -> T:
        try:
            return await self.workers.run(call, deadline_seconds=self._timeout, refusable=refusable)
        except StoreUnavailable:
            self._on_error("failure")
            raise
        except TimeoutError:
            self._on_error("timeout")
            raise StoreUnavailable(f"Chroma did not answer within {self._timeout:g} s") from None
