"""The index's filter mask and Chroma's `where` select exactly the same records."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from a2a.index.columns import FilterColumns
from a2a.records import DecisionRecord
from a2a.records.filters import QueryFilters
from a2a.store.chroma import ChromaDecisionStore
from a2a.store.metadata import to_where
from tests.conftest import EVERY_FILTER, SAMPLE, utc
from tests.index.helpers import index_of, passing_both_ways, write

#: SAMPLE plus records at the edges: bounds exactly, unicode, nulls one field at a time.
EDGES = [
    DecisionRecord(id="e01", title="Unicode category", category="Sécurité", confidence=0.5),
    DecisionRecord(id="e02", title="Decomposed form", category="Se\u0301curite\u0301"),
    DecisionRecord(id="e03", title="Case differs", category="SECURITY", stakes="high"),
    DecisionRecord(id="e04", title="Day start", date=utc("2024-07-01T00:00:00Z"), status="pending"),
    DecisionRecord(id="e05", title="Day end", date=utc("2024-06-30T23:59:59Z"), confidence=1.0),
    DecisionRecord(id="e06", title="Sub-second", date=utc("2025-05-05T12:00:00.700000Z")),
    DecisionRecord(id="e07", title="Only confidence", confidence=0.7),
    DecisionRecord(id="e08", title="Only stakes", stakes="critical"),
    DecisionRecord(id="e09", title="Only status", status="rejected"),
    DecisionRecord(id="e10", title="Old date", date=utc("1970-01-01T00:00:00Z"), stakes="low"),
    DecisionRecord(id="e11", title="Before epoch", date=utc("1969-12-31T23:59:59Z")),
    DecisionRecord(id="e12", title="Emoji category", category="🚀 launch", status="decided"),
]

FILTERS: list[dict[str, Any] | None] = [
    None,
    {},
    {"category": "security"},
    {"category": "Sécurité"},
    {"category": "Se\u0301curite\u0301"},
    {"category": "SECURITY"},
    {"category": "🚀 launch"},
    {"category": "absent-everywhere"},
    {"minConfidence": 0.0},
    {"minConfidence": 0.7},
    {"maxConfidence": 0.7},
    {"minConfidence": 0.5, "maxConfidence": 0.5},
    {"maxConfidence": 1.0},
    {"minConfidence": 1.0},
    {"maxConfidence": 0.0},
    {"dateAfter": "2024-07-01"},
    {"dateBefore": "2024-06-30"},
    {"dateAfter": "2024-06-30T23:59:59Z", "dateBefore": "2024-07-01T00:00:00Z"},
    {"dateAfter": "2024-06-30T23:59:59.500Z"},
    {"dateBefore": "2024-07-01T00:00:00.500Z"},
    {"dateAfter": "2025-05-05T12:00:00Z", "dateBefore": "2025-05-05T12:00:00Z"},
    {"dateAfter": "2025-05-05T12:00:00.100Z"},
    {"dateAfter": "1970-01-01", "dateBefore": "1970-01-01"},
    {"dateBefore": "1969-12-31T23:59:59Z"},
    {"dateAfter": "2026-01-01T00:00:00+02:00"},
    {"stakes": ["low"]},
    {"stakes": ["high", "critical"]},
    {"stakes": "medium"},
    {"status": ["decided", "reviewed"]},
    {"status": ["pending"]},
    {"status": ["rejected", "proposed", "deprecated"]},
    {"status": "superseded"},
    {"category": "security", "stakes": ["critical"], "minConfidence": 0.9},
    {"minConfidence": 0.4, "dateBefore": "2025-12-31", "status": ["decided", "proposed"]},
    EVERY_FILTER,
]


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Any:
    store = ChromaDecisionStore(
        data_dir=tmp_path_factory.mktemp("chroma"), collection="crosscheck", embedding_model="t"
    )
    write(store, SAMPLE + EDGES)
    yield store, index_of(store)
    store.close()


@pytest.mark.parametrize("filters", FILTERS, ids=[str(f) for f in FILTERS])
def test_mask_selects_the_same_records_as_chroma_where(
    both: Any, filters: dict[str, Any] | None
) -> None:
    store, index = both
    passing_both_ways(store, index, filters)


def test_a_null_field_never_matches_a_filter_on_it(both: Any) -> None:
    _, index = both
    with index.reading():
        for filters in ({"minConfidence": 0.0}, {"stakes": ["low", "medium", "high", "critical"]}):
            passing = index.mask(QueryFilters.model_validate(filters))
            assert not passing[index.row_of("d06")]


def test_tombstoned_rows_never_pass(both: Any) -> None:
    _, index = both
    with index.reading():
        row = index.row_of("e07")
    index.remove(["e07"])
    with index.reading():
        assert not index.mask(None)[row] and index.row_of("e07") is None


@pytest.mark.parametrize("plan", ["every row", "passing rows"])
def test_both_range_plans_select_the_same_rows(both: Any, plan: str) -> None:
    """Ranges are tested over every row or over the rows left after the coded conditions
    (FilterColumns.range_on_rows_below); each plan alone gives Chroma's answer on every filter."""
    store, index = both[0], index_of(both[0])
    index.columns.range_on_rows_below = 0.0 if plan == "every row" else 2.0
    for filters in FILTERS:
        passing_both_ways(store, index, filters)


def test_codes_widen_past_127_and_32767_values_and_still_match() -> None:
    """Coded columns start as int8 and widen with their vocabulary; old rows keep theirs."""
    table = FilterColumns()
    categories = [f"c{n}" for n in range(40_000)]
    table.append(
        [DecisionRecord(id=c, title=c, category=c, stakes="low") for c in categories[:100]]
    )
    assert table.codes("category").dtype == np.int8
    table.append([DecisionRecord(id=c, title=c, category=c) for c in categories[100:]])
    assert table.codes("category").dtype == np.int32
    assert table.codes("stakes").dtype == np.int8
    for name in ("c0", "c99", "c127", "c128", "c32767", "c39999"):
        passing = np.flatnonzero(table.mask(QueryFilters(category=name)))
        assert passing.tolist() == [categories.index(name)]
    assert table.value("category", 39_999) == "c39999"
    assert np.flatnonzero(table.mask(QueryFilters(stakes=["low"]))).tolist() == list(range(100))


def test_a_date_before_1970_with_a_fraction_is_filtered_by_its_own_second(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """1969-12-31T23:59:59.5Z lies in 1969: it passes dateBefore 1969-12-31T23:59:59Z and
    not dateAfter 1970-01-01, in Chroma and in the index (its epoch is floored to -1)."""
    store = ChromaDecisionStore(
        data_dir=tmp_path_factory.mktemp("chroma"), collection="fraction", embedding_model="t"
    )
    write(
        store, [DecisionRecord(id="f1", title="Half a second", date=utc("1969-12-31T23:59:59.5Z"))]
    )
    index = index_of(store)
    for filters, expected in (
        ({"dateBefore": "1969-12-31T23:59:59Z"}, {"f1"}),
        ({"dateAfter": "1970-01-01"}, set()),
    ):
        parsed = QueryFilters.model_validate(filters)
        assert {row.id for row in store.get(where=to_where(parsed), metadata=False)} == expected
        with index.reading():
            assert {index.id_of(int(r)) for r in np.flatnonzero(index.mask(parsed))} == expected
    store.close()
