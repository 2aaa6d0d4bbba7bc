"""The decision write and read logic, with no idea it sits behind HTTP."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

import anyio.to_thread
import numpy as np

from a2a.decisions.calibration import calibrate, outcome_scores
from a2a.decisions.commits import GroupCommit
from a2a.decisions.cursor import CursorCodec
from a2a.decisions.locks import KeyedLocks
from a2a.decisions.paging import page
from a2a.decisions.params import (
    DecisionInput,
    GetCalibrationParams,
    GetDecisionParams,
    ListDecisionsParams,
    RecordDecisionParams,
    ReviewDecisionParams,
)
from a2a.decisions.results import (
    CalibrationResult,
    DecisionResult,
    ListDecisionsResult,
    RecordDecisionResult,
)
from a2a.decisions.table import DecisionTableSource
from a2a.embeddings import Embedder
from a2a.errors import FieldError, InvalidParams
from a2a.query.dates import parse_bound
from a2a.query.results import DecisionMetadata
from a2a.records import DecisionRecord, Reason, canonical_hash
from a2a.store import AsyncStore, StoredRecord
from a2a.store.metadata import CONTENT_HASH_KEY, from_metadata, summary_fields, to_metadata

T = TypeVar("T")
log = logging.getLogger(__name__)
#: Random bits in a server-assigned id (`dec-` + 20 hex digits). CONTRACT.md asks for at
#: least 64; at 80 bits a collision is not expected before ~10^12 decisions.
ID_BYTES = 10


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


#: Told of every batch written (records, the metadata stored for them, their vectors,
#: their embedded texts), so an in-process index can take it in before the answers.
WriteListener = Callable[
    [
        Sequence[DecisionRecord],
        Sequence[Mapping[str, Any]],
        Sequence[Sequence[float]],
        Sequence[str],
    ],
    Awaitable[None],
]


async def in_thread(call: Callable[[], T]) -> T:
    """The default Runner: anyio's worker threads."""
    return await anyio.to_thread.run_sync(call)


def new_decision_id() -> str:
    """A fresh id: `dec-` and 80 random bits in hex."""
    return f"dec-{secrets.token_hex(ID_BYTES)}"


def utc_now() -> datetime:
    """The server clock, UTC, to the second (dates are stored to the second)."""
    return datetime.now(UTC).replace(microsecond=0)


def unknown_id() -> InvalidParams:
    """-32602 on `id`: no stored decision has it."""
    return InvalidParams([FieldError("id", "no decision with this id")])


