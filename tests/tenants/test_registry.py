"""The tenant registry in-process, on embedded Chroma (a2a.app.tenants): stacks built on
first use, and bounded however many tenant names calls make up."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a.app.tenants import Tenants
from a2a.embeddings import Embedder, load_embedder
from a2a.query.service import InlinePolicy
from a2a.settings import Settings, load_settings
from a2a.tenants.names import DEFAULT_TENANT
from tests.conftest import rpc_call, served_app
from tests.decisions.wire import FAST_MODEL


def _budgeted(tmp_path: Path, mib: int) -> Settings:
    """Settings of the fast model with CSTP_INDEX_MEMORY_MIB `mib`."""
    return load_settings(
        data_dir=tmp_path / "data",
        agent_id="test-agent",
        embedding_model=FAST_MODEL,
        index_memory_mib=mib,
    )


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


async def test_a_cursor_still_pages_after_its_tenants_stack_was_dropped_and_built_again(
    settings: Settings, embedder: Embedder
) -> None:
    # Reported (issue 44, item 7): without CSTP_CURSOR_SECRET each tenant's stack drew its
    # own cursor key, so a `*` token naming more tenants than the stack cap pushed acme's
    # stack out, its key was drawn again, and acme's valid cursor failed.
    assert settings.cursor_secret is None
    async with served_app(settings, embedder) as (app, client):
        tenants: Tenants = app.state.cstp.tenants
        tenants.max_stacks = 3
        cursors = {}
        for tenant in ("acme", "globex"):
            for n in range(2):
                decision = {"id": f"{tenant}-{n}", "title": f"Decision {n} of {tenant}"}
                await answer(
                    client, "cstp.recordDecision", {"decision": decision, "tenant": tenant}
                )
            page = await answer(client, "cstp.listDecisions", {"limit": 1, "tenant": tenant})
            cursors[tenant] = (page["decisions"][0]["id"], page["nextCursor"])
        built = {name: tenants.stack(name) for name in ("acme", "globex")}
        for n in range(10):
            await answer(client, "cstp.listDecisions", {"tenant": f"ghost-{n}"})
        assert len(tenants) == 3
        for tenant, (first, cursor) in cursors.items():
            assert tenants.stack(tenant) is not built[tenant]  # dropped, then built again
            params = {"limit": 1, "tenant": tenant, "cursor": cursor}
            rest = (await answer(client, "cstp.listDecisions", params))["decisions"]
            assert [d["id"] for d in rest] == [
                f"{tenant}-{n}" for n in range(2) if f"{tenant}-{n}" != first
            ]
        # Each tenant's key is its own still: acme's cursor does not page globex.
        moved = {"limit": 1, "tenant": "globex", "cursor": cursors["acme"][1]}
        body = (await client.post("/cstp", json=rpc_call("cstp.listDecisions", moved))).json()
        assert body["error"]["code"] == -32602


async def test_a_cursor_signed_with_the_shared_secret_is_still_bound_to_its_tenant(
    tmp_path: Path, embedder: Embedder
) -> None:
    # Reported: with CSTP_CURSOR_SECRET (set for every `--workers` process) acme's cursor
    # paged globex.
    settings = load_settings(
        data_dir=tmp_path / "data", agent_id="test-agent", cursor_secret="a-shared-secret-01"
    )
    async with served_app(settings, embedder) as (_, client):
        for tenant in ("acme", "globex"):
            for n in range(2):
                decision = {"id": f"{tenant}-{n}", "title": f"Decision {n} of {tenant}"}
                params = {"decision": decision, "tenant": tenant}
                await answer(client, "cstp.recordDecision", params)
        page = await answer(client, "cstp.listDecisions", {"limit": 1, "tenant": "acme"})
        cursor = page["nextCursor"]
        same = {"limit": 1, "tenant": "acme", "cursor": cursor}
        assert [d["id"] for d in (await answer(client, "cstp.listDecisions", same))["decisions"]]
        moved = {"limit": 1, "tenant": "globex", "cursor": cursor}
        body = (await client.post("/cstp", json=rpc_call("cstp.listDecisions", moved))).json()
        assert body["error"]["code"] == -32602
        assert [e["field"] for e in body["error"]["data"]["errors"]] == ["cursor"]


async def test_concurrent_calls_under_a_tiny_memory_budget_all_answer_in_full(
    tmp_path: Path,
) -> None:
    # Reported: 3-5 of 100 concurrent calls answered `decisions: 0` or `[]` while their
    # tenant's index was evicted under them (a call waiting for a load was not counted).
    settings = _budgeted(tmp_path, mib=1)
    tenants = [f"t{n}" for n in range(4)]
    async with served_app(settings, load_embedder(FAST_MODEL)) as (_, client):
        for tenant in tenants:  # each tenant's 60 in two JSON-RPC batches (at most 50 a batch)
            for half in (range(30), range(30, 60)):
                batch = [
                    rpc_call(
                        "cstp.recordDecision",
                        {
                            "decision": {
                                "id": f"{tenant}-{n}",
                                "title": f"Kafka billing decision {n}",
                            },
                            "tenant": tenant,
                        },
                        id=n,
                    )
                    for n in half
                ]
                answers = (await client.post("/cstp", json=batch)).json()
                assert [a["result"]["created"] for a in answers] == [True] * 30, answers

        async def stats(tenant: str) -> int:
            found = await answer(client, "cstp.getStats", {"tenant": tenant})
            return int(found["decisions"])

        async def query(tenant: str) -> int:
            params = {"query": "kafka billing", "tenant": tenant, "limit": 5}
            return len((await answer(client, "cstp.queryDecisions", params))["decisions"])

        calls = [f(t) for _ in range(10) for t in tenants for f in (stats, query)]
        got = await asyncio.gather(*calls)
    assert got == [n for _ in range(10) for _ in tenants for n in (60, 5)]


async def test_org_level_search_ranks_by_recency_when_asked(
    settings: Settings, embedder: Embedder
) -> None:
    # Reported: with tenant "*", recencyHalfLifeDays was ignored in the merged ranking.
    async with served_app(settings, embedder) as (_, client):
        old = {"id": "old", "title": "Kafka for billing events", "date": "2020-01-01T00:00:00Z"}
        new = {"id": "new", "title": "Kafka carries the billing event stream"}
        await answer(client, "cstp.recordDecision", {"decision": old, "tenant": "acme"})
        await answer(client, "cstp.recordDecision", {"decision": new, "tenant": "globex"})
        query = {"query": "Kafka for billing events", "tenant": "*"}
        plain = (await answer(client, "cstp.queryDecisions", query))["decisions"]
        assert [(d["tenant"], d["id"]) for d in plain] == [("acme", "old"), ("globex", "new")]
        recent = {**query, "recencyHalfLifeDays": 7}
        ranked = (await answer(client, "cstp.queryDecisions", recent))["decisions"]
        assert [(d["tenant"], d["id"]) for d in ranked] == [("globex", "new"), ("acme", "old")]


async def test_org_level_category_note_names_the_categories_of_every_granted_tenant(
    settings: Settings, embedder: Embedder
) -> None:
    # Reported: with tenant "*", the note was the first tenant's alone ("the store has no
    # categories yet" from an empty default tenant).
    async with served_app(settings, embedder) as (_, client):
        for tenant, category in (("acme", "architecture"), ("globex", "security")):
            decision = {"id": "d1", "title": "Kafka for billing", "category": category}
            await answer(client, "cstp.recordDecision", {"decision": decision, "tenant": tenant})
        query = {"query": "kafka", "tenant": "*", "filters": {"category": "Security"}}
        found = await answer(client, "cstp.queryDecisions", query)
        assert found["decisions"] == []
        assert '"security"' in found["note"] and "no categories yet" not in found["note"]
        present = {**query, "filters": {"category": "security"}}
        hits = await answer(client, "cstp.queryDecisions", present)
        assert [d["tenant"] for d in hits["decisions"]] == ["globex"] and "note" not in hits


ORG_WORDS = ("kafka", "billing", "events", "postgres", "cache", "queue", "search", "auth")


async def _record_org_corpus(client: httpx.AsyncClient, tenants: list[str]) -> None:
    """12 decisions per tenant, ids d0..d11, titles of three ORG_WORDS each."""
    for k, tenant in enumerate(tenants):
        for n in range(12):
            words = " ".join(ORG_WORDS[(n + k + j) % len(ORG_WORDS)] for j in range(3))
            decision = {
                "id": f"d{n}",
                "title": f"Use {words} for service {n}",
                "date": f"202{n % 5}-0{1 + k}-01T00:00:00Z",
                "reasons": [{"type": "analysis", "text": "measured"}],
            }
            await answer(client, "cstp.recordDecision", {"decision": decision, "tenant": tenant})


#: The tenants of `org_corpus`; `union_corpus` holds the first four.
ORG_TENANTS = [f"t{n}" for n in range(5)]


def _recorded(folder: Path, embedder: Embedder, tenants: list[str]) -> Path:
    """A data folder under `folder` holding the org corpus of `tenants`, recorded over the
    app as each test did before; tests serve copies of it."""
    data_dir = folder / "data"

    async def record() -> None:
        settings = load_settings(data_dir=data_dir, agent_id="test-agent")
        async with served_app(settings, embedder) as (_, client):
            await _record_org_corpus(client, tenants)

    asyncio.run(record())
    return data_dir


@pytest.fixture(scope="module")
def org_corpus(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    return _recorded(tmp_path_factory.mktemp("org-corpus"), embedder, ORG_TENANTS)


@pytest.fixture(scope="module")
def union_corpus(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    return _recorded(tmp_path_factory.mktemp("union-corpus"), embedder, ORG_TENANTS[:4])


async def _merged(
    client: httpx.AsyncClient, tenants: list[str], query: dict[str, Any]
) -> list[dict[str, Any]]:
    """Every tenant's own answer to `query`, merged as org-level search ranks (by score
    when the hits have one, else by distance; ties by tenant, then id)."""
    merged = []
    for tenant in tenants:
        own = await answer(client, "cstp.queryDecisions", {**query, "tenant": tenant})
        merged += own["decisions"]
    if merged and "score" in merged[0]:
        merged.sort(key=lambda d: (-d["score"], d["tenant"], d["id"]))
    else:
        merged.sort(key=lambda d: (d["distance"], d["tenant"], d["id"]))
    return merged


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"retrievalMode": "keyword"},
        {"retrievalMode": "hybrid", "explain": True},
        {"includeReasons": True, "maxDistance": 0.9},
        {"recencyHalfLifeDays": 30},
    ],
    ids=["semantic", "keyword", "hybrid-explain", "reasons-max-distance", "recency"],
)
async def test_org_level_search_is_every_tenants_own_answer_merged(
    settings: Settings, embedder: Embedder, org_corpus: Path, extra: dict[str, Any]
) -> None:
    # Org-level search reads what a hit shows only for hits that can still make the list,
    # in two worker calls side by side: the list must be that of every tenant's whole
    # answer, merged (module a2a.app.org), field for field.
    tenants = ORG_TENANTS
    shutil.copytree(org_corpus, settings.data_dir)
    async with served_app(settings, embedder) as (_, client):
        query = {"query": "kafka billing events", "limit": 7, **extra}
        org = await answer(client, "cstp.queryDecisions", {**query, "tenant": "*"})
        merged = await _merged(client, tenants, query)
    if "recencyHalfLifeDays" not in extra:
        assert org["decisions"] == merged[:7]
    else:  # ranked by recency score: the same hits as the tenants' own, as a set of 7
        assert all(d in merged for d in org["decisions"]) and len(org["decisions"]) == 7
    assert len({d["tenant"] for d in org["decisions"]}) > 1
    assert org["total"] == 7


async def test_a_tenant_created_after_the_first_listing_is_listed_and_searched(
    settings: Settings, embedder: Embedder
) -> None:
    # Embedded Chroma's collection names are listed once, then kept with those this
    # process creates (ChromaDecisionStore.collection_names): a new tenant is seen at once.
    async with served_app(settings, embedder) as (_, client):
        decision = {"id": "d1", "title": "Kafka for billing events"}
        await answer(client, "cstp.recordDecision", {"decision": decision, "tenant": "acme"})
        listed = await answer(client, "cstp.listTenants", {})
        assert [t["name"] for t in listed["tenants"]] == ["acme"]
        await answer(client, "cstp.recordDecision", {"decision": decision, "tenant": "globex"})
        listed = await answer(client, "cstp.listTenants", {})
        assert [(t["name"], t["decisions"]) for t in listed["tenants"]] == [
            ("acme", 1),
            ("globex", 1),
        ]
        query = {"query": "kafka billing", "tenant": "*"}
        found = (await answer(client, "cstp.queryDecisions", query))["decisions"]
        assert [(d["tenant"], d["id"]) for d in found] == [("acme", "d1"), ("globex", "d1")]


@pytest.mark.parametrize("where", ["event loop", "worker"])
async def test_org_level_semantic_search_walks_one_union_graph_and_answers_the_same(
    settings: Settings, embedder: Embedder, union_corpus: Path, where: str
) -> None:
    # Past UnionGraphs.min_rows (lowered here from 50,000), one graph over the granted
    # tenants proposes every tenant's candidates (a2a.index.union_graph): the list must be
    # every tenant's own answer merged, also for a decision written after the graph; on
    # the event loop (an idle pool: as a query of its work) or in a worker.
    tenants = ORG_TENANTS[:4]
    shutil.copytree(union_corpus, settings.data_dir)
    async with served_app(settings, embedder) as (app, client):
        registry: Tenants = app.state.cstp.tenants
        registry.unions.min_rows = 0
        if where == "worker":
            registry.stack(DEFAULT_TENANT).services.query.inline = InlinePolicy.never()
        queries = [
            {"query": "kafka billing events", "limit": 7},
            {"query": "postgres cache", "limit": 5, "includeReasons": True, "maxDistance": 0.9},
            {"query": "search queue", "filters": {"dateAfter": "2022-01-01"}},
        ]
        walked = await answer(client, "cstp.queryDecisions", {**queries[0], "tenant": "*"})
        await registry.unions.settled()  # the first call started the graph's build
        indexes = [await registry.stack(t).services.query.index() for t in tenants]
        assert registry.unions.get(tuple(tenants), indexes) is not None
        assert registry.unions.nbytes > 0
        for query in queries:
            org = await answer(client, "cstp.queryDecisions", {**query, "tenant": "*"})
            merged = await _merged(client, tenants, query)
            assert org["decisions"] == merged[: query.get("limit", 10)], query
            assert len({d["tenant"] for d in org["decisions"]}) > 1
        first = await answer(client, "cstp.queryDecisions", {**queries[0], "tenant": "*"})
        assert first["decisions"] == walked["decisions"]  # one walk or one per tenant
        late = {"id": "late", "title": "Kafka billing events"}
        await answer(client, "cstp.recordDecision", {"decision": late, "tenant": "t2"})
        org = await answer(client, "cstp.queryDecisions", {**queries[0], "tenant": "*"})
        assert (org["decisions"][0]["tenant"], org["decisions"][0]["id"]) == ("t2", "late")
        assert org["decisions"] == (await _merged(client, tenants, queries[0]))[:7]
        # How each org-level call searched: the first one, before the graph, each tenant.
        metrics = (await client.get("/metrics")).text
        assert 'cstp_org_searches_total{path="tenants"} 1.0' in metrics
        assert 'cstp_org_searches_total{path="union"} 5.0' in metrics


async def test_a_union_graph_is_dropped_with_a_tenant_evicted_past_the_budget(
    tmp_path: Path,
) -> None:
    # The budget counts the union graph; evicting one of its tenants drops it (a graph of
    # an index no longer loaded would never be walked again, only held).
    # Three tenants of 12 decisions (~1.25 MiB each) and their graph.
    settings = _budgeted(tmp_path, mib=4)
    tenants = ["t0", "t1", "t2"]
    async with served_app(settings, load_embedder(FAST_MODEL)) as (app, client):
        registry: Tenants = app.state.cstp.tenants
        registry.unions.min_rows = 0
        await _record_org_corpus(client, tenants)
        query = {"query": "kafka billing events", "limit": 7, "tenant": "*"}
        await answer(client, "cstp.queryDecisions", query)
        await registry.unions.settled()
        assert registry.unions.nbytes > 0 and registry.loaded()[-3:] == tenants
        decision = {"id": "d0", "title": "Kafka billing for a fourth team"}
        await answer(client, "cstp.recordDecision", {"decision": decision, "tenant": "t3"})
        assert "t0" not in registry.loaded()  # the least recently used, evicted
        assert registry.unions.nbytes == 0
        org = await answer(client, "cstp.queryDecisions", query)
        assert org["decisions"] == (await _merged(client, [*tenants, "t3"], query))[:7]


async def test_a_tenant_built_with_another_model_says_so_at_once_not_saturated(
    tmp_path: Path, embedder: Embedder
) -> None:
    """Reported: a tenant's collection built with another model (a move to a new model
    served without it) answered -32005 "retry" after the whole load wait, every time, and
    left "Task exception was never retrieved" in the log: it is -32003, not retryable, at
    the first call, as listTenants already said."""
    fast = _budgeted(tmp_path, 1024)
    async with served_app(fast, load_embedder(FAST_MODEL)) as (_, client):
        decision = {"id": "moved", "title": "Adopt Kafka for billing events"}
        await answer(client, "cstp.recordDecision", {"decision": decision, "tenant": "acme"})
    default_model = load_settings(data_dir=tmp_path / "data", agent_id="test-agent")
    async with served_app(default_model, embedder) as (_, client):
        for _ in range(2):
            call = rpc_call("cstp.queryDecisions", {"query": "kafka", "tenant": "acme"})
            error = (await client.post("/cstp", json=call)).json()["error"]
            assert (error["code"], error["data"]) == (-32003, {"retryable": False})
