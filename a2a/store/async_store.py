"""Chroma calls off the event loop, on the request lane, by the call's deadline."""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from a2a.concurrency import Lane
from a2a.errors import Saturated, StoreUnavailable
from a2a.store.deadlines import seconds_left
from a2a.store.interface import DecisionStore
from a2a.store.pages import StoredRecord

T = TypeVar("T")
#: Worker threads Chroma calls never hold all of (see AsyncStore._chroma_slots).
CHROMA_FREE_THREADS = 2


class AsyncStore:
    """Async face of a DecisionStore: blocking calls run on `workers` (the request lane).

    A call that outlives `timeout_seconds` raises StoreUnavailable (CSTP -32003); inside a
    JSON-RPC call (a2a.store.deadlines.call_deadline) all its store calls end by one deadline,
    the first one's start + `timeout_seconds`, and one past it fails at once. A full worker
    queue raises Saturated (-32005) unless Chroma failed a moment ago (its hung calls hold
    the threads): then StoreUnavailable. `on_error(kind)`, when given,
    hears of every failed call: kind `timeout` or `failure`. Without `workers`, a lane of
    8 threads that never refuses (for scripts; the service passes its request lane).
    """

    def __init__(
        self,
        store: DecisionStore,
        timeout_seconds: float,
        workers: Lane | None = None,
        on_error: Callable[[str], None] | None = None,
    ):
        self.sync = store
        # Scripts and tests without a service get a lane of their own, never refusing.
        self.workers = workers or Lane(8, name="cstp-worker")
        self._timeout = timeout_seconds
        self._on_error = on_error or (lambda kind: None)
        self._failed_at = -math.inf
        self._slots: asyncio.Semaphore | None = None

    def sharing(self, store: DecisionStore) -> AsyncStore:
        """An AsyncStore of `store` (another collection of the same Chroma: a tenant's) on
        this one's workers, timeout, error hook and Chroma slots, so that however many
        tenants a replica serves, a hung Chroma holds at most the slots' threads."""
        other = AsyncStore(store, self._timeout, self.workers, self._on_error)
        other._slots = self._chroma_slots()
        return other

    def _chroma_slots(self) -> asyncio.Semaphore:
        """At most all but CHROMA_FREE_THREADS of the pool's threads in Chroma calls at
        once: a hung Chroma leaves threads for reads answered from the index."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(max(1, self.workers.threads - CHROMA_FREE_THREADS))
        return self._slots

    async def get(
        self,
        *,
        ids: Sequence[str] | None = None,
        where: dict[str, Any] | None = None,
        documents: bool = False,
        metadata: bool = True,
        refusable: bool = True,
    ) -> list[StoredRecord]:
        """See ChromaDecisionStore.get; `refusable` false: never Saturated (Lane.run)."""
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

    async def _in_slot(self, call: Callable[[], T], refusable: bool) -> T:
        """`call()` in a worker thread holding a Chroma slot until the thread is done (a
        hung call keeps its slot past the caller's deadline)."""
        slots = self._chroma_slots()
        await slots.acquire()
        loop = asyncio.get_running_loop()
        turn = threading.Lock()
        state = {"started": False, "abandoned": False}

        def held() -> T:
            with turn:
                if state["abandoned"]:  # the caller gave up (and the slot) before we ran
                    raise StoreUnavailable("Chroma call abandoned before it started")
                state["started"] = True
            try:
                return call()
            finally:
                loop.call_soon_threadsafe(slots.release)

        try:
            return await self.workers.run(held, deadline_seconds=self._timeout, refusable=refusable)
        finally:
            with turn:
                if not state["started"]:
                    state["abandoned"] = True
                    slots.release()

    async def call(self, call: Callable[[], T]) -> T:
        """`call()` (blocking, on Chroma) as the other calls here: within the timeout,
        in a Chroma slot; StoreUnavailable when Chroma fails or hangs."""
        return await self._run(call)

    def start_deadline(self) -> None:
        """Fix the call's deadline now if no wait of the call fixed it yet: a wait on
        Chroma elsewhere begins (the search index's check), and the store calls after it
        end by the same deadline."""
        seconds_left(self._timeout)

    async def wait(self, start: Callable[[], Awaitable[T]]) -> T:
        """`await start()`, work that waits on Chroma in another task (a group commit's
        batch), by the call's deadline: StoreUnavailable past it (that work goes on)."""
        return await self._bounded(start, counted=False)

    async def _run(self, call: Callable[[], T], refusable: bool = True) -> T:
        return await self._bounded(lambda: self._in_slot(call, refusable), counted=True)

    async def _bounded(self, start: Callable[[], Awaitable[T]], counted: bool) -> T:
        # The whole call, wait for a slot and a thread included, by the call's deadline:
        # when Chroma hangs, its calls hold the threads and the next ones wait for Chroma,
        # not for load (CONTRACT.md: no call waits on Chroma longer than the timeout + 1 s,
        # never -32005). `counted`: a failure is told to on_error (a store call of ours).
        report = self._on_error if counted else (lambda kind: None)
        try:
            left = seconds_left(self._timeout)
            if left <= 0:
                raise TimeoutError
            async with asyncio.timeout(left):
                return await start()
        except Saturated:
            if time.monotonic() - self._failed_at > 2 * self._timeout:
                raise
            # Chroma failed or hung a moment ago: the threads are held by its calls.
            report("timeout")
            raise StoreUnavailable("Chroma is not answering; its calls hold the workers") from None
        except StoreUnavailable:
            self._failed_at = time.monotonic()
            report("failure")
            raise
        except TimeoutError:
            self._failed_at = time.monotonic()
            report("timeout")
            raise StoreUnavailable(f"Chroma did not answer within {self._timeout:g} s") from None
