"""cstp.findSimilarDecisions over the ASGI app on real embedded Chroma (seed 000's test)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from a2a.embeddings import Embedder
from a2a.records import DecisionRecord
from a2a.settings import Settings
from a2a.store.chroma import ChromaDecisionStore
from tests.conftest import app_client, index_records, rpc_call

#: The wording both decoys copy; the true match says the same thing in other words.
WORDING = "Blue-green cutover for the invoices Postgres migration with zero downtime"
STRUCTURE: dict[str, Any] = {
    "tags": ["postgres", "migration", "zero-downtime"],
    "category": "architecture",
    "stakes": "high",
}

#: Non-tautological by construction (seed 000): the true match shares the structure but not
#: the wording, the decoys share the wording but not the structure, the fillers sit between.
RECORDS = [
    DecisionRecord(
        id="probe",
        title=WORDING,
        context="Run both clusters side by side, then switch traffic.",
        **STRUCTURE,
    ),
    DecisionRecord(
        id="true-match",
        title="Replicate the ledger store onto fresh hardware, then flip reads across",
        context="Customers must never notice the move; rollback stays one switch away.",
        tags=[" Postgres", "MIGRATION", "zero-downtime"],
        category="architecture",
        stakes="high",
    ),
    DecisionRecord(
        id="decoy-a",
        title=WORDING,
        context="Run both clusters side by side, then switch traffic.",
        tags=["postgres", "css", "forms", "ui"],
        category="process",
        stakes="low",
    ),
    DecisionRecord(
        id="decoy-b",
        title=WORDING,
        context="Run both clusters side by side, then switch traffic.",
        tags=["frontend"],
        category="ui",
        stakes="high",
    ),
    DecisionRecord(
        id="filler-a",
        title="Shard the event store by tenant",
        tags=["postgres", "migration", "sharding"],
        category="architecture",
        stakes="medium",
    ),
    DecisionRecord(
        id="filler-b",
        title="Adopt Kafka for billing events",
        tags=["kafka"],
        category="architecture",
        stakes="high",
    ),
]
#: true-match 1.0, filler-a 0.55 (Jaccard 2/4), filler-b 0.40, decoy-b 0.15, decoy-a 0.10.
STRUCTURAL_ORDER = ["true-match", "filler-a", "filler-b", "decoy-b", "decoy-a"]


@pytest.fixture
async def client(
    settings: Settings, embedder: Embedder, store: ChromaDecisionStore
) -> AsyncIterator[httpx.AsyncClient]:
    index_records(store, embedder, RECORDS)
    store.close()  # the app opens its own client on the same folder
    async with app_client(settings, embedder) as c:
        yield c


async def call(client: httpx.AsyncClient, method: str, params: Any) -> dict[str, Any]:
    response = await client.post("/cstp", json=rpc_call(method, params))
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


async def similar(client: httpx.AsyncClient, params: Any) -> dict[str, Any]:
    body = await call(client, "cstp.findSimilarDecisions", params)
    assert "error" not in body, body
    result: dict[str, Any] = body["result"]
    return result


def ids(result: dict[str, Any]) -> list[str]:
    return [d["id"] for d in result["decisions"]]


async def test_text_search_is_fooled_by_the_decoys(client: httpx.AsyncClient) -> None:
    # The premise of the structural test: by wording, both decoys beat the true match.
    body = await call(client, "cstp.queryDecisions", {"query": WORDING, "limit": 50})
    ranked = ids(body["result"])
    assert max(ranked.index("decoy-a"), ranked.index("decoy-b")) < ranked.index("true-match")


async def test_structural_match_ranks_first_and_decoys_last(client: httpx.AsyncClient) -> None:
    result = await similar(client, {"proposal": STRUCTURE})
    assert ids(result) == ["probe", *STRUCTURAL_ORDER]
    assert [d["score"] for d in result["decisions"]] == [1.0, 1.0, 0.55, 0.4, 0.15, 0.1]


async def test_neighbours_of_a_stored_decision_rank_structure_over_wording(
    client: httpx.AsyncClient,
) -> None:
    result = await similar(client, {"decisionId": "probe"})
    assert ids(result) == STRUCTURAL_ORDER
    assert result["total"] == len(STRUCTURAL_ORDER)


async def test_result_has_the_query_result_shape_with_score_instead_of_distance(
    client: httpx.AsyncClient,
) -> None:
    result = await similar(client, {"decisionId": "probe", "limit": 1})
    assert set(result) == {"decisions", "total", "agent", "queryTimeMs"}
    assert (result["total"], result["agent"]) == (1, "test-agent")
    assert result["decisions"] == [
        {
            "id": "true-match",
            "title": "Replicate the ledger store onto fresh hardware, then flip reads across",
            "category": "architecture",
            "confidence": None,
            "stakes": "high",
            "status": None,
            "outcome": None,
            "date": None,
            "distance": None,
            "source": None,
            "recordedBy": None,
            "tenant": "default",
            "tags": [" Postgres", "MIGRATION", "zero-downtime"],
            "score": 1.0,
            "scoreComponents": {"tags": 1.0, "category": 1.0, "stakes": 1.0},
        }
    ]


async def test_filters_narrow_before_ranking(client: httpx.AsyncClient) -> None:
    result = await similar(
        client, {"decisionId": "probe", "filters": {"stakes": "low"}, "limit": 1}
    )
    assert ids(result) == ["decoy-a"]


@pytest.mark.parametrize(
    ("params", "fields"),
    [
        ({"decisionId": "no-such-decision"}, ["decisionId"]),
        ({}, ["params"]),
        ({"proposal": STRUCTURE, "decisionId": "probe"}, ["decisionId"]),
        ({"proposal": {"stakes": "huge"}, "limit": 51}, ["proposal.stakes", "limit"]),
        ({"decisionId": "probe", "filters": {"categry": "x"}}, ["filters.categry"]),
    ],
    ids=["unknown-decision", "no-probe", "two-probes", "bad-fields", "filter-typo"],
)
async def test_bad_params_are_invalid_params_naming_the_fields(
    client: httpx.AsyncClient, params: dict[str, Any], fields: list[str]
) -> None:
    error = (await call(client, "cstp.findSimilarDecisions", params))["error"]
    assert error["code"] == -32602
    assert [e["field"] for e in error["data"]["errors"]] == fields


async def test_method_is_listed_by_rpc_discover(client: httpx.AsyncClient) -> None:
    document = (await call(client, "rpc.discover", None))["result"]
    method = next(m for m in document["methods"] if m["name"] == "cstp.findSimilarDecisions")
    assert [p["name"] for p in method["params"]] == [
        "proposal",
        "decisionId",
        "filters",
        "limit",
        "peers",
        "tenant",
    ]
    assert -32602 in [e["code"] for e in method["errors"]]
