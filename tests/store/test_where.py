"""Filter -> Chroma `where` translation (pure), CONTRACT.md filter rules."""

from __future__ import annotations

from typing import Any

import pytest

from a2a.records.filters import QueryFilters
from a2a.store.metadata import to_where
from tests.conftest import EVERY_FILTER

JAN_1_2026 = 1767225600  # 2026-01-01T00:00:00Z


@pytest.mark.parametrize(
    ("filters", "where"),
    [
        (None, None),
        ({}, None),
        ({"category": "architecture"}, {"category": {"$eq": "architecture"}}),
        ({"stakes": "high"}, {"stakes": {"$in": ["high"]}}),
        (
            {"status": ["reviewed", "decided", "decided"]},
            {"status": {"$in": ["decided", "reviewed"]}},
        ),
        ({"minConfidence": 0.7}, {"confidence": {"$gte": 0.7}}),
        (
            {"category": "architecture", "maxConfidence": 1},
            {"$and": [{"category": {"$eq": "architecture"}}, {"confidence": {"$lte": 1.0}}]},
        ),
        (
            {"minConfidence": 0.2, "maxConfidence": 0.2},
            {"$and": [{"confidence": {"$gte": 0.2}}, {"confidence": {"$lte": 0.2}}]},
        ),
        ({"dateAfter": "2026-01-01T00:00:00Z"}, {"date_epoch": {"$gte": JAN_1_2026}}),
        # +05:30 is converted to UTC: 05:30 local on Jan 1 is midnight UTC.
        ({"dateAfter": "2026-01-01T05:30:00+05:30"}, {"date_epoch": {"$gte": JAN_1_2026}}),
        # A bare day means its start for dateAfter and its last second for dateBefore.
        ({"dateAfter": "2026-01-01"}, {"date_epoch": {"$gte": JAN_1_2026}}),
        ({"dateBefore": "2026-01-01"}, {"date_epoch": {"$lte": JAN_1_2026 + 86399}}),
        # Fractions round inward so both bounds stay inclusive for whole-second records.
        ({"dateAfter": "2026-01-01T00:00:00.5Z"}, {"date_epoch": {"$gte": JAN_1_2026 + 1}}),
        ({"dateBefore": "2026-01-01T00:00:00.5Z"}, {"date_epoch": {"$lte": JAN_1_2026}}),
        (
            EVERY_FILTER,
            {
                "$and": [
                    {"category": {"$eq": "architecture"}},
                    {"confidence": {"$gte": 0.7}},
                    {"confidence": {"$lte": 1.0}},
                    {"date_epoch": {"$gte": JAN_1_2026}},
                    {"date_epoch": {"$lte": 1798761599}},
                    {"stakes": {"$in": ["high", "medium"]}},
                    {"status": {"$in": ["decided", "reviewed"]}},
                ]
            },
        ),
    ],
    ids=[
        "absent",
        "empty",
        "category",
        "stakes-bare-string",
        "status-deduplicated",
        "min-confidence",
        "two-filters",
        "both-confidence-bounds",
        "date-after-utc",
        "offset-converted-to-utc",
        "date-only-after-is-day-start",
        "date-only-before-is-day-end",
        "fractional-after-rounds-up",
        "fractional-before-rounds-down",
        "all-filters",
    ],
)
def test_filters_translate_to_one_where_clause(
    filters: dict[str, Any] | None, where: dict[str, Any] | None
) -> None:
    parsed = None if filters is None else QueryFilters.model_validate(filters)
    assert to_where(parsed) == where


def test_every_where_clause_has_one_operator_per_dict() -> None:
    filters = QueryFilters.model_validate(
        {"category": "a", "minConfidence": 0, "stakes": ["low"], "dateBefore": "2026-01-01"}
    )
    where = to_where(filters)
    assert where is not None
    for clause in where["$and"]:
        assert len(clause) == 1
        (operators,) = clause.values()
        assert len(operators) == 1
