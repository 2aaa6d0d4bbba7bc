"""The server's default retrieval mode and maxDistance, through the app over ASGI."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a.embeddings import Embedder
from a2a.errors import SettingsError
from a2a.settings import load_settings
from a2a.store.chroma import ChromaDecisionStore
from tests.conftest import SAMPLE, app_client, index_records, rpc_call

#: Words from every sample record's title, so that BM25 matches each of them.
EVERY_TITLE = " ".join(record.title for record in SAMPLE)


async def _client(
    tmp_path: Path, embedder: Embedder, **overrides: Any
) -> AsyncIterator[httpx.AsyncClient]:
    settings = load_settings(data_dir=tmp_path / "data", agent_id="t", **overrides)
    store = ChromaDecisionStore(
        data_dir=settings.data_dir / "chroma",
        collection=settings.collection,
        embedding_model=embedder.name,
    )
    index_records(store, embedder, SAMPLE)
    store.close()  # the app opens its own client on the same folder
    async with app_client(settings, embedder) as client:
        yield client


@pytest.fixture
async def keyword_default(tmp_path: Path, embedder: Embedder) -> AsyncIterator[httpx.AsyncClient]:
    async for client in _client(tmp_path, embedder, default_retrieval_mode="keyword"):
        yield client


async def _decisions(client: httpx.AsyncClient, params: dict[str, Any]) -> list[dict[str, Any]]:
    body = (await client.post("/cstp", json=rpc_call("cstp.queryDecisions", params))).json()
    assert "result" in body, body
    decisions: list[dict[str, Any]] = body["result"]["decisions"]
    return decisions


async def test_query_without_retrieval_mode_uses_the_server_default(
    keyword_default: httpx.AsyncClient,
) -> None:
    found = await _decisions(keyword_default, {"query": "Kafka event bus"})
    # Keyword (BM25) results carry a score; semantic ones do not.
    assert found and all("score" in d for d in found)


async def test_retrieval_mode_in_the_call_beats_the_server_default(
    keyword_default: httpx.AsyncClient,
) -> None:
    found = await _decisions(keyword_default, {"query": "Kafka", "retrievalMode": "semantic"})
    assert len(found) == len(SAMPLE) and all("score" not in d for d in found)


@pytest.mark.parametrize("mode", ["semantic", "keyword", "hybrid"])
async def test_max_distance_drops_farther_results_in_every_mode(
    keyword_default: httpx.AsyncClient, mode: str
) -> None:
    params = {"query": EVERY_TITLE, "retrievalMode": mode, "limit": 50}
    every = await _decisions(keyword_default, params)
    # CONTRACT: every result carries its cosine distance, keyword hits included.
    distances = sorted(d["distance"] for d in every)
    cut = distances[len(distances) // 2]
    kept = await _decisions(keyword_default, {**params, "maxDistance": cut})
    assert {d["id"] for d in kept} == {d["id"] for d in every if d["distance"] <= cut}
    assert 0 < len(kept) < len(every)


@pytest.mark.parametrize(
    ("name", "value"),
    [("CSTP_DEFAULT_RETRIEVAL_MODE", "fuzzy"), ("CSTP_FUSION_METHOD", "borda")],
    ids=["mode", "fusion"],
)
def test_unknown_mode_or_fusion_setting_stops_start_up_naming_it(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError, match=name):
        load_settings()