class DecisionService:
    """Records, reviews and reads decisions; lists them in date order; scores calibration.

    Every write is embedded with the store's model and upserted into Chroma before the
    method returns, so the record is durable and any replica's next query finds it.
    Concurrent writes of different ids share one upsert (GroupCommit); writes of one id
    take turns (KeyedLocks).
    Raises InvalidParams (-32602) naming the field, StoreUnavailable (-32003).
    """

    def __init__(
        self,
        store: AsyncStore,
        embedder: Embedder,
        table: DecisionTableSource,
        *,
        cursors: CursorCodec | None = None,
        run: Runner = in_thread,
        clock: Callable[[], datetime] = utc_now,
        new_id: Callable[[], str] = new_decision_id,
        on_write: WriteListener | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._table = table
        self._cursors = cursors or CursorCodec()
        self._run = run
        self._clock = clock
        self._new_id = new_id
        self._on_write = on_write
        self._locks = KeyedLocks()
        self._commits: GroupCommit[Written, bool] = GroupCommit(self._store_batch)

    # -- writes ----------------------------------------------------------------------------

    async def record_decision(
        self, params: RecordDecisionParams, agent: str
    ) -> RecordDecisionResult:
        """Store `params.decision`, written by `agent`; `created` false for an identical retry.

        The same id with other content raises InvalidParams on `decision.id`.
        """
        sent = params.decision
        # What was sent, before defaults: a retry without `date` matches the first call.
        digest = canonical_hash(sent.model_dump(mode="json"))
        record = self._new_record(sent, sent.id or self._new_id(), agent, digest)
        async with self._locks.hold(record.id):
            created = await self._commits.submit(Written(record, None, replace=False))
        return RecordDecisionResult(id=record.id, created=created)

    async def review_decision(self, params: ReviewDecisionParams) -> DecisionMetadata:
        """Set the outcome, status, lessons and review time of a stored decision.

        A record from a file keeps the hash of its file, so `cstp index` of the unchanged
        file leaves the review in place. Unknown id: InvalidParams on `id`.
        """
        async with self._locks.hold(params.id):
            stored = await self._one(params.id, documents=True)
            record = from_metadata(stored.id, stored.metadata)
            update: dict[str, Any] = {
                "outcome": params.outcome,
                "status": params.status,
                "reviewed_at": params.reviewed_instant or self._clock(),
            }
            if params.lessons is not None:
                update["lessons"] = params.lessons
            reviewed = record.model_copy(update=update)
            # The embedded text has no review fields: the stored one is kept as it is.
            await self._commits.submit(Written(reviewed, stored.document, replace=True))
        return DecisionMetadata(id=reviewed.id, **summary_fields(to_metadata(reviewed)))

    # -- reads -----------------------------------------------------------------------------

    async def get_decision(self, params: GetDecisionParams) -> DecisionResult:
        """The whole record of `params.id`; unknown id: InvalidParams on `id`."""
        stored = await self._one(params.id)
        return DecisionResult.of(from_metadata(stored.id, stored.metadata))

    async def list_decisions(self, params: ListDecisionsParams) -> ListDecisionsResult:
        """One page of summaries in date order; a bad cursor: InvalidParams on `cursor`."""
        after = (
            None
            if params.cursor is None
            else self._cursors.decode(params.cursor, params.order, params.filters)
        )
        table = await self._table.table(params.filters)
        chosen = page(table.date_epoch, table.ids, table.mask, params.order, params.limit, after)
        ids = [str(table.ids[row]) for row in chosen.rows]
        found = {row.id: row.metadata for row in await self._store.get(ids=ids)}
        return ListDecisionsResult(
            # A row removed since the table was read is left out rather than shown empty.
            decisions=[
                DecisionMetadata(id=i, **summary_fields(found[i])) for i in ids if i in found
            ],
            next_cursor=None
            if chosen.next is None
            else self._cursors.encode(chosen.next, params.order, params.filters),
        )

    async def get_calibration(self, params: GetCalibrationParams) -> CalibrationResult:
        """Brier score, reliability bins and per-category scores of the filtered decisions."""
        table = await self._table.table(params.filters)
        rows = np.flatnonzero(table.mask).tolist()
        result = calibrate(
            table.confidence[rows],
            outcome_scores([table.outcomes[r] for r in rows]),
            [table.categories[r] for r in rows],
            params.bins,
        )
        return CalibrationResult.of(result)

    # -- parts -----------------------------------------------------------------------------

    async def _one(self, record_id: str, documents: bool = False) -> StoredRecord:
        rows = await self._store.get(ids=[record_id], documents=documents)
        if not rows:
            raise unknown_id()
        return rows[0]

    async def _store_batch(self, batch: list[Written]) -> list[bool | Exception]:
        """Store a batch of distinct ids: one read, one embedding call, one upsert.

        A new record (`replace` false) whose id is stored already is not written: its
        result is False when the stored one came from identical content, else an
        InvalidParams on `decision.id`. Every other item is written; result True.
        """
        fresh = [w.record.id for w in batch if not w.replace]
        stored = {row.id: row.metadata for row in await self._store.get(ids=fresh)}
        results: list[bool | Exception] = []
        writes: list[Written] = []
        for item in batch:
            known = None if item.replace else stored.get(item.record.id)
            if known is None:
                writes.append(item)
                results.append(True)
            elif known.get(CONTENT_HASH_KEY) == item.record.origin_hash:
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

    def _new_record(
        self, sent: DecisionInput, record_id: str, agent: str, digest: str
    ) -> DecisionRecord:
        now = self._clock()
        return DecisionRecord(
            id=record_id,
            title=sent.title,
            category=sent.category,
            confidence=sent.confidence,
            stakes=sent.stakes,
            status=sent.status or "decided",
            outcome=sent.outcome,
            date=now if sent.date is None else parse_bound(sent.date, "after"),
            context=sent.context,
            decision=sent.decision,
            reasons=[Reason(type=r.type, text=r.text) for r in sent.reasons],
            tags=list(sent.tags),
            recorded_by=agent,
            recorded_at=now,
            origin_hash=digest,
        )
