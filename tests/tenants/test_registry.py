"""The tenant registry in-process, on embedded Chroma (a2a.app.tenants): stacks built on
first use, and bounded however many tenant names calls make up."""

from __future__ import annotations

from typing import Any

import httpx

from a2a.app.tenants import Tenants
from a2a.embeddings import Embedder
from a2a.settings import Settings
from tests.conftest import rpc_call, served_app


async def answer(client: httpx.AsyncClient, method: str, params: dict[str, Any]) -> Any:
    body = (await client.post("/cstp", json=rpc_call(method, params))).json()
    assert "result" in body, body
    return body["result"]


async def test_made_up_tenant_names_never_grow_the_replica_past_its_bound(
    settings: Settings, embedder: Embedder
) -> None:
    async with served_app(settings, embedder) as (app, client):
        tenants: Tenants = app.state.cstp.tenants
        tenants.max_stacks = 5
        decision = {"id": "kept", "title": "Adopt Kafka for billing events"}
        await answer(client, "cstp.recordDecision", {"decision": decision, "tenant": "acme"})
        for n in range(30):
            found = await answer(client, "cstp.listDecisions", {"tenant": f"ghost-{n}"})
            assert found == {"decisions": [], "nextCursor": None}
        assert len(tenants) == 5
        # acme's stack was dropped with the others; its next call builds it again, whole.
        query = {"query": "kafka billing", "tenant": "acme"}
        hits = (await answer(client, "cstp.queryDecisions", query))["decisions"]
        assert [(d["id"], d["tenant"]) for d in hits] == [("kept", "acme")]
        listed = await answer(client, "cstp.listTenants", {})
        assert [t["name"] for t in listed["tenants"]] == ["acme"]
