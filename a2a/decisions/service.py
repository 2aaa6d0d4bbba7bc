"""The decision write and read logic, with no idea it sits behind HTTP."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from a2a.auth.scopes import Scopes
from a2a.decisions import results as wire
from a2a.decisions.calibration import calibrate
from a2a.decisions.claims import CreationClaims
from a2a.decisions.commits import GroupCommit
from a2a.decisions.cursor import CursorCodec
from a2a.decisions.drift import drift
from a2a.decisions.lifecycle import Forget, Lifecycle, unknown_id
from a2a.decisions.locks import KeyedLocks
from a2a.decisions.paging import page, page_ids
from a2a.decisions.params import (
    CheckDriftParams,
    DecisionInput,
    DeleteDecisionParams,
    GetCalibrationParams,
    GetDecisionParams,
    GetStatsParams,
    ListDecisionsParams,
    RecordDecisionParams,
    ReviewDecisionParams,
    UpdateDecisionParams,
)
from a2a.decisions.replica_locks import ReplicaLocks
from a2a.decisions.stats import stats
from a2a.decisions.table import DecisionTableSource
from a2a.decisions.writes import BatchWriter, Runner, WriteListener, Written
from a2a.embeddings import Embedder
from a2a.errors import EmbeddingsUnavailable, LockedElsewhere, StoreUnavailable
from a2a.records import DecisionRecord, canonical_hash
from a2a.records.dates import parse_bound
from a2a.records.filters import QueryFilters
from a2a.records.summary import DecisionMetadata
from a2a.store.async_store import AsyncStore
from a2a.store.pages import StoredRecord

#: Random bits in a server-assigned id (`dec-` + 20 hex digits). CONTRACT.md asks for at
#: least 64; at 80 bits a collision is not expected before ~10^12 decisions.
ID_BYTES = 10


def new_decision_id() -> str:
    """A fresh id: `dec-` and 80 random bits in hex."""
    return f"dec-{secrets.token_hex(ID_BYTES)}"


@dataclass(frozen=True, slots=True)
class Scored:
    """Scored decisions as columns, one entry per decision: confidence and outcome score in
    [0, 1], category, recording agent, date (epoch seconds, NaN when undated)."""

    confidence: npt.NDArray[np.float64]
    score: npt.NDArray[np.float64]
    categories: list[str | None]
    agents: list[str | None]
    date_epoch: npt.NDArray[np.float64]


def calibration_of(parts: Sequence[Scored], bins: int) -> wire.CalibrationResult:
    """getCalibration's result over the decisions of every one of `parts` together."""
    return calibrate(
        np.concatenate([p.confidence for p in parts]),
        np.concatenate([p.score for p in parts]),
        [c for p in parts for c in p.categories],
        bins,
        agents=[a for p in parts for a in p.agents],
        date_epoch=np.concatenate([p.date_epoch for p in parts]),
    ).result()


