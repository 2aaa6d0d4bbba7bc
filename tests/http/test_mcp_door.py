"""/mcp as a thin door onto the pipeline: our error objects, scopes, metrics and the log."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a.embeddings import Embedder
from a2a.settings import load_settings
from tests.http.live import live_server
from tests.mcp_session import mcp_session
from tests.rpc.test_pipeline import WRITE

MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
TOKENS = "reader:reader-token-1,writer:writer-token-2:read+write"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("[]", -32600),
        ('[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]', -32600),
        ('{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}', -32600),
        ('{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": NaN}', -32700),
        ("{", -32700),
    ],
    ids=["empty-batch", "batch", "wrong-version", "nan", "truncated"],
)
def test_malformed_mcp_messages_get_our_error_objects(
    tmp_path: Path, embedder: Embedder, body: str, code: int
) -> None:
    settings = load_settings(data_dir=tmp_path / "data")
    with live_server(settings, embedder) as url:
        response = httpx.post(f"{url}/mcp", content=body, headers=MCP_HEADERS)
    assert response.status_code == 400
    reply = response.json()
    assert reply["jsonrpc"] == "2.0" and reply["error"]["code"] == code
    assert "pydantic" not in response.text and "http" not in response.text


async def _tool(url: str, token: str, name: str, arguments: dict[str, Any]) -> Any:
    async with mcp_session(url, token) as session:
        return await session.call_tool(name, arguments)


async def test_mcp_tool_calls_enforce_scopes_and_reach_metrics_and_the_access_log(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    settings = load_settings(data_dir=tmp_path / "data", auth_tokens=TOKENS)
    with (
        caplog.at_level(logging.INFO, "a2a.access"),
        live_server(settings, embedder, [WRITE]) as url,
    ):
        refused = await _tool(url, "reader-token-1", "test.recordNote", {"text": "x"})
        written = await _tool(url, "writer-token-2", "test.recordNote", {"text": "x"})
        metrics = httpx.get(f"{url}/metrics", headers={"Authorization": "Bearer writer-token-2"})
    assert refused.is_error and refused.structured_content["code"] == -32004
    assert refused.structured_content["data"] == {"requiredScope": "write"}
    assert not written.is_error and written.structured_content["by"] == "writer"
    assert 'cstp_rpc_calls_total{code="-32004",method="test.recordNote"} 1.0' in metrics.text
    assert 'cstp_rpc_calls_total{code="ok",method="test.recordNote"} 1.0' in metrics.text
    lines = [r.__dict__ for r in caplog.records if r.name == "a2a.access"]
    mcp = [(line["agent"], line["code"]) for line in lines if line["door"] == "mcp"]
    assert mcp == [("reader", "-32004"), ("writer", "ok")]


def test_every_mcp_request_counts_against_the_callers_limits(
    tmp_path: Path, embedder: Embedder
) -> None:
    """Issue 25 edge 4: tools/list, ping and initialize bypassed the limits (1,998 tools/list
    replies in 5 s under 5/minute). Now the sixth request of a minute gets -32002."""
    settings = load_settings(
        data_dir=tmp_path / "data", auth_tokens=TOKENS, rate_limit_default="5/minute"
    )
    headers = {**MCP_HEADERS, "Authorization": "Bearer reader-token-1"}
    bodies = [
        {"jsonrpc": "2.0", "id": n, "method": method, "params": {}}
        for n, method in enumerate(["tools/list", "ping", "tools/list", "ping", "tools/list"])
    ]
    with live_server(settings, embedder) as url, httpx.Client(headers=headers) as http:
        answers = [http.post(f"{url}/mcp", json=body) for body in bodies]
        sixth = http.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
    assert [a.status_code for a in answers] == [200] * 5
    assert all("result" in a.json() for a in answers), [a.text for a in answers]
    assert [a.headers["X-RateLimit-Remaining"] for a in answers] == ["4", "3", "2", "1", "0"]
    assert sixth.json()["error"]["code"] == -32002, sixth.text
    assert sixth.json()["id"] == 9 and int(sixth.headers["Retry-After"]) >= 1


def test_a_body_over_the_cap_is_refused_and_recorded_alike_on_both_doors(
    tmp_path: Path, embedder: Embedder
) -> None:
    # One edge for both doors (a2a.http.edge): /mcp once sent its 413 unrecorded.
    settings = load_settings(data_dir=tmp_path / "data", max_body_bytes=1024)
    with live_server(settings, embedder) as url:
        answers = [
            httpx.post(f"{url}{door}", content=b"x" * 2048, headers=MCP_HEADERS)
            for door in ("/cstp", "/mcp")
        ]
        metrics = httpx.get(f"{url}/metrics").text
    assert [a.status_code for a in answers] == [413, 413]
    assert answers[0].json() == answers[1].json()
    assert answers[1].json()["error"]["data"] == {"maxBytes": 1024}
    assert 'cstp_rpc_calls_total{code="-32600",method="other"} 2.0' in metrics


async def test_tool_descriptions_are_written_for_the_agent(
    tmp_path: Path, embedder: Embedder
) -> None:
    """Issue 44 item 11: tools/list cited CONTRACT.md, a seed or F002 in 23 places, files an
    agent never sees. Each tool now says what it does, when to use it and what comes back."""
    settings = load_settings(data_dir=tmp_path / "data", auth_tokens=TOKENS)
    with live_server(settings, embedder) as url:
        async with mcp_session(url, "reader-token-1") as session:
            tools = (await session.list_tools()).tools
    assert len(tools) >= 13
    for tool in tools:
        shown = json.dumps(tool.model_dump(by_alias=True, exclude_none=True))
        assert not re.search(r"CONTRACT|seed|F002|\.md\b", shown, re.IGNORECASE), tool.name
        description = tool.description or ""
        assert "Use it" in description and "Returns" in description, tool.name
