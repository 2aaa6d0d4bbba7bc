"""The in-process search index as the decision methods' source, and kept fresh by writes."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from a2a.decisions.calibration import outcome_scores
from a2a.decisions.table import Coded, DecisionTable
from a2a.decisions.writes import Runner, WriteListener
from a2a.index import IndexedRecord, SearchIndex
from a2a.records.filters import QueryFilters
from a2a.records.summary import DecisionMetadata
from a2a.store.pages import StoredRecord


class IndexSource(Protocol):
    """What the decision methods need of the service's search index (a2a.index.sync's
    LiveIndex has this shape): the index, fresh with every acknowledged write, and a way
    to put this process's own writes into it at once.
    """

    async def current(self) -> SearchIndex:
        """The index, loaded and fresh; raises StoreUnavailable when Chroma cannot say."""
        ...

    def apply(self, records: Sequence[IndexedRecord]) -> None:
        """Index records this process has just written to Chroma."""
        ...

    def forget(self, ids: Sequence[str]) -> None:
        """Drop records this process has just deleted from Chroma."""
        ...


class IndexTable:
    """A DecisionTableSource over the search index's filter columns and `mask(filters)`.

    No whole-store read per call: the columns are in memory. The table holds the rows
    passing the filters only (mask all true), read under the index's read lock in a worker
    thread, so a compaction never renumbers rows half-way.
    """

    def __init__(self, source: IndexSource, run: Runner) -> None:
        self._source = source
        self._run = run

    async def table(self, filters: QueryFilters | None) -> DecisionTable:
        """The rows passing `filters`; raises StoreUnavailable when the index cannot load."""
        index = await self._source.current()
        table = await self._run(lambda: _snapshot(index, filters))
        stale_read = getattr(self._source, "stale_read", None)
        if stale_read is None:
            return table

        def stale_decisions(ids: list[str]) -> dict[str, DecisionMetadata] | None:
            if not stale_read():
                return None
            with index.reading():
                rows = [row for row in map(index.row_of, ids) if row is not None]
                return {summary.id: summary for summary in index.summaries(rows)}

        return dataclasses.replace(table, stale_decisions=stale_decisions)

    async def agent_brier(
        self, agent: str, filters: QueryFilters | None
    ) -> tuple[int, float | None]:
        """DecisionService.agent_brier from the columns, on the event loop: the passing rows
        of `agent` are found with a few vector operations (a cached mask, one code
        compare), and only those rows are read."""
        index = await self._source.current()
        with index.reading():
            columns = index.columns
            code = columns.vocabularies["recorded_by"].find(agent)
            if code < 0:
                return 0, None
            rows = np.flatnonzero(index.mask(filters) & (columns.codes("recorded_by") == code))
            confidence = columns.confidence[rows]
            outcome = columns.vocabularies["outcome"]
            scores = outcome_scores([outcome.value(c) for c in range(len(outcome))] + [None])
            score = scores[columns.codes("outcome")[rows]]
        scored = ~np.isnan(confidence) & ~np.isnan(score)
        errors = (confidence[scored] - score[scored]) ** 2
        return int(errors.size), float(np.mean(errors)) if errors.size else None


def _snapshot(index: SearchIndex, filters: QueryFilters | None) -> DecisionTable:
    with index.reading():
        rows = np.flatnonzero(index.mask(filters))
        columns = index.columns
        # The index appends to its id list in place and replaces it on compaction, and its
        # vocabularies only grow, so these keep answering for these rows after the lock.
        ids = index.ids
        category = columns.vocabularies["category"]
        categories = columns.codes("category")[rows]
        # Score per outcome code; the last entry is for NULL (-1).
        outcome = columns.vocabularies["outcome"]
        scores = outcome_scores([outcome.value(code) for code in range(len(outcome))] + [None])
        coded = {
            name: Coded(
                columns.codes(name)[rows],
                columns.vocabularies[name].values(range(len(columns.vocabularies[name]))),
            )
            for name in ("category", "status", "outcome", "recorded_by")
        }
        return DecisionTable(
            ids=lambda wanted: np.array([ids[r] for r in rows[wanted].tolist()], dtype=np.str_),
            date_epoch=columns.date_epoch[rows],
            confidence=columns.confidence[rows],
            score=scores[columns.codes("outcome")[rows]],
            categories_of=lambda wanted: [category.value(int(c)) for c in categories[wanted]],
            mask=np.ones(len(rows), dtype=bool),
            coded=coded.__getitem__,
        )


def index_writes(source: IndexSource, run: Runner) -> WriteListener:
    """A WriteListener that puts each written batch into the index before the answers."""

    async def listen(
        stored: Sequence[StoredRecord],
        vectors: Sequence[Sequence[float]],
        documents: Sequence[str],
    ) -> None:
        batch = [
            IndexedRecord(s.id, s.decision, v, d, s.updated_at)
            for s, v, d in zip(stored, vectors, documents, strict=True)
        ]
        await run(lambda: source.apply(batch))

    return listen
