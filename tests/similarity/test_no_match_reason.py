"""findSimilarDecisions says why a probe without tags, category or stakes finds nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from a2a.embeddings import Embedder
from a2a.records import DecisionRecord
from a2a.settings import Settings
from a2a.similarity.results import NO_STRUCTURE, no_match_reason
from a2a.similarity.scoring import Profile
from a2a.store.chroma import ChromaDecisionStore
from tests.conftest import app_client, index_records, rpc_call


@pytest.mark.parametrize(
    ("probe", "reason"),
    [
        (Profile(), NO_STRUCTURE),
        (Profile(tags=frozenset({"kafka"})), None),
        (Profile(category="architecture"), None),
        (Profile(stakes="high"), None),
    ],
    ids=["nothing", "tags", "category", "stakes"],
)
def test_reason_only_when_the_probe_has_no_structured_field(
    probe: Profile, reason: str | None
) -> None:
    assert no_match_reason(probe) == reason


RECORDS = [
    # Like an ADR: a title and text, no tags, category or stakes.
    DecisionRecord(id="adr-like", title="Use Kubernetes for every service"),
    DecisionRecord(id="tagged", title="Adopt Kafka", tags=["kafka"], category="architecture"),
    DecisionRecord(id="other", title="Adopt Pulsar", tags=["kafka"], category="architecture"),
]


@pytest.fixture
async def client(
    settings: Settings, embedder: Embedder, store: ChromaDecisionStore
) -> AsyncIterator[httpx.AsyncClient]:
    index_records(store, embedder, RECORDS)
    store.close()  # the app opens its own client on the same folder
    async with app_client(settings, embedder) as c:
        yield c


async def similar(client: httpx.AsyncClient, params: dict[str, Any]) -> dict[str, Any]:
    response = await client.post("/cstp", json=rpc_call("cstp.findSimilarDecisions", params))
    body = response.json()
    assert "result" in body, body
    result: dict[str, Any] = body["result"]
    return result


async def test_stored_record_without_structure_returns_the_reason_and_no_decisions(
    client: httpx.AsyncClient,
) -> None:
    result = await similar(client, {"decisionId": "adr-like"})
    assert result["reason"] == "the probe has no tags, category or stakes"
    assert (result["decisions"], result["total"]) == ([], 0)


async def test_structured_probe_has_no_reason_field(client: httpx.AsyncClient) -> None:
    result = await similar(client, {"decisionId": "tagged"})
    assert "reason" not in result
    assert [d["id"] for d in result["decisions"]] == ["other"]
