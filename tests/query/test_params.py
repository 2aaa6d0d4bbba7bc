"""cstp.queryDecisions params: strict validation per CONTRACT.md's params table."""

from __future__ import annotations

from typing import Any

import pytest

from a2a.app.methods import build_methods
from a2a.errors import InvalidParams
from a2a.query.params import QueryDecisionsParams
from tests.conftest import invalid_fields

METHOD = build_methods(source=None)["cstp.queryDecisions"]  # type: ignore[arg-type]


def _validate(params: Any) -> QueryDecisionsParams:
    result = METHOD.validate(params)
    assert isinstance(result, QueryDecisionsParams)
    return result


def _bad_fields(params: Any) -> list[str]:
    return invalid_fields(METHOD, params)


@pytest.mark.parametrize(
    ("params", "fields"),
    [
        ({}, ["query"]),
        ({"query": ""}, ["query"]),
        ({"query": "   \n\t"}, ["query"]),
        ({"query": 42}, ["query"]),
        ({"query": None}, ["query"]),
        ({"query": "x" * 2001}, ["query"]),
        ({"query": "x", "limit": True}, ["limit"]),
        ({"query": "x", "limit": "10"}, ["limit"]),
        ({"query": "x", "limit": 10.5}, ["limit"]),
        ({"query": "x", "limit": 10.0}, ["limit"]),
        ({"query": "x", "limit": 0}, ["limit"]),
        ({"query": "x", "limit": 51}, ["limit"]),
        ({"query": "x", "includeReasons": "yes"}, ["includeReasons"]),
        ({"query": "x", "includeReasons": 1}, ["includeReasons"]),
        ({"query": "x", "filters": {"minConfidence": float("nan")}}, ["filters.minConfidence"]),
        ({"query": "x", "filters": {"maxConfidence": float("inf")}}, ["filters.maxConfidence"]),
        ({"query": "x", "filters": {"minConfidence": True}}, ["filters.minConfidence"]),
        ({"query": "x", "filters": {"minConfidence": "0.5"}}, ["filters.minConfidence"]),
        ({"query": "x", "filters": {"minConfidence": -0.1}}, ["filters.minConfidence"]),
        ({"query": "x", "filters": {"maxConfidence": 1.01}}, ["filters.maxConfidence"]),
        (
            {"query": "x", "filters": {"minConfidence": 0.9, "maxConfidence": 0.1}},
            ["filters.maxConfidence"],
        ),
        ({"query": "x", "filters": {"category": 3}}, ["filters.category"]),
        ({"query": "x", "filters": {"categry": "a"}}, ["filters.categry"]),
        ({"query": "x", "filters": "architecture"}, ["filters"]),
        ({"query": "x", "filters": {"dateAfter": 1767225600}}, ["filters.dateAfter"]),
        ({"query": "x", "filters": {"dateAfter": "2026-01-01T00:00:00"}}, ["filters.dateAfter"]),
        ({"query": "x", "filters": {"dateBefore": "2026-02-30"}}, ["filters.dateBefore"]),
        ({"query": "x", "filters": {"dateBefore": "yesterday"}}, ["filters.dateBefore"]),
        (
            {"query": "x", "filters": {"dateAfter": "2026-02-01", "dateBefore": "2026-01-31"}},
            ["filters.dateBefore"],
        ),
        (
            {
                "query": "x",
                "filters": {
                    "dateAfter": "2026-01-01T06:00:00+05:30",
                    "dateBefore": "2026-01-01T00:00:00Z",
                },
            },
            ["filters.dateBefore"],
        ),
        ({"query": "x", "filters": {"stakes": []}}, ["filters.stakes"]),
        ({"query": "x", "filters": {"stakes": ["huge"]}}, ["filters.stakes[0]"]),
        ({"query": "x", "filters": {"status": []}}, ["filters.status"]),
        ({"query": "x", "filters": {"status": ["decided", "accepted"]}}, ["filters.status[1]"]),
        ({"query": "x", "filters": {"status": "Decided"}}, ["filters.status[0]"]),
        ({"query": "x", "extra": 1}, ["extra"]),
        (["database migration"], ["params"]),
        ({"query": "x", "include_reasons": True}, ["include_reasons"]),
        ({"query": "x", "filters": {"min_confidence": 0.5}}, ["filters.min_confidence"]),
        ({"query": "x", "filters": []}, ["filters"]),
        (
            {"query": "x", "filters": {"dateAfter": "0001-01-01T00:00:00+01:00"}},
            ["filters.dateAfter"],
        ),
        (
            {"query": "x", "filters": {"dateBefore": "9999-12-31T23:59:59-01:00"}},
            ["filters.dateBefore"],
        ),
        (
            {"query": "x", "filters": {"dateAfter": "\uff12\uff10\uff12\uff16-01-01"}},
            ["filters.dateAfter"],
        ),
        (
            {"query": "x", "filters": {"dateAfter": "2026-01-01T00:00:00+01:60"}},
            ["filters.dateAfter"],
        ),
        ({"query": "x", "filters": {"stakes": ["low"] * 17}}, ["filters.stakes"]),
        ({"limit": 0, "includeReasons": "no"}, ["query", "limit", "includeReasons"]),
    ],
    ids=[
        "query-missing",
        "query-empty",
        "query-whitespace",
        "query-number",
        "query-null",
        "query-too-long",
        "limit-true",
        "limit-string",
        "limit-fraction",
        "limit-float-integral",
        "limit-zero",
        "limit-above-50",
        "include-reasons-string",
        "include-reasons-one",
        "confidence-nan",
        "confidence-infinity",
        "confidence-bool",
        "confidence-string",
        "confidence-below-0",
        "confidence-above-1",
        "confidence-inverted",
        "category-number",
        "filters-unknown-key",
        "filters-not-object",
        "date-number",
        "date-naive",
        "date-impossible",
        "date-words",
        "date-window-inverted-days",
        "date-window-inverted-after-offset",
        "stakes-empty",
        "stakes-unknown",
        "status-empty",
        "status-unknown",
        "status-case-sensitive",
        "params-unknown-key",
        "params-positional",
        "every-bad-field-listed",
        "snake-case-param",
        "snake-case-filter",
        "filters-array",
        "date-before-year-1-in-utc",
        "date-after-year-9999-in-utc",
        "fullwidth-digits",
        "offset-minute-60",
        "stakes-list-too-long",
    ],
)
def test_invalid_params_name_every_bad_field(params: Any, fields: list[str]) -> None:
    assert sorted(_bad_fields(params)) == sorted(fields)


