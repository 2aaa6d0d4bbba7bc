"""The in-process search index as the decision methods' source, and kept fresh by writes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from a2a.decisions.service import Runner, WriteListener, in_thread
from a2a.decisions.table import DecisionTable
from a2a.index import IndexedRecord, SearchIndex
from a2a.query.params import QueryFilters
from a2a.records import DecisionRecord
from a2a.store.metadata import to_metadata


class IndexTable:
    """A DecisionTableSource over a SearchIndex: its filter columns and `mask(filters)`.

    No Chroma call and no whole-store read per call: the columns are in memory. The
    table holds the rows passing the filters only (mask all true), read under the index's
    read lock in a worker thread, so a compaction never renumbers rows half-way.
    """

    def __init__(self, index: SearchIndex, run: Runner = in_thread) -> None:
        self._index = index
        self._run = run

    async def table(self, filters: QueryFilters | None) -> DecisionTable:
        """The rows passing `filters`."""
        return await self._run(lambda: self._snapshot(filters))

    def _snapshot(self, filters: QueryFilters | None) -> DecisionTable:
        index = self._index
        with index.reading():
            rows = np.flatnonzero(index.mask(filters))
            columns = index.columns
            ids = index.ids
            outcome = columns.vocabularies["outcome"]
            category = columns.vocabularies["category"]
            return DecisionTable(
                ids=np.array([ids[r] for r in rows.tolist()], dtype=np.str_),
                date_epoch=columns.date_epoch[rows],
                confidence=columns.confidence[rows],
                outcomes=[outcome.value(int(c)) for c in columns.codes("outcome")[rows]],
                categories=[category.value(int(c)) for c in columns.codes("category")[rows]],
                mask=np.ones(len(rows), dtype=bool),
            )


def index_writes(index: SearchIndex, run: Runner = in_thread) -> WriteListener:
    """A WriteListener that puts each written record into `index` before the answer."""

    async def listen(
        records: Sequence[DecisionRecord],
        vectors: Sequence[Sequence[float]],
        documents: Sequence[str],
    ) -> None:
        batch = [
            IndexedRecord(r.id, to_metadata(r), v, d)
            for r, v, d in zip(records, vectors, documents, strict=True)
        ]
        await run(lambda: index.upsert(batch))

    return listen
