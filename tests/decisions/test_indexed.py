"""listDecisions and getCalibration on the in-process index agree with Chroma; writes reach it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from a2a.decisions.indexed import IndexTable, index_writes
from a2a.decisions.params import (
    GetCalibrationParams,
    ListDecisionsParams,
    RecordDecisionParams,
    ReviewDecisionParams,
)
from a2a.decisions.service import DecisionService
from a2a.decisions.table import StoreTable
from a2a.embeddings import Embedder
from a2a.index import IndexedRecord, SearchIndex
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore
from tests.conftest import SAMPLE, index_records
from tests.index.helpers import index_of


class FixedIndex:
    """An IndexSource over one SearchIndex that only this process writes (the tests)."""

    def __init__(self, index: SearchIndex) -> None:
        self.index = index

    async def current(self) -> SearchIndex:
        """The index as it is."""
        return self.index

    def apply(self, records: Sequence[IndexedRecord]) -> None:
        """Upsert `records` into the index."""
        self.index.upsert(records)

    def forget(self, ids: Sequence[str]) -> None:
        """Remove `ids` from the index."""
        self.index.remove(ids)


FILTERS: list[dict[str, Any] | None] = [
    None,
    {"status": ["decided", "reviewed"]},
    {"minConfidence": 0.4, "maxConfidence": 0.95},
    {"dateAfter": "2024-07-01", "dateBefore": "2025-12-31"},
    {"category": "no-such-category"},
]


def services(
    store: ChromaDecisionStore, embedder: Embedder, index: SearchIndex
) -> tuple[DecisionService, DecisionService]:
    async_store = AsyncStore(store, timeout_seconds=30)
    run = async_store.workers.run
    source = FixedIndex(index)
    on_index = DecisionService(
        async_store, embedder, IndexTable(source, run), run=run, on_write=index_writes(source, run)
    )
    on_chroma = DecisionService(async_store, embedder, StoreTable(async_store), run=run)
    return on_index, on_chroma


async def walk(service: DecisionService, params: dict[str, Any]) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        wire = {**params, **({"cursor": cursor} if cursor else {})}
        page = await service.list_decisions(ListDecisionsParams.model_validate(wire))
        pages.append([d.id for d in page.decisions])
        if (cursor := page.next_cursor) is None:
            return pages


@pytest.mark.parametrize(
    "filters", FILTERS, ids=["none", "status", "confidence", "dates", "none-match"]
)
@pytest.mark.parametrize("order", ["dateDesc", "dateAsc"])
async def test_pages_and_calibration_on_the_index_equal_those_on_chroma(
    store: ChromaDecisionStore, embedder: Embedder, filters: dict[str, Any] | None, order: str
) -> None:
    index_records(store, embedder, SAMPLE)
    on_index, on_chroma = services(store, embedder, index_of(store))
    params: dict[str, Any] = {"order": order, "limit": 2}
    if filters:
        params["filters"] = filters
    # Cursors are signed per service: each walks its own pages.
    assert await walk(on_index, params) == await walk(on_chroma, params)
    scoring = GetCalibrationParams.model_validate({"filters": filters, "bins": 4})
    assert (await on_index.get_calibration(scoring)) == (await on_chroma.get_calibration(scoring))


async def test_a_record_or_review_is_in_the_index_when_the_answer_arrives(
    store: ChromaDecisionStore, embedder: Embedder
) -> None:
    index = SearchIndex()
    on_index, _ = services(store, embedder, index)
    params = RecordDecisionParams.model_validate(
        {"decision": {"id": "fresh", "title": "Fresh", "confidence": 0.9, "category": "c"}}
    )
    await on_index.record_decision(params, "writer")
    row = index.row_of("fresh")
    assert row is not None and index.summaries([row])[0].recorded_by == "writer"
    await on_index.review_decision(
        ReviewDecisionParams.model_validate({"id": "fresh", "outcome": "success"})
    )
    calibration = await on_index.get_calibration(GetCalibrationParams.model_validate({}))
    assert (calibration.decisions, calibration.brier_score) == (1, pytest.approx(0.01))