def utc_now() -> datetime:
    """The server clock, UTC, to the second (dates are stored to the second)."""
    return datetime.now(UTC).replace(microsecond=0)


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
        run: Runner | None = None,
        clock: Callable[[], datetime] = utc_now,
        new_id: Callable[[], str] = new_decision_id,
        on_write: WriteListener | None = None,
        finish: Runner | None = None,
        on_delete: Forget | None = None,
        claims: CreationClaims | None = None,
        replicas: ReplicaLocks | None = None,
        tenant: str = "default",
    ) -> None:
        """`tenant`: the tenant of `store` (CONTRACT.md, Tenants), for the deletion log.
        `run`: blocking work of writes (default: the store's lane, `store.workers.run`).
        `replicas`: writers of one id take turns across the replicas sharing a Redis too
        (None: within this process)."""
        self._store = store
        self._table = table
        self._cursors = cursors or CursorCodec()
        self._clock = clock
        self._new_id = new_id
        self._locks = KeyedLocks(
            shared_failures=(StoreUnavailable, LockedElsewhere), replicas=replicas
        )
        writer = BatchWriter(store, embedder, run or store.workers.run, on_write, finish, claims)
        self._commits: GroupCommit[Written, bool] = GroupCommit(
            writer.write, shared_failures=(StoreUnavailable, EmbeddingsUnavailable)
        )
        self._lifecycle = Lifecycle(store, self._locks, self._commit, clock, on_delete, tenant)

    # -- writes ----------------------------------------------------------------------------

    async def record_decision(
        self, params: RecordDecisionParams, agent: str
    ) -> wire.RecordDecisionResult:
        """Store `params.decision`, written by `agent`; `created` false for an identical retry.

        The same id with other content raises InvalidParams on `decision.id`.
        """
        sent = params.decision
        # What was sent, before defaults: a retry without `date` matches the first call.
        digest = canonical_hash(sent.digest_fields())
        record = self._new_record(sent, sent.id or self._new_id(), agent, digest)
        written = Written(record, None, replace=False)
        if record.supersedes or record.related_to:
            created = await self._lifecycle.record(record, written, agent)
        else:
            self._store.start_deadline()  # the lock's holder may be waiting on Chroma
            async with self._locks.hold(record.id):
                created = await self._commit(written)
        return wire.RecordDecisionResult(id=record.id, created=created)

    async def update_decision(self, params: UpdateDecisionParams, agent: str) -> DecisionMetadata:
        """Apply `params.changes` (kept in the history with `params.reason`); the summary
        after the change. See Lifecycle.update."""
        record = await self._lifecycle.update(params, agent)
        return DecisionMetadata.of(record)

    async def delete_decision(
        self, params: DeleteDecisionParams, agent: str, scopes: Scopes
    ) -> wire.DeleteDecisionResult:
        """Remove a decision and every link to it. See Lifecycle.delete."""
        await self._lifecycle.delete(params, agent, scopes)
        return wire.DeleteDecisionResult(id=params.id, deleted=True)

    async def review_decision(self, params: ReviewDecisionParams) -> DecisionMetadata:
        """Set the outcome, status, lessons and review time of a stored decision.

        A record from a file keeps the hash of its file, so `cstp index` of the unchanged
        file leaves the review in place. Unknown id: InvalidParams on `id`.
        """
        self._store.start_deadline()  # the lock's holder may be waiting on Chroma
        async with self._locks.hold(params.id):
            stored = await self._one(params.id, documents=True)
            record = stored.decision
            update: dict[str, Any] = {
                "outcome": params.outcome,
                "status": params.status,
                "reviewed_at": params.reviewed_instant or self._clock(),
            }
            if params.lessons is not None:
                update["lessons"] = params.lessons
            reviewed = record.model_copy(update=update)
            # The embedded text has no review fields: the stored one is kept as it is.
            await self._commit(Written(reviewed, stored.document, replace=True))
        return DecisionMetadata.of(reviewed)

    # -- reads -----------------------------------------------------------------------------

    async def get_decision(self, params: GetDecisionParams) -> wire.DecisionResult:
        """The whole record of `params.id`; unknown id: InvalidParams on `id`."""
        stored = await self._one(params.id)
        return wire.DecisionResult.of(stored.decision)

    async def list_decisions(self, params: ListDecisionsParams) -> wire.ListDecisionsResult:
        """One page of summaries in date order; a bad cursor: InvalidParams on `cursor`."""
        after = (
            None
            if params.cursor is None
            else self._cursors.decode(params.cursor, params.order, params.filters)
        )
        self._store.start_deadline()  # the index's check and the read below: one deadline
        table = await self._table.table(params.filters)
        chosen = page(table.date_epoch, table.ids, table.mask, params.order, params.limit, after)
        ids = [str(i) for i in page_ids(table.ids, chosen.rows)]
        try:
            rows = await self._store.get(ids=ids)
            found = {row.id: DecisionMetadata.of(row.decision) for row in rows}
        except StoreUnavailable:
            stale = None if table.stale_decisions is None else table.stale_decisions(ids)
            if stale is None:
                raise
            found = stale
        return wire.ListDecisionsResult(
            # A row removed since the table was read is left out rather than shown empty.
            decisions=[found[i] for i in ids if i in found],
            next_cursor=None
            if chosen.next is None
            else self._cursors.encode(chosen.next, params.order, params.filters),
        )

    async def get_calibration(self, params: GetCalibrationParams) -> wire.CalibrationResult:
        """Brier score, reliability bins and per-category scores of the filtered decisions."""
        return calibration_of([await self.scored(params)], params.bins)

    async def scored(self, params: GetCalibrationParams) -> Scored:
        """The filtered decisions that have both a confidence and an outcome score, as
        columns (getCalibration's input; org-level calibration joins several tenants')."""
        table = await self._table.table(params.filters)
        rows = np.flatnonzero(table.mask)
        scored = rows[~np.isnan(table.confidence[rows]) & ~np.isnan(table.score[rows])]
        return Scored(
            table.confidence[scored],
            table.score[scored],
            table.categories_of(scored),
            table.labels("recorded_by", scored),
            table.date_epoch[scored],
        )

    async def agent_brier(
        self, agent: str, filters: QueryFilters | None
    ) -> tuple[int, float | None]:
        """`agent`'s scored decisions among those passing `filters` (recordedBy `agent`,
        with a confidence and a scored outcome), and their Brier score (None when none), as
        getCalibration scores them: cstp.checkGuardrails' calibration, read from the
        columns' codes without getCalibration's per-row lists."""
        from_index = getattr(self._table, "agent_brier", None)
        if from_index is not None:  # the search index's own (a2a.decisions.indexed)
            result: tuple[int, float | None] = await from_index(agent, filters)
            return result
        table = await self._table.table(filters)
        column = table.coded("recorded_by")
        codes = [code for code, value in enumerate(column.values) if value == agent]
        if not codes:
            return 0, None
        mine = table.mask & np.isin(column.codes, codes)
        mine &= ~np.isnan(table.confidence) & ~np.isnan(table.score)
        errors = (table.confidence[mine] - table.score[mine]) ** 2
        return int(errors.size), float(np.mean(errors)) if errors.size else None

    async def get_stats(self, params: GetStatsParams) -> wire.StatsResult:
        """Counts of the filtered decisions by month x outcome, category, status, agent."""
        return stats(await self._table.table(params.filters)).result()

    async def check_drift(self, params: CheckDriftParams) -> wire.DriftResult:
        """Recent against baseline Brier score per category or agent (a2a.decisions.drift)."""
        table = await self._table.table(params.filters)
        rows = np.flatnonzero(table.mask)
        scored = rows[~np.isnan(table.confidence[rows]) & ~np.isnan(table.score[rows])]
        groups = (
            table.categories_of(scored)
            if params.group_by == "category"
            else table.labels("recorded_by", scored)
        )
        found = drift(
            table.date_epoch[scored],
            (table.confidence[scored] - table.score[scored]) ** 2,
            groups,
            self._clock().timestamp(),
            params.recent_days,
            params.baseline_days,
        )
        return wire.DriftResult(groups=found)

    # -- parts -----------------------------------------------------------------------------

    async def _commit(self, written: Written) -> bool:
        """GroupCommit.submit, waited for by the call's deadline (a2a.store.deadlines): the batch
        is written in a task of its own, which goes on if the caller stops waiting."""
        return await self._store.wait(lambda: self._commits.submit(written))

    async def _one(self, record_id: str, documents: bool = False) -> StoredRecord:
        rows = await self._store.get(ids=[record_id], documents=documents)
        if not rows:
            raise unknown_id()
        return rows[0]

    def _new_record(
        self, sent: DecisionInput, record_id: str, agent: str, digest: str
    ) -> DecisionRecord:
        now = self._clock()
        return DecisionRecord(
            **sent.model_dump(exclude={"id", "status", "date"}),
            id=record_id,
            status=sent.status or "decided",
            date=now if sent.date is None else parse_bound(sent.date, "after"),
            recorded_by=agent,
            recorded_at=now,
            origin_hash=digest,
        )
