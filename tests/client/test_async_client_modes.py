"""AsyncCSTPClient over the real app (ASGI): retrieval modes and findSimilarDecisions."""

from __future__ import annotations

import httpx

from a2a.app.runtime import Runtime
from a2a.client import AsyncCSTPClient
from a2a.embeddings import Embedder
from a2a.http.app import create_app
from a2a.settings import Settings
from tests.conftest import SAMPLE, index_records


async def test_client_passes_retrieval_mode_explain_and_finds_similar(
    settings: Settings, embedder: Embedder
) -> None:
    runtime = Runtime.open(settings, role="test", embedder=embedder)
    index_records(runtime.store, embedder, SAMPLE)
    app = create_app(settings, runtime)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with AsyncCSTPClient("http://cstp.test", transport=transport) as client:
            keyword = await client.query_decisions(
                "Kafka brokers", retrieval_mode="keyword", explain=True, limit=1
            )
            (top,) = keyword.decisions
            assert top.id == "d02" and top.distance is not None and 0 <= top.distance <= 2
            assert top.score is not None and top.explain == {"bm25": top.score, "keywordRank": 1}
            similar = await client.find_similar_decisions(
                proposal={"tags": ["kafka", "events"], "category": "library-selection"}
            )
            assert similar.decisions[0].id == "d02"
