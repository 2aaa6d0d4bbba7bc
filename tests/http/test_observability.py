"""GET /metrics, X-Request-ID, the per-call access log and /ready, against the live app."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from a2a.embeddings import Embedder
from a2a.settings import Settings, load_settings
from a2a.store.chroma import ChromaDecisionStore
from tests.conftest import SAMPLE, app_client, index_records, rpc_call, served_app
from tests.servers import cstp_server

TOKENS = "alice:alice-token-1"
ALICE = {"authorization": "Bearer alice-token-1"}
QUERY = rpc_call("cstp.queryDecisions", {"query": "database migration", "limit": 2})
HEX_ID = re.compile(r"[0-9a-f]{32}")


def app_settings(tmp_path: Path, **overrides: Any) -> Settings:
    return load_settings(data_dir=tmp_path / "data", agent_id="test-agent", **overrides)


async def scrape(client: httpx.AsyncClient, **kwargs: Any) -> dict[tuple[str, str], float]:
    """GET /metrics as (name, labels as `k=v,...` sorted) -> value."""
    response = await client.get("/metrics", **kwargs)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    return {
        (s.name, ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


async def test_metrics_need_no_token_and_count_calls_by_method_and_code(
    tmp_path: Path, embedder: Embedder
) -> None:
    settings = app_settings(tmp_path, auth_tokens=TOKENS)
    index_records(store_for(settings, embedder), embedder, SAMPLE)
    batch = [
        QUERY,
        rpc_call("cstp.queryDecisions", {"query": ""}, id=2),
        rpc_call("cstp.noSuchMethod", id=3),
        {"jsonrpc": "2.0", "method": "rpc.discover"},
    ]
    async with app_client(settings, embedder) as client:
        assert (await client.post("/cstp", json=batch, headers=ALICE)).status_code == 200
        assert (await client.post("/cstp", json=QUERY)).status_code == 401
        got = await scrape(client)
    assert got[("cstp_rpc_calls_total", "code=ok,method=cstp.queryDecisions")] == 1
    assert got[("cstp_rpc_calls_total", "code=-32602,method=cstp.queryDecisions")] == 1
    assert got[("cstp_rpc_calls_total", "code=-32601,method=other")] == 1
    assert got[("cstp_rpc_calls_total", "code=ok,method=rpc.discover")] == 1
    assert got[("cstp_rpc_calls_total", "code=-32001,method=other")] == 1
    assert got[("cstp_rpc_request_seconds_count", "")] == 2
    assert got[("cstp_rpc_requests_in_flight", "")] == 0
    # One query reached the model (MiniLM, batched), alone; the empty one was refused first.
    assert got[("cstp_query_embedding_batch_size_count", "")] == 1
    assert got[("cstp_query_embedding_batch_size_sum", "")] == 1
    assert got[("cstp_query_embedding_batch_size_bucket", "le=1.0")] == 1
    assert got[("cstp_decisions", "")] == len(SAMPLE)
    assert got[("cstp_store_up", "")] == 1


async def test_metrics_need_an_admin_token_when_metrics_open_is_false(
    tmp_path: Path, embedder: Embedder
) -> None:
    # Reported (issue 44, item 7): with metrics closed any token could read them, also one
    # refused (-32004) for tenant default.
    tokens = f"{TOKENS},root:root-token-1:admin,acme:acme-token-1:read+write:acme"
    settings = app_settings(tmp_path, auth_tokens=tokens, metrics_open=False)
    async with app_client(settings, embedder) as client:
        assert (await client.get("/metrics")).status_code == 401
        for token in ("alice-token-1", "acme-token-1"):
            refused = await client.get("/metrics", headers={"authorization": f"Bearer {token}"})
            assert refused.status_code == 403
            assert refused.json() == {
                "jsonrpc": "2.0",
                "id": None,
                "error": {
                    "code": -32004,
                    "message": "Forbidden",
                    "data": {"requiredScope": "admin"},
                },
            }
        root = {"authorization": "Bearer root-token-1"}
        assert ("cstp_store_up", "") in await scrape(client, headers=root)


async def test_the_decision_gauge_counts_every_tenant_as_one_figure(
    tmp_path: Path, embedder: Embedder
) -> None:
    # Reported (issue 44, item 7): `cstp_decisions` was tenant default's own count.
    async with app_client(app_settings(tmp_path), embedder) as client:
        for tenant, n in (("default", 1), ("acme", 2), ("globex", 3)):
            for i in range(n):
                decision = {"id": f"{tenant}-{i}", "title": f"Decision {i} of {tenant}"}
                params = {"decision": decision, "tenant": tenant}
                body = (
                    await client.post("/cstp", json=rpc_call("cstp.recordDecision", params))
                ).json()
                assert body["result"]["created"] is True
        got = await scrape(client)
    assert got[("cstp_decisions", "")] == 6
    assert [key for key in got if key[0] == "cstp_decisions"] == [("cstp_decisions", "")]


async def test_rate_limited_calls_are_counted_per_method(
    tmp_path: Path, embedder: Embedder
) -> None:
    settings = app_settings(
        tmp_path, auth_tokens=TOKENS, rate_limits="cstp.queryDecisions=2/minute"
    )
    async with app_client(settings, embedder) as client:
        codes = []
        for i in range(4):
            body = (await client.post("/cstp", json={**QUERY, "id": i}, headers=ALICE)).json()
            codes.append(body.get("error", {}).get("code"))
        got = await scrape(client)
    assert codes == [None, None, -32002, -32002]
    assert got[("cstp_rate_limited_total", "method=cstp.queryDecisions")] == 2
    assert got[("cstp_rpc_calls_total", "code=-32002,method=cstp.queryDecisions")] == 2


@pytest.mark.parametrize(
    ("path", "method", "headers", "content", "status"),
    [
        ("/cstp", "POST", ALICE, b'{"jsonrpc":"2.0","method":"rpc.discover","id":1}', 200),
        ("/cstp", "POST", {}, b"{}", 401),
        ("/cstp", "POST", ALICE, b"x" * 2048, 413),
        ("/cstp", "POST", ALICE, b'{"jsonrpc":"2.0","method":"rpc.discover"}', 204),
        ("/health", "GET", {}, b"", 200),
        ("/metrics", "GET", {}, b"", 200),
    ],
    ids=["rpc", "unauthorized", "too-large", "notification", "health", "metrics"],
)
async def test_every_response_echoes_a_valid_request_id(
    tmp_path: Path,
    embedder: Embedder,
    path: str,
    method: str,
    headers: dict[str, str],
    content: bytes,
    status: int,
) -> None:
    settings = app_settings(tmp_path, auth_tokens=TOKENS, max_body_bytes=1024)
    async with app_client(settings, embedder) as client:
        given = await client.request(
            method, path, content=content, headers={**headers, "x-request-id": "trace-42"}
        )
        made = await client.request(method, path, content=content, headers=headers)
    assert given.status_code == made.status_code == status
    assert given.headers["x-request-id"] == "trace-42"
    assert HEX_ID.fullmatch(made.headers["x-request-id"])


@pytest.mark.parametrize(
    "request_id", ["x" * 129, "caf\u00e9", "a\x01b"], ids=["too-long", "non-ascii", "control"]
)
async def test_unusable_request_id_is_replaced_by_a_generated_one(
    tmp_path: Path, embedder: Embedder, request_id: str
) -> None:
    async with app_client(app_settings(tmp_path), embedder) as client:
        response = await client.post(
            "/cstp", json=QUERY, headers=[("x-request-id", request_id.encode("utf-8"))]
        )
    assert HEX_ID.fullmatch(response.headers["x-request-id"])


async def test_each_call_of_a_batch_is_one_access_log_line(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    batch = [QUERY, rpc_call("cstp.noSuchMethod", id=3)]
    async with app_client(app_settings(tmp_path, auth_tokens=TOKENS), embedder) as client:
        with caplog.at_level(logging.INFO, logger="a2a.access"):
            await client.post("/cstp", json=batch, headers={**ALICE, "x-request-id": "b-1"})
            await client.post("/cstp", json=QUERY, headers={"x-request-id": "b-2"})
    lines = [
        (r.request_id, r.agent, r.method, r.code, r.status)  # type: ignore[attr-defined]
        for r in caplog.records
        if r.name == "a2a.access"
    ]
    assert sorted(lines, key=str) == sorted(
        [
            ("b-1", "alice", "cstp.queryDecisions", "ok", 200),
            ("b-1", "alice", "cstp.noSuchMethod", "-32601", 200),
            ("b-2", None, None, "-32001", 401),
        ],
        key=str,
    )
    assert all(r.ms >= 0 for r in caplog.records if r.name == "a2a.access")  # type: ignore[attr-defined]


async def test_ready_is_503_model_mismatch_and_logs_both_models(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    settings = app_settings(tmp_path)
    async with app_client(settings, embedder) as client:
        assert (await client.get("/ready")).status_code == 200
        # Another writer builds the collection with another model while the app runs.
        other = ChromaDecisionStore(
            data_dir=settings.data_dir / "chroma",
            collection=settings.collection,
            embedding_model="wordllama-l2-supercat-256",
        )
        other.upsert(SAMPLE[:1], [[1.0, 0.0, 0.0]])
        other.close()
        response = await client.get("/ready")
        health = await client.get("/health")
    assert response.status_code == 503
    body = response.json()
    # A short word on the wire (CONTRACT.md section Transport); the details in the log.
    assert body == {"status": "unavailable", "reason": "model mismatch"}
    assert "wordllama-l2-supercat-256" in caplog.text and embedder.name in caplog.text
    assert health.status_code == 200


def store_for(settings: Settings, embedder: Embedder) -> ChromaDecisionStore:
    return ChromaDecisionStore(
        data_dir=settings.data_dir / "chroma",
        collection=settings.collection,
        embedding_model=embedder.name,
    )


async def test_a_saturated_pool_makes_ready_503_saturated_and_metrics_keep_their_values(
    tmp_path: Path, embedder: Embedder
) -> None:
    """No worker thread free to ask Chroma: /ready says so (send traffic elsewhere) and
    /metrics still answers, Chroma not marked down (a break-it pass saw HTTP 500 on both)."""
    settings = app_settings(
        tmp_path, worker_threads=1, worker_queue=0, worker_queue_timeout_seconds=0.05
    )
    index_records(store_for(settings, embedder), embedder, SAMPLE)
    async with served_app(settings, embedder) as (app, client):
        assert (await client.get("/ready")).status_code == 200
        before = await scrape(client)
        release = threading.Event()
        blocker = asyncio.create_task(app.state.cstp.lanes.request.run(lambda: release.wait(10)))
        await asyncio.sleep(0.05)
        try:
            ready = await client.get("/ready")
            during = await scrape(client)
        finally:
            release.set()
            await blocker
        assert (await client.get("/ready")).status_code == 200
    assert ready.status_code == 503
    assert ready.json() == {"status": "unavailable", "reason": "saturated"}
    assert before[("cstp_decisions", "")] == during[("cstp_decisions", "")] == len(SAMPLE)
    assert during[("cstp_store_up", "")] == 1
    assert ("cstp_store_errors_total", "kind=timeout") not in during


@pytest.mark.slow
def test_a_real_server_with_metrics_closed_counts_every_tenant_for_admin_only(
    tmp_path: Path,
) -> None:
    # Issue 44, item 7, over a real `cstp serve`: a reader refused for tenant default, and a
    # writer of two tenants, both get 403; the admin token reads one figure for all tenants.
    tokens = (
        "root:root-token-1:admin:*,writer:writer-token-1:read+write:acme|globex,"
        "reader:reader-token-1:read:acme"
    )
    env = {
        "CSTP_DATA_DIR": str(tmp_path / "data"),
        "CSTP_EMBEDDING_MODEL": "wordllama-l2-supercat-256",
        "CSTP_AUTH_TOKENS": tokens,
        "CSTP_METRICS_OPEN": "false",
    }
    with cstp_server(env) as url:
        writer = {"authorization": "Bearer writer-token-1"}
        for tenant, n in (("acme", 2), ("globex", 3)):
            for i in range(n):
                params = {"decision": {"title": f"Decision {i} of {tenant}"}, "tenant": tenant}
                body = httpx.post(
                    f"{url}/cstp", json=rpc_call("cstp.recordDecision", params), headers=writer
                ).json()
                assert body["result"]["created"] is True, body
        assert httpx.get(f"{url}/metrics").status_code == 401
        for token in ("reader-token-1", "writer-token-1"):
            refused = httpx.get(f"{url}/metrics", headers={"authorization": f"Bearer {token}"})
            assert (refused.status_code, refused.json()["error"]["code"]) == (403, -32004)
        scraped = httpx.get(f"{url}/metrics", headers={"authorization": "Bearer root-token-1"})
    assert scraped.status_code == 200
    samples = [
        s
        for family in text_string_to_metric_families(scraped.text)
        for s in family.samples
        if s.name == "cstp_decisions"
    ]
    assert [(s.labels, s.value) for s in samples] == [({}, 5)]
