"""Writing batches of decisions to Chroma: one read, one embedding call, one write per kind."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol, TypeVar

from a2a.decisions.claims import CreationClaims
from a2a.embeddings import Embedder
from a2a.errors import FieldError, InvalidParams, StoreUnavailable
from a2a.records import DecisionRecord
from a2a.store.async_store import AsyncStore
from a2a.store.deadlines import call_deadline
from a2a.store.pages import StoredRecord

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


#: Told of every batch written (the records as stored, their vectors, their embedded
#: texts), so an in-process index can take it in before the answers.
WriteListener = Callable[
    [Sequence[StoredRecord], Sequence[Sequence[float]], Sequence[str]], Awaitable[None]
]


class BatchWriter:
    """Stores batches of Written items of distinct ids (GroupCommit's `write`).

    Blocking work goes through `run` until Chroma has stored part of the batch, then
    through `finish` (default `run`), which must never refuse the work for load
    (a2a.concurrency.Lane.run with `refusable` false): once a write is stored, -32005 ("retry")
    would be untrue, and a retry of a decision sent without an id would store it twice.
    `on_write` hears of every batch stored; it runs after the write, so its own runner
    must not refuse either (a2a.app.decisions gives it `finish`).
    """

    def __init__(
        self,
        store: AsyncStore,
        embedder: Embedder,
        run: Runner,
        on_write: WriteListener | None = None,
        finish: Runner | None = None,
        claims: CreationClaims | None = None,
    ) -> None:
        self._store = store
        self._claims = claims
        self._embedder = embedder
        self._run = run
        self._finish = finish or run
        self._on_write = on_write

    async def write(self, batch: list[Written]) -> list[bool | Exception]:
        """Store a batch of distinct ids: one read, one embedding call, one write per kind.

        A new record (`replace` false) whose id is stored already is not written: its
        result is False when the stored one came from identical content, else an
        InvalidParams on `decision.id`. New records are added only where their id is free
        (Chroma `add`) and read back, so that of two processes sharing the Chroma server and
        writing one id at once, only the first is answered True (the other as above).
        Every other item is written; result True.

        The batch is written for several calls: its waits on Chroma share a deadline of
        their own (a2a.store.deadlines), and each caller waits for it by its own deadline.
        """
        with call_deadline():
            return await self._write(batch)

    async def _write(self, batch: list[Written]) -> list[bool | Exception]:
        fresh = [w.record.id for w in batch if not w.replace]
        stored = {row.id: row.decision for row in await self._store.get(ids=fresh)}
        results: list[bool | Exception] = []
        writes: list[tuple[int, Written]] = []
        for item in batch:
            known = None if item.replace else stored.get(item.record.id)
            if known is None:
                writes.append((len(results), item))
                results.append(True)
            else:
                results.append(_retry_or_conflict(known, item))
        log.debug("group commit: %d of %d records to write", len(writes), len(batch))
        if any(result is False for result in results):
            # An identical retry may follow a write Chroma stored whose revision change
            # failed (-32003): change it now, so every replica's index finds the record.
            await self._store.call(self._store.sync.touch)
        if not writes:
            return results
        documents = [w.document or w.record.embedding_text() for _, w in writes]
        vectors = list(await self._run(lambda: self._embedder.embed_documents(documents)))
        run = self._run  # until Chroma stores the first part of the batch
        for only_new in (True, False):
            rows = [n for n, (_, w) in enumerate(writes) if w.replace != only_new]
            if not rows:
                continue
            records = [writes[n][1].record for n in rows]
            write = partial(
                self._store.sync.upsert,
                records,
                [vectors[n] for n in rows],
                only_new=only_new,
            )
            # The first write within the Chroma deadline and slots (a2a.store.AsyncStore):
            # a hung Chroma gives -32003 in time. Once part is stored, never refused.
            stored_as = await (self._store.call(write) if run is self._run else run(write))
            run = self._finish
            if only_new:
                rows, stored_as = await self._claimed(writes, rows, stored_as, results)
            if self._on_write is not None and rows:
                await self._on_write(
                    stored_as, [vectors[n] for n in rows], [documents[n] for n in rows]
                )
        return results

    async def _claimed(
        self,
        writes: list[tuple[int, Written]],
        rows: list[int],
        written: list[StoredRecord],
        results: list[bool | Exception],
    ) -> tuple[list[int], list[StoredRecord]]:
        """The rows of `writes` whose record Chroma kept as written here, with their
        metadata; the others' results set from the record another writer stored first."""
        ids = [writes[n][1].record.id for n in rows]
        now = {row.id: row for row in await self._store.get(ids=ids, refusable=False)}
        kept: tuple[list[int], list[StoredRecord]] = ([], [])
        for n, mine in zip(rows, written, strict=True):
            slot, item = writes[n]
            found = now.get(item.record.id)
            if found is None:
                results[slot] = StoreUnavailable(f"Chroma did not keep {item.record.id!r}")
            elif _identity(found) == _identity(mine):
                kept[0].append(n)
                kept[1].append(mine)
            else:
                results[slot] = _retry_or_conflict(found.decision, item)
        claims = self._claims
        if claims is not None and kept[0]:
            # Another replica may have read back an identical record as its own: the
            # first to claim it in the shared Redis is its creator (a2a.decisions.claims).
            keys = [
                (writes[n][1].record.id, d.decision.origin_hash or "")
                for n, d in zip(*kept, strict=True)
            ]
            granted = await self._finish(lambda: claims.claim(keys))
            for n, won in zip(kept[0], granted, strict=True):
                if not won:
                    results[writes[n][0]] = False
        return kept


def _identity(stored: StoredRecord) -> tuple[object, ...]:
    """What tells this write from another process's write of the same id."""
    record = stored.decision
    return (stored.updated_at, record.origin_hash, record.recorded_at, record.recorded_by)


def _retry_or_conflict(stored: DecisionRecord, item: Written) -> bool | Exception:
    """False for a retry of the stored content, else InvalidParams on `decision.id`."""
    if stored.origin_hash == item.record.origin_hash:
        return False
    return InvalidParams([FieldError("decision.id", ID_IN_USE)])
