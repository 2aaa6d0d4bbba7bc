"""MCP at /mcp: the method table as tools, called with the SDK's own streamable HTTP client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import jsonschema
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from a2a.app.runtime import Runtime
from a2a.embeddings import Embedder
from a2a.http.app import create_app
from a2a.settings import Settings, load_settings

SCHEMAS = json.loads((Path(__file__).parents[1] / "docs/data/seed_003_schemas.json").read_text())
TOKEN = "planner-token-0123456789"


@asynccontextmanager
async def mcp_session(
    settings: Settings, embedder: Embedder, token: str | None = None
) -> AsyncIterator[ClientSession]:
    """An initialized SDK ClientSession talking to the app's /mcp over ASGI."""
    runtime = Runtime.open(settings, role="test", embedder=embedder)
    app = create_app(settings, runtime)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        async with app.router.lifespan_context(app):
            transport = httpx2.ASGITransport(app=app)
            async with (
                httpx2.AsyncClient(transport=transport, base_url="http://t", headers=headers) as c,
                streamable_http_client("http://t/mcp", http_client=c) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                yield session
    finally:
        runtime.close()


async def test_tools_are_the_cstp_methods_with_input_and_output_schemas(
    settings: Settings, embedder: Embedder
) -> None:
    async with mcp_session(settings, embedder) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert {"cstp.queryDecisions", "cstp.searchDocs"} <= set(tools)
    assert not any(name.startswith("rpc.") for name in tools)
    search = tools["cstp.searchDocs"]
    assert search.input_schema["required"] == ["query"]
    assert search.output_schema is not None
    assert set(search.output_schema["required"]) == set(SCHEMAS["output"]["required"])
    assert tools["cstp.queryDecisions"].input_schema["additionalProperties"] is False


async def test_tool_call_round_trip_returns_structured_content(
    settings: Settings, embedder: Embedder
) -> None:
    async with mcp_session(settings, embedder) as session:
        docs = await session.call_tool("cstp.searchDocs", {"query": "MCP calls", "max_sections": 2})
        query = await session.call_tool("cstp.queryDecisions", {"query": "kafka", "limit": 3})
    assert docs.is_error is False
    structured: Any = docs.structured_content
    jsonschema.validate(structured, SCHEMAS["output"])
    assert structured["sections"][0]["heading"] == "MCP calls"
    assert json.loads(docs.content[0].text) == structured  # type: ignore[union-attr]
    assert query.is_error is False
    assert query.structured_content is not None
    assert (query.structured_content["total"], query.structured_content["agent"]) == (
        0,
        "test-agent",
    )


@pytest.mark.parametrize(
    ("name", "arguments", "code"),
    [
        ("cstp.queryDecisions", {"query": "x", "limit": 0}, -32602),
        ("cstp.searchDocs", {"query": "x", "bogus": 1}, -32602),
        ("cstp.nope", {"query": "x"}, -32601),
        ("rpc.discover", {}, -32601),
    ],
    ids=["bad-limit", "unknown-key", "unknown-tool", "rpc-is-not-a-tool"],
)
async def test_failed_calls_are_error_results_with_the_json_rpc_code(
    settings: Settings, embedder: Embedder, name: str, arguments: dict[str, Any], code: int
) -> None:
    async with mcp_session(settings, embedder) as session:
        result = await session.call_tool(name, arguments)
    assert result.is_error is True
    assert result.structured_content is not None
    assert result.structured_content["code"] == code


def _auth_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **env: str) -> Settings:
    monkeypatch.setenv("CSTP_AUTH_TOKENS", f"planner:{TOKEN}")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return load_settings(data_dir=tmp_path / "data", agent_id="test-agent")


async def test_mcp_needs_a_bearer_token_when_auth_is_on(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _auth_settings(tmp_path, monkeypatch)
    runtime = Runtime.open(settings, role="test", embedder=embedder)
    app = create_app(settings, runtime)
    init = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    try:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                response = await client.post("/mcp", json=init)
    finally:
        runtime.close()
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.json()["error"]["code"] == -32001
    async with mcp_session(settings, embedder, TOKEN) as session:
        assert (await session.call_tool("cstp.searchDocs", {"query": "x"})).is_error is False


async def test_tool_calls_count_against_the_agents_rate_limit(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _auth_settings(tmp_path, monkeypatch, CSTP_RATE_LIMITS="cstp.searchDocs=2/minute")
    async with mcp_session(settings, embedder, TOKEN) as session:
        results = [await session.call_tool("cstp.searchDocs", {"query": "x"}) for _ in range(3)]
    assert [r.is_error for r in results] == [False, False, True]
    limited = results[2].structured_content
    assert limited is not None and limited["code"] == -32002
    assert 1 <= limited["data"]["retryAfter"] <= 60


async def test_the_search_tools_take_peers_with_a_description_an_agent_reads(
    settings: Settings, embedder: Embedder
) -> None:
    """CONTRACT.md, Federation: the description sits on the property itself, where MCP
    clients read it, not inside its `anyOf`."""
    async with mcp_session(settings, embedder) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    for name in ("cstp.queryDecisions", "cstp.findSimilarDecisions"):
        peers = tools[name].input_schema["properties"]["peers"]
        assert "cstp.listPeers" in peers["description"] and {"const": "*"} in peers["anyOf"]
        assert "`peers`" in (tools[name].description or "")
    peer = tools["cstp.getDecision"].input_schema["properties"]["peer"]
    assert "`peers`" in peer["description"]
    listed = tools["cstp.listPeers"]
    assert (listed.description or "").startswith("List the peer services")
    assert listed.output_schema is not None and listed.output_schema["required"] == ["peers"]
