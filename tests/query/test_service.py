"""QueryService on real embedded Chroma and the real embedding model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from a2a.embeddings import Embedder
from a2a.query.params import QueryDecisionsParams
from a2a.query.results import QueryDecisionsResult
from a2a.query.service import QueryService
from a2a.records import DecisionRecord
from a2a.rpc.protocol import to_wire
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore
from tests.conftest import D01_SUMMARY, EVERY_FILTER, index_records


@pytest.fixture
def service(sample_store: ChromaDecisionStore, embedder: Embedder) -> QueryService:
    return QueryService(AsyncStore(sample_store, timeout_seconds=10), embedder, agent_id="emerson")


async def _ids(service: QueryService, **params: Any) -> list[str]:
    result = await service.query_decisions(QueryDecisionsParams.model_validate(params))
    return [d.id for d in result.decisions]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"category": "security"}, {"d04"}),
        ({"minConfidence": 0.7}, {"d01", "d02", "d04"}),
        ({"maxConfidence": 0.4}, {"d03", "d05"}),
        ({"minConfidence": 0.4, "maxConfidence": 0.9}, {"d01", "d02", "d03"}),
        ({"minConfidence": 0.0}, {"d01", "d02", "d03", "d04", "d05"}),
        ({"stakes": ["low"]}, {"d03", "d05"}),
        ({"stakes": "critical"}, {"d04"}),
        ({"status": ["decided", "reviewed"]}, {"d01", "d02", "d04"}),
        ({"status": "pending"}, set()),
        # d03 is 2024-06-30T23:59:59Z, d04 2024-07-01T00:00:00Z: day bounds are inclusive.
        ({"dateBefore": "2024-06-30"}, {"d03"}),
        ({"dateAfter": "2024-07-01", "dateBefore": "2024-07-01"}, {"d04"}),
        # d05 was written 2025-12-31T23:30:00-08:00, which is 2026-01-01 in UTC.
        ({"dateAfter": "2026-01-01", "dateBefore": "2026-01-01"}, {"d05"}),
        ({"dateAfter": "2025-03-01T04:30:00Z", "dateBefore": "2025-03-01T04:30:00Z"}, {"d02"}),
        ({"dateAfter": "2025-03-01T10:00:01+05:30"}, {"d01", "d05"}),
        (
            EVERY_FILTER,
            {"d01"},
        ),
    ],
    ids=[
        "category",
        "min-confidence",
        "max-confidence",
        "confidence-window",
        "min-zero-not-null",
        "stakes-list",
        "stakes-bare",
        "status-list",
        "status-no-match",
        "date-before-day-end",
        "one-day-window",
        "offset-moves-day",
        "exact-instant",
        "after-with-offset",
        "all-filters",
    ],
)
async def test_filters_return_exactly_the_matching_records(
    service: QueryService, filters: dict[str, Any], expected: set[str]
) -> None:
    assert set(await _ids(service, query="decision", filters=filters, limit=50)) == expected


async def test_record_with_null_fields_never_matches_a_filter_on_them(
    service: QueryService,
) -> None:
    for filters in (
        {"minConfidence": 0},
        {"maxConfidence": 1},
        {"stakes": list(["low", "medium", "high", "critical"])},
        {"dateAfter": "1970-01-01"},
    ):
        assert "d06" not in await _ids(service, query="no metadata at all", filters=filters)
    assert "d06" in await _ids(service, query="no metadata at all")


async def test_closest_decision_comes_first_with_all_fields(service: QueryService) -> None:
    params = QueryDecisionsParams.model_validate(
        {"query": "switch database clusters without downtime", "includeReasons": True}
    )
    result = await service.query_decisions(params)
    top = to_wire(result.decisions[0])
    assert top == {**D01_SUMMARY, "distance": top["distance"], "reasons": ["pattern", "analysis"]}
    assert 0 <= top["distance"] < result.decisions[1].distance <= 2
    assert result.agent == "emerson"
    assert result.query == "switch database clusters without downtime"
    assert result.total == len(result.decisions) == 6
    assert isinstance(result.query_time_ms, int) and result.query_time_ms >= 0


async def test_reasons_absent_unless_asked_and_empty_list_when_none(
    service: QueryService,
) -> None:
    plain = await service.query_decisions(QueryDecisionsParams.model_validate({"query": "export"}))
    assert all("reasons" not in to_wire(d) for d in plain.decisions)
    asked = await service.query_decisions(
        QueryDecisionsParams.model_validate({"query": "export", "includeReasons": True})
    )
    reasons = {d.id: d.reasons for d in asked.decisions}
    assert reasons["d05"] == [] and reasons["d04"] == ["constraint"]


async def test_limit_above_number_of_matches_returns_all_matches(service: QueryService) -> None:
    ids = await _ids(service, query="anything", limit=50, filters={"stakes": "low"})
    assert sorted(ids) == ["d03", "d05"]


async def test_limit_cuts_the_list(service: QueryService) -> None:
    assert len(await _ids(service, query="anything", limit=2)) == 2


async def test_equal_distances_are_ordered_by_id(
    store: ChromaDecisionStore, embedder: Embedder
) -> None:
    twins = [
        DecisionRecord(id=i, title="Same words exactly", decision="Identical text.")
        for i in ("t3", "t1", "t2", "t0")
    ]
    index_records(store, embedder, twins)
    service = QueryService(AsyncStore(store, 10), embedder, agent_id="a")
    for _ in range(3):
        assert await _ids(service, query="same words", limit=3) == ["t0", "t1", "t2"]


async def test_empty_store_answers_no_decisions(
    store: ChromaDecisionStore, embedder: Embedder
) -> None:
    service = QueryService(AsyncStore(store, 10), embedder, agent_id="a")
    result = await service.query_decisions(
        QueryDecisionsParams.model_validate({"query": "anything"})
    )
    assert (result.decisions, result.total) == ([], 0)


@pytest.mark.parametrize("mode", ["semantic", "keyword", "hybrid"])
@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"includeReasons": True, "explain": True},
        {"filters": {"minConfidence": 0.5}, "maxDistance": 1.5},
        {"filters": {"status": "pending"}},
    ],
    ids=["plain", "reasons-explain", "filtered-max-distance", "no-match"],
)
async def test_the_wire_built_from_the_summaries_is_the_validated_models_wire(
    service: QueryService, mode: str, extra: dict[str, Any]
) -> None:
    """cstp.queryDecisions sends the wire of the service's result, built without validation:
    it must be byte for byte what the validated QueryDecisionsResult dumps (key order
    included)."""
    params = QueryDecisionsParams.model_validate(
        {"query": "database migration", "limit": 4, "retrievalMode": mode, **extra}
    )
    direct = to_wire(await service.query_decisions(params))
    through_models = to_wire(QueryDecisionsResult.model_validate(direct))
    assert json.dumps(direct) == json.dumps(through_models)
    assert direct["total"] == len(direct["decisions"])
    if extra.get("filters") == {"status": "pending"}:
        assert direct["decisions"] == []
    else:
        assert direct["decisions"], "a query that matches nothing proves nothing here"
        assert ("explain" in direct["decisions"][0]) == bool(extra.get("explain"))
        assert ("reasons" in direct["decisions"][0]) == bool(extra.get("includeReasons"))
        assert ("score" in direct["decisions"][0]) == (mode != "semantic")
