"""SimilarityService on real embedded Chroma: filters in `where`, neighbours, ties, limit."""

from __future__ import annotations

from typing import Any

import pytest

from a2a.embeddings import Embedder
from a2a.errors import InvalidParams
from a2a.records import DecisionRecord
from a2a.settings import DEFAULT_WEIGHTS, SimilarityWeights
from a2a.similarity.params import FindSimilarDecisionsParams
from a2a.similarity.service import SimilarityService
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore
from tests.conftest import D01_SUMMARY, SAMPLE, index_records

#: Touches every tag in SAMPLE, plus stakes `low` (d05 has no tags): d01-d05 score above 0.
EVERY_TAG = {
    "tags": ["postgres", "migration", "kafka", "events", "flags", "kms", "multi-tenant"],
    "stakes": "low",
}


def _service(
    store: ChromaDecisionStore, weights: SimilarityWeights = DEFAULT_WEIGHTS
) -> SimilarityService:
    return SimilarityService(AsyncStore(store, timeout_seconds=10), weights, agent_id="emerson")


@pytest.fixture
def service(sample_store: ChromaDecisionStore) -> SimilarityService:
    return _service(sample_store)


async def _ids(service: SimilarityService, **params: Any) -> list[str]:
    result = await service.find_similar_decisions(FindSimilarDecisionsParams.model_validate(params))
    return [d.id for d in result.decisions]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (None, {"d01", "d02", "d03", "d04", "d05"}),
        ({"category": "security"}, {"d04"}),
        ({"minConfidence": 0.7}, {"d01", "d02", "d04"}),
        ({"maxConfidence": 0.4}, {"d03", "d05"}),
        ({"stakes": ["low"]}, {"d03", "d05"}),
        ({"stakes": "critical"}, {"d04"}),
        ({"status": ["decided", "reviewed"]}, {"d01", "d02", "d04"}),
        ({"status": "pending"}, set()),
        ({"dateBefore": "2024-06-30"}, {"d03"}),
        ({"dateAfter": "2026-01-01", "dateBefore": "2026-01-01"}, {"d05"}),
        ({"category": "architecture", "stakes": ["medium", "high"]}, {"d01"}),
    ],
    ids=[
        "no-filter",
        "category",
        "min-confidence",
        "max-confidence",
        "stakes-list",
        "stakes-bare",
        "status-list",
        "status-no-match",
        "date-before-day-end",
        "offset-moves-day",
        "combined",
    ],
)
async def test_filters_return_exactly_the_matching_records(
    service: SimilarityService, filters: dict[str, Any] | None, expected: set[str]
) -> None:
    ids = await _ids(service, proposal=EVERY_TAG, filters=filters, limit=50)
    assert set(ids) == expected


async def test_filters_apply_before_the_limit_cuts(service: SimilarityService) -> None:
    # d04 scores lowest of all here; were filters applied after ranking, limit 1 would lose it.
    proposal = {"tags": ["postgres", "migration", "kms"], "category": "architecture"}
    assert await _ids(service, proposal=proposal, limit=1) == ["d01"]
    assert await _ids(service, proposal=proposal, limit=1, filters={"stakes": "critical"}) == [
        "d04"
    ]


async def test_top_decision_carries_score_components_tags_and_null_distance(
    service: SimilarityService,
) -> None:
    proposal = {"tags": [" Postgres", "MIGRATION", "rollback"], "category": "architecture"}
    result = await service.find_similar_decisions(
        FindSimilarDecisionsParams.model_validate({"proposal": proposal})
    )
    assert [d.model_dump(by_alias=True) for d in result.decisions] == [
        {
            **D01_SUMMARY,
            "distance": None,
            "tags": ["postgres", "migration"],
            # Jaccard 2/3 * 0.60 + category 0.25; stakes absent from the proposal scores 0.
            "score": 0.65,
            "scoreComponents": {"tags": 0.666667, "category": 1.0, "stakes": 0.0},
        }
    ]
    assert (result.total, result.agent) == (1, "emerson")
    assert isinstance(result.query_time_ms, int) and result.query_time_ms >= 0


async def test_records_scoring_zero_are_left_out(service: SimilarityService) -> None:
    assert await _ids(service, proposal={"category": "no-such-category"}) == []
    # d06 lacks every field: absent never matches absent.
    assert "d06" not in await _ids(service, proposal=EVERY_TAG, limit=50)


async def test_decision_neighbours_exclude_the_decision_itself(
    service: SimilarityService,
) -> None:
    # d03: tags [flags], trade-off, low. Only d05 shares anything (stakes low).
    assert await _ids(service, decisionId="d03") == ["d05"]
    assert await _ids(service, decisionId="d05") == ["d03"]


async def test_decision_neighbours_use_the_decision_even_when_filters_exclude_it(
    service: SimilarityService,
) -> None:
    assert await _ids(service, decisionId="d03", filters={"status": "deprecated"}) == ["d05"]
    assert await _ids(service, decisionId="d03", filters={"status": "decided"}) == []


async def test_decision_without_structure_has_no_neighbours(service: SimilarityService) -> None:
    assert await _ids(service, decisionId="d06") == []


@pytest.mark.parametrize("records", [SAMPLE, []], ids=["stocked-store", "empty-store"])
async def test_unknown_decision_id_is_invalid_params_naming_it(
    store: ChromaDecisionStore, embedder: Embedder, records: list[DecisionRecord]
) -> None:
    index_records(store, embedder, records)
    with pytest.raises(InvalidParams) as caught:
        await _ids(_service(store), decisionId="d99")
    assert [e.field for e in caught.value.errors] == ["decisionId"]


async def test_empty_store_answers_no_decisions(store: ChromaDecisionStore) -> None:
    assert await _ids(_service(store), proposal=EVERY_TAG) == []


async def test_equal_scores_are_ordered_by_id_every_time(
    store: ChromaDecisionStore, embedder: Embedder
) -> None:
    twins = [
        DecisionRecord(id=i, title=f"Twin {i}", tags=["cache"], stakes="low")
        for i in ("t3", "t1", "t4", "t0", "t2")
    ]
    index_records(store, embedder, twins)
    service = _service(store)
    for _ in range(3):
        assert await _ids(service, proposal={"tags": ["cache"]}, limit=3) == ["t0", "t1", "t2"]
        assert await _ids(service, decisionId="t2", limit=3) == ["t0", "t1", "t3"]


async def test_limit_cuts_the_list(service: SimilarityService) -> None:
    full = await _ids(service, proposal=EVERY_TAG, limit=50)
    assert len(full) == 5
    assert await _ids(service, proposal=EVERY_TAG, limit=2) == full[:2]


async def test_configured_weights_change_the_score(
    store: ChromaDecisionStore, embedder: Embedder
) -> None:
    index_records(store, embedder, SAMPLE)
    stakes_only = _service(store, SimilarityWeights(tags=0.0, category=0.0, stakes=1.0))
    tags_only = _service(store, SimilarityWeights(tags=1.0, category=0.0, stakes=0.0))
    proposal = {"tags": ["flags"], "stakes": "low"}
    assert await _ids(stakes_only, proposal=proposal) == ["d03", "d05"]
    assert await _ids(tags_only, proposal=proposal) == ["d03"]
