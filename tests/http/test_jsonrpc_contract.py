"""POST /cstp against CONTRACT.md's Transport and JSON-RPC 2.0 sections, over ASGI."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from a2a.embeddings import Embedder
from a2a.settings import Settings
from tests.conftest import app_client, rpc_call

QUERY = {"query": "database migration"}


@pytest.fixture
async def client(settings: Settings, embedder: Embedder) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(settings, embedder) as c:
        yield c


async def post(client: httpx.AsyncClient, body: Any) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return await client.post("/cstp", content=content, headers={"content-type": "application/json"})


@pytest.mark.parametrize(
    "body",
    [
        b"{bad json",
        b'{"jsonrpc": "2.0", "method": "x", "id": 1',
        b"",
        b"\xff\xfe{}",
        b'{"jsonrpc": "2.0", "method": "\xc3\x28", "id": 1}',
    ],
    ids=["garbage", "truncated", "empty-body", "invalid-utf8-bom", "invalid-utf8-inside"],
)
async def test_unparseable_body_is_parse_error_with_null_id(
    client: httpx.AsyncClient, body: bytes
) -> None:
    response = await post(client, body)
    assert response.status_code == 200
    assert response.json() == {"jsonrpc": "2.0", "id": None, "error": response.json()["error"]}
    assert response.json()["error"]["code"] == -32700


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "nope"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "\\ud800"}',
        b'[{"jsonrpc": "2.0", "id": 1, "method": "cstp.queryDecisions", '
        b'"params": {"query": "x", "filters": {"category": "\\udc00"}}}]',
        b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"\\ud83d": 1}}',
    ],
    ids=["in-id", "in-method", "in-batch-filter", "in-key"],
)
async def test_lone_surrogate_is_parse_error_not_a_server_fault(
    client: httpx.AsyncClient, body: bytes
) -> None:
    response = await post(client, body)
    assert response.status_code == 200
    assert (response.json()["id"], response.json()["error"]["code"]) == (None, -32700)


async def test_nesting_deeper_than_64_is_parse_error(client: httpx.AsyncClient) -> None:
    deep = b'{"jsonrpc": "2.0", "method": "x", "id": 1, "params": ' + b"[" * 64 + b"]" * 64 + b"}"
    assert (await post(client, deep)).json()["error"]["code"] == -32700


async def test_nesting_of_64_levels_is_parsed(client: httpx.AsyncClient) -> None:
    nested = b'{"jsonrpc": "2.0", "method": "x", "id": 7, "params": ' + b"[" * 63 + b"]" * 63 + b"}"
    response = (await post(client, nested)).json()
    assert response["error"]["code"] == -32601 and response["id"] == 7


async def test_extremely_deep_nesting_does_not_crash(client: httpx.AsyncClient) -> None:
    response = await post(client, b"[" * 200_000 + b"]" * 200_000)
    assert response.json()["error"]["code"] == -32700


@pytest.mark.parametrize(
    ("body", "id"),
    [
        (1, None),
        ("text", None),
        (None, None),
        (True, None),
        ({"jsonrpc": "1.0", "method": "x"}, None),
        ({"jsonrpc": "1.0", "method": "x", "id": 5}, 5),
        ({"jsonrpc": 2.0, "method": "cstp.queryDecisions", "id": 6}, 6),
        ({"method": "cstp.queryDecisions", "id": 7}, 7),
        ({"jsonrpc": "2.0", "id": 8}, 8),
        ({"jsonrpc": "2.0", "method": 42, "id": 9}, 9),
        ({"jsonrpc": "2.0", "method": "cstp.queryDecisions", "params": "q", "id": 10}, 10),
        ({"jsonrpc": "2.0", "method": "cstp.queryDecisions", "params": None, "id": 11}, 11),
        ({"jsonrpc": "2.0", "method": "cstp.queryDecisions", "params": 3}, None),
        ({"jsonrpc": "2.0", "method": "x", "id": True}, None),
        ({"jsonrpc": "2.0", "method": "x", "id": {"a": 1}}, None),
        ({"jsonrpc": "2.0", "method": "x", "id": [1]}, None),
    ],
    ids=[
        "number",
        "string",
        "null",
        "bool",
        "version-1.0-no-id",
        "version-1.0-with-id",
        "version-as-number",
        "version-missing",
        "method-missing",
        "method-not-string",
        "params-string",
        "params-null",
        "params-number-no-id",
        "id-bool",
        "id-object",
        "id-array",
    ],
)
async def test_invalid_request_object_gets_invalid_request(
    client: httpx.AsyncClient, body: Any, id: Any
) -> None:
    response = (await post(client, body)).json()
    assert response["error"]["code"] == -32600
    assert response["id"] == id


@pytest.mark.parametrize(
    "id",
    [0, "", -1, 1.5, "abc", None, 2**53 + 1, "ü"],
    ids=["zero", "empty-string", "negative", "fraction", "string", "null", "big-int", "unicode"],
)
async def test_ids_are_echoed_exactly(client: httpx.AsyncClient, id: Any) -> None:
    response = await post(client, rpc_call("cstp.queryDecisions", QUERY, id=id))
    body = response.json()
    assert body["id"] == id and type(body["id"]) is type(id)
    assert "result" in body


@pytest.mark.parametrize(
    "call",
    [
        {"jsonrpc": "2.0", "method": "cstp.queryDecisions", "params": QUERY},
        {"jsonrpc": "2.0", "method": "no.such.method"},
        {"jsonrpc": "2.0", "method": "cstp.queryDecisions", "params": {"limit": "x"}},
    ],
    ids=["valid", "unknown-method", "bad-params"],
)
async def test_notification_gets_204_and_no_body(
    client: httpx.AsyncClient, call: dict[str, Any]
) -> None:
    response = await post(client, call)
    assert (response.status_code, response.content) == (204, b"")


async def test_unknown_method_is_method_not_found_case_sensitive(
    client: httpx.AsyncClient,
) -> None:
    for name in ("cstp.querydecisions", "CSTP.queryDecisions", "nope"):
        body = (await post(client, rpc_call(name, QUERY, id="m"))).json()
        assert (body["id"], body["error"]["code"]) == ("m", -32601)


async def test_positional_params_are_invalid_params(client: httpx.AsyncClient) -> None:
    body = (await post(client, rpc_call("cstp.queryDecisions", ["database"]))).json()
    assert body["error"]["code"] == -32602
    assert body["error"]["data"] == {
        "errors": [{"field": "params", "reason": body["error"]["data"]["errors"][0]["reason"]}]
    }


async def test_invalid_params_list_every_field_without_library_internals(
    client: httpx.AsyncClient,
) -> None:
    params = {"query": "", "limit": True, "filters": {"minConfidence": "high", "typo": 1}}
    error = (await post(client, rpc_call("cstp.queryDecisions", params))).json()["error"]
    assert error["code"] == -32602
    fields = sorted(e["field"] for e in error["data"]["errors"])
    assert fields == ["filters.minConfidence", "filters.typo", "limit", "query"]
    text = json.dumps(error)
    assert "pydantic" not in text and "http" not in text


async def test_empty_batch_returns_single_invalid_request_error(
    client: httpx.AsyncClient,
) -> None:
    body = (await post(client, [])).json()
    assert isinstance(body, dict)
    assert (body["id"], body["error"]["code"]) == (None, -32600)


async def test_batch_answers_each_call_and_skips_notifications(
    client: httpx.AsyncClient,
) -> None:
    batch = [
        rpc_call("cstp.queryDecisions", QUERY, id="ok"),
        {"jsonrpc": "2.0", "method": "cstp.queryDecisions", "params": QUERY},
        1,
        {"jsonrpc": "1.0", "method": "x", "id": "old"},
        rpc_call("missing", id="nm"),
        rpc_call("cstp.queryDecisions", {"query": 3}, id="bad"),
    ]
    body = (await post(client, batch)).json()
    assert isinstance(body, list) and len(body) == 5
    by_id = {(r["id"], r.get("error", {}).get("code")) for r in body}
    assert by_id == {("ok", None), (None, -32600), ("old", -32600), ("nm", -32601), ("bad", -32602)}


async def test_batch_of_only_notifications_gets_204(client: httpx.AsyncClient) -> None:
    note = {"jsonrpc": "2.0", "method": "cstp.queryDecisions", "params": QUERY}
    response = await post(client, [note, note])
    assert (response.status_code, response.content) == (204, b"")


async def test_batch_over_50_calls_is_one_invalid_request(client: httpx.AsyncClient) -> None:
    body = (await post(client, [rpc_call("x", id=i) for i in range(51)])).json()
    assert isinstance(body, dict) and body["error"]["code"] == -32600


async def test_batch_of_50_calls_is_answered_in_full(client: httpx.AsyncClient) -> None:
    body = (await post(client, [rpc_call("x", id=i) for i in range(50)])).json()
    assert sorted(r["id"] for r in body) == list(range(50))


async def test_body_over_cap_is_413_before_parsing(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    response = await post(client, b"{" * (settings.max_body_bytes + 1))
    assert response.status_code == 413
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": response.json()["error"]["message"],
            "data": {"maxBytes": 1_048_576},
        },
    }


async def test_chunked_body_over_cap_is_413(client: httpx.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(20):
            yield b" " * 100_000

    response = await client.post("/cstp", content=chunks())
    assert response.status_code == 413


async def test_rpc_discover_returns_openrpc_document(client: httpx.AsyncClient) -> None:
    result = (await post(client, rpc_call("rpc.discover"))).json()["result"]
    assert result["openrpc"].startswith("1.")
    (method,) = [m for m in result["methods"] if m["name"] == "cstp.queryDecisions"]
    params = {p["name"]: p["required"] for p in method["params"]}
    assert params == {
        "query": True,
        "filters": False,
        "limit": False,
        "includeReasons": False,
        "retrievalMode": False,
        "maxDistance": False,
        "explain": False,
        "exact": False,
        "recencyHalfLifeDays": False,
        "peers": False,
        "tenant": False,
    }
    assert {e["code"] for e in method["errors"]} == {-32602, -32001, -32002, -32003, -32004, -32005}


async def test_query_result_has_contract_shape_on_empty_store(
    client: httpx.AsyncClient,
) -> None:
    result = (await post(client, rpc_call("cstp.queryDecisions", QUERY))).json()["result"]
    assert result["decisions"] == [] and result["total"] == 0
    assert (result["query"], result["agent"]) == ("database migration", "test-agent")
    assert isinstance(result["queryTimeMs"], int)


async def test_health_ready_and_agent_card(client: httpx.AsyncClient) -> None:
    assert (await client.get("/health")).json() == {"status": "ok"}
    ready = await client.get("/ready")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    for path in ("/.well-known/agent-card.json", "/.well-known/agent.json"):
        card = (await client.get(path)).json()
        url = card.get("url") or card["supportedInterfaces"][0]["url"]
        assert url == "http://cstp.test/cstp"
        skills = {s["id"] for s in card["skills"]}
        assert {"cstp.queryDecisions", "cstp.searchDocs", "rpc.discover"} <= skills


async def test_unknown_method_name_is_echoed_only_in_part(client: httpx.AsyncClient) -> None:
    body = (await post(client, rpc_call("m" * 10_000, id=1))).json()
    assert body["error"]["code"] == -32601 and body["error"]["data"]["method"] == "m" * 100


async def test_get_on_mcp_is_405_in_stateless_mode(client: httpx.AsyncClient) -> None:
    response = await client.get("/mcp", headers={"accept": "text/event-stream"})
    assert response.status_code == 405