def test_defaults_are_limit_10_without_reasons_or_filters() -> None:
    params = _validate({"query": "database migration strategy"})
    assert (params.limit, params.include_reasons, params.filters) == (10, False, None)


def test_query_is_kept_exactly_as_sent() -> None:
    query = "  résumé: ünïcode\tand spaces  "
    assert _validate({"query": query}).query == query


def test_query_of_2000_code_points_is_accepted() -> None:
    assert len(_validate({"query": "é" * 2000}).query) == 2000


@pytest.mark.parametrize(
    "filters",
    [
        {"category": "architecture", "minConfidence": 0, "maxConfidence": 1},
        {"dateAfter": "2026-01-01T00:00:00.123+05:30", "dateBefore": "2026-01-01"},
        {"dateAfter": "2026-01-01t00:00:00z"},
        {"stakes": ["low", "medium", "high", "critical"], "status": "superseded"},
        {"category": None, "stakes": None},
    ],
    ids=["confidence-ints", "offset-and-day", "lowercase-t-z", "all-stakes", "explicit-nulls"],
)
def test_valid_filters_are_accepted(filters: dict[str, Any]) -> None:
    assert _validate({"query": "x", "filters": filters}).filters is not None


def test_error_list_is_capped_with_a_count_of_the_rest() -> None:
    params = {"query": "x", "filters": {f"k{i}": 1 for i in range(500)}}
    with pytest.raises(InvalidParams) as caught:
        _validate(params)
    errors = caught.value.errors
    assert len(errors) == 51
    assert errors[-1].field == "params" and "450" in errors[-1].reason


def test_non_object_filters_reason_names_no_internal_class() -> None:
    with pytest.raises(InvalidParams) as caught:
        _validate({"query": "x", "filters": ["a"]})
    assert "QueryFilters" not in caught.value.errors[0].reason


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, 0.0), (0.35, 0.35), (1, 1.0), (2, 2.0), (2.0, 2.0), (None, None)],
    ids=["zero", "fraction", "integer", "upper-bound-int", "upper-bound-float", "null"],
)
def test_max_distance_accepts_finite_numbers_from_0_to_2(
    value: float | None, expected: float | None
) -> None:
    assert _validate({"query": "x", "maxDistance": value}).max_distance == expected


@pytest.mark.parametrize(
    "value",
    [True, False, "0.5", float("nan"), float("inf"), float("-inf"), -0.01, 2.01, [0.5], {}],
    ids=[
        "true",
        "false",
        "string",
        "nan",
        "infinity",
        "minus-infinity",
        "below-0",
        "above-2",
        "list",
        "object",
    ],
)
def test_max_distance_rejects_anything_but_a_number_in_range(value: Any) -> None:
    assert _bad_fields({"query": "x", "maxDistance": value}) == ["maxDistance"]


def test_snake_case_max_distance_is_an_unknown_key() -> None:
    assert _bad_fields({"query": "x", "max_distance": 0.5}) == ["max_distance"]


def test_absent_retrieval_mode_and_max_distance_are_left_to_the_server() -> None:
    params = _validate({"query": "x"})
    assert (params.retrieval_mode, params.max_distance) == (None, None)
    assert params.mode_or("keyword") == "keyword"
    assert _validate({"query": "x", "retrievalMode": "hybrid"}).mode_or("keyword") == "hybrid"


@pytest.mark.parametrize("value", ["true", 1, 0, None, [True], {"exact": True}])
def test_exact_that_is_not_a_bool_is_named(value: Any) -> None:
    assert _bad_fields({"query": "x", "exact": value}) == ["exact"]


def test_exact_defaults_to_false_and_takes_a_bool() -> None:
    assert _validate({"query": "x"}).exact is False
    assert _validate({"query": "x", "exact": True}).exact is True
