"""The one call pipeline: step order, scopes, and the error boundary, end to end over HTTP."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, ConfigDict

from a2a.embeddings import Embedder
from a2a.rpc.methods import CallContext, Method
from a2a.settings import Settings, load_settings
from tests.conftest import rpc_call
from tests.http.live import live_server

TOKENS = "reader:reader-token-1,writer:writer-token-2:read+write"


class Note(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    text: str


async def record_note(params: Note, ctx: CallContext) -> dict[str, Any]:
    return {"recorded": params.text, "by": ctx.agent}


async def buggy(params: Note, ctx: CallContext) -> None:
    # A fault of ours, like a malformed `where`: must be -32603, never -32003.
    raise KeyError("secret internal detail /var/cstp/chroma")


WRITE = Method("test.recordNote", Note, record_note, summary="Record a note.", scope="write")
BUG = Method("test.bug", Note, buggy, summary="Raises a bug.")


def pipeline_settings(tmp_path: Path, **overrides: Any) -> Settings:
    return load_settings(data_dir=tmp_path / "data", agent_id="test-agent", **overrides)


def call(url: str, body: Any, token: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    # verify=False: plain HTTP; spares httpx loading the CA bundle per call (18 ms of CPU).
    return httpx.post(f"{url}/cstp", json=body, headers=headers, verify=False).json()


def test_a_real_bug_reaches_the_wire_as_internal_error_with_its_traceback_logged(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.ERROR),
        live_server(pipeline_settings(tmp_path), embedder, [BUG]) as url,
    ):
        response = httpx.post(f"{url}/cstp", json=rpc_call("test.bug", {"text": "x"}))
    assert response.status_code == 200
    assert response.json()["error"] == {"code": -32603, "message": "Internal error"}
    assert "secret" not in response.text
    logged = [r for r in caplog.records if r.exc_info and "secret internal" in str(r.exc_info[1])]
    assert logged, "the traceback of the bug is logged"


def test_a_read_token_calling_a_write_method_gets_32004_naming_the_scope(
    tmp_path: Path, embedder: Embedder
) -> None:
    settings = pipeline_settings(tmp_path, auth_tokens=TOKENS)
    note = rpc_call("test.recordNote", {"text": "hello"})
    with live_server(settings, embedder, [WRITE]) as url:
        refused = call(url, note, "reader-token-1")
        bad_params_read = call(url, rpc_call("test.recordNote", {"x": 1}), "reader-token-1")
        written = call(url, note, "writer-token-2")
        discover = call(url, rpc_call("rpc.discover"), "reader-token-1")
    assert refused["error"]["code"] == -32004
    assert refused["error"]["data"] == {"requiredScope": "write"}
    # Scope (-32004) comes before params (-32602): a read token learns nothing of params.
    assert bad_params_read["error"]["code"] == -32004
    assert written["result"] == {"recorded": "hello", "by": "writer"}
    described = {m["name"] for m in discover["result"]["methods"]}
    assert "test.recordNote" in described


def test_with_auth_off_every_scope_is_allowed(tmp_path: Path, embedder: Embedder) -> None:
    with live_server(pipeline_settings(tmp_path), embedder, [WRITE]) as url:
        reply = call(url, rpc_call("test.recordNote", {"text": "hi"}))
    assert reply["result"]["recorded"] == "hi"


def test_a_registered_method_is_on_every_door(tmp_path: Path, embedder: Embedder) -> None:
    settings = pipeline_settings(tmp_path, auth_tokens=TOKENS)
    with live_server(settings, embedder, [WRITE]) as url:
        card = httpx.get(f"{url}/.well-known/agent-card.json").json()
        call(url, rpc_call("test.recordNote", {"text": "m"}), "writer-token-2")
        metrics = httpx.get(f"{url}/metrics").text
    skill = next(s for s in card["skills"] if s["id"] == "test.recordNote")
    assert skill["securityRequirements"] == [{"schemes": {"bearer": {"list": ["write"]}}}]
    assert 'cstp_rpc_calls_total{code="ok",method="test.recordNote"} 1.0' in metrics


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (rpc_call("cstp.queryDecisions", {"query": "x", "nope": 1}), -32602),
        (rpc_call("cstp.noSuchMethod"), -32601),
        ({"jsonrpc": "2.0", "method": "cstp.noSuchMethod"}, None),
    ],
    ids=["bad-params", "unknown-method", "notification"],
)
def test_every_call_with_a_valid_envelope_counts_against_the_limit(
    tmp_path: Path, embedder: Embedder, body: dict[str, Any], code: int | None
) -> None:
    settings = pipeline_settings(tmp_path, rate_limit_default="2/minute")
    with live_server(settings, embedder) as url:
        first = [httpx.post(f"{url}/cstp", json=body) for _ in range(2)]
        after = call(url, rpc_call("rpc.discover"))
    if code is None:
        assert [r.status_code for r in first] == [204, 204]
    else:
        assert [r.json()["error"]["code"] for r in first] == [code, code]
    assert after["error"]["code"] == -32002 and after["error"]["data"]["retryAfter"] >= 1


def test_60000_unknown_keys_cost_one_short_error_list(tmp_path: Path, embedder: Embedder) -> None:
    params = {f"k{n}": 0 for n in range(60_000)}
    with live_server(pipeline_settings(tmp_path), embedder) as url:
        response = httpx.post(f"{url}/cstp", json=rpc_call("cstp.queryDecisions", params))
    errors = response.json()["error"]["data"]["errors"]
    assert response.json()["error"]["code"] == -32602
    assert len(errors) == 51 and errors[0] == {"field": "k0", "reason": "unknown parameter"}
    assert errors[-1]["field"] == "params"
    assert len(response.content) < 8_000


def test_a_batch_of_rpc_discover_serves_one_cached_document(
    tmp_path: Path, embedder: Embedder
) -> None:
    batch = [rpc_call("rpc.discover", id=n) for n in range(50)]
    with live_server(pipeline_settings(tmp_path), embedder) as url:
        replies = httpx.post(f"{url}/cstp", json=batch).json()
    documents = {str(reply["result"]) for reply in replies}
    assert len(replies) == 50 and len(documents) == 1
    assert sorted(reply["id"] for reply in replies) == list(range(50))


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"query": "x", "filters": {f"k{n}": 0 for n in range(60_000)}}, "filters"),
        ({"query": "x", "filters": {"stakes": ["bad"] * 60_000}}, "filters.stakes"),
    ],
    ids=["60000-keys-in-filters", "60000-bad-list-items"],
)
def test_a_params_object_too_large_for_any_method_is_one_error(
    tmp_path: Path, embedder: Embedder, params: dict[str, Any], field: str
) -> None:
    with live_server(pipeline_settings(tmp_path), embedder) as url:
        reply = call(url, rpc_call("cstp.queryDecisions", params))
    assert reply["error"]["code"] == -32602
    # The cap names the field whose members pass it (issue 25).
    assert [e["field"] for e in reply["error"]["data"]["errors"]] == [field]
