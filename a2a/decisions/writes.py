"""Writing batches of decisions to Chroma: one read, one embedding call, one upsert."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

import anyio.to_thread

from a2a.embeddings import Embedder
from a2a.errors import FieldError, InvalidParams
from a2a.records import DecisionRecord
from a2a.store import AsyncStore
from a2a.store.stored import StoredDecision

T = TypeVar("T")
log = logging.getLogger(__name__)

ID_IN_USE = "in use by another decision (use reviewDecision)"


@dataclass(frozen=True, slots=True)
class Written:
    """A record on its way to Chroma, with its embedded text when already known.

    `replace` false: a new record, written only when its id is free.
    """

    record: DecisionRecord
    document: str | None
    replace: bool


class Runner(Protocol):
    """Runs blocking work (embedding, Chroma) off the event loop and awaits its result."""

    def __call__(self, call: Callable[[], T], /) -> Awaitable[T]: ...


#: Told of every batch written (records, what the store keeps of them, their vectors,
#: their embedded texts), so an in-process index can take it in before the answers.
WriteListener = Callable[
    [
        Sequence[DecisionRecord],
        Sequence[StoredDecision],
        Sequence[Sequence[float]],
        Sequence[str],
    ],
    Awaitable[None],
]


async def in_thread(call: Callable[[], T]) -> T:
    """The default Runner: anyio's worker threads."""
    return await anyio.to_thread.run_sync(call)


class BatchWriter:
    """Stores batches of Written items of distinct ids (GroupCommit's `write`).

    Blocking work goes through `run`; `on_write` hears of every batch stored.
    """

    def __init__(
        self,
        store: AsyncStore,
        embedder: Embedder,
        run: Runner = in_thread,
        on_write: WriteListener | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._run = run
        self._on_write = on_write

    async def write(self, batch: list[Written]) -> list[bool | Exception]:
        """Store a batch of distinct ids: one read, one embedding call, one upsert.

        A new record (`replace` false) whose id is stored already is not written: its
        result is False when the stored one came from identical content, else an
        InvalidParams on `decision.id`. Every other item is written; result True.
        """
        fresh = [w.record.id for w in batch if not w.replace]
        stored = {row.id: row.decision for row in await self._store.get(ids=fresh)}
        results: list[bool | Exception] = []
        writes: list[Written] = []
        for item in batch:
            known = None if item.replace else stored.get(item.record.id)
            if known is None:
                writes.append(item)
                results.append(True)
            elif known.content_hash == item.record.origin_hash:
                results.append(False)
            else:
                results.append(InvalidParams([FieldError("decision.id", ID_IN_USE)]))
        log.debug("group commit: %d of %d records to write", len(writes), len(batch))
        if writes:
            records = [w.record for w in writes]
            documents = [w.document or w.record.embedding_text() for w in writes]
            vectors = await self._run(lambda: self._embedder.embed_documents(documents))
            stored_as = await self._run(
                lambda: self._store.sync.upsert(records, vectors, documents)
            )
            if self._on_write is not None:
                await self._on_write(records, stored_as, vectors, documents)
        return results
