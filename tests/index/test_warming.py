"""While the index loads, /ready is 503 "warming" and queries wait, then answer correctly."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import httpx

from a2a.app.runtime import Runtime
from a2a.embeddings import Embedder
from a2a.http.app import create_app
from a2a.settings import Settings
from a2a.store.chroma import ChromaDecisionStore
from a2a.store.pages import StoredPage
from tests.conftest import SAMPLE, index_records, rpc_call


class GatedStore(ChromaDecisionStore):
    """The real embedded store, whose whole-store reads wait until `gate` is set."""

    gate = threading.Event()

    def pages(self, **kwargs: Any) -> Iterator[StoredPage]:
        if kwargs.get("ids") is None:
            self.gate.wait(timeout=60)
        return super().pages(**kwargs)


async def test_ready_says_warming_while_the_index_loads_and_queries_wait_for_it(
    settings: Settings, embedder: Embedder, store: ChromaDecisionStore
) -> None:
    index_records(store, embedder, SAMPLE)
    store.close()
    runtime = Runtime.open(settings, role="test", embedder=embedder)
    runtime.store = GatedStore(
        data_dir=settings.data_dir / "chroma",
        collection=settings.collection,
        embedding_model=embedder.name,
    )
    app = create_app(settings, runtime)
    query = rpc_call("cstp.queryDecisions", {"query": "database migration", "limit": 1})
    try:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                ready = await client.get("/ready")
                assert ready.status_code == 503
                assert ready.json() == {"status": "unavailable", "reason": "warming"}
                waiting = asyncio.create_task(client.post("/cstp", json=query))
                await asyncio.sleep(0.2)
                assert not waiting.done()
                GatedStore.gate.set()
                answer = (await waiting).json()
                assert answer["result"]["decisions"][0]["id"] == "d01"
                assert (await client.get("/ready")).status_code == 200
    finally:
        GatedStore.gate.set()
        runtime.close()
