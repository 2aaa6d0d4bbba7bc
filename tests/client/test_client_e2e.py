"""CSTPClient, AsyncCSTPClient, `cstp query` and MCP against real `cstp serve` processes."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from a2a.cli.main import app
from a2a.client import (
    AsyncCSTPClient,
    CSTPClient,
    InvalidParamsError,
    MethodNotFoundError,
    RateLimitedError,
    StoreUnavailableError,
    UnauthorizedError,
    render_precedents,
)
from a2a.query.results import QueryDecisionsResult
from tests.conftest import REPO
from tests.mcp_session import mcp_session
from tests.servers import cstp, free_port, start_cstp, stop

pytestmark = pytest.mark.slow

EXAMPLES = REPO / "examples" / "decisions"
TOKEN = "planner-token-0123456789"
ENV = {
    "CSTP_EMBEDDING_MODEL": "wordllama-l2-supercat-256",
    "CSTP_AUTH_TOKENS": f"planner:{TOKEN}",
    "CSTP_RATE_LIMITS": "rpc.discover=1/minute",
}


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A served store of the example decisions, auth on, rpc.discover limited to 1/minute."""
    port = free_port()
    env = {**ENV, "CSTP_DATA_DIR": str(tmp_path_factory.mktemp("data"))}
    server = start_cstp(port, env, "--index", str(EXAMPLES))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(server)


def test_query_returns_typed_decisions_and_renders_a_precedents_block(url: str) -> None:
    with CSTPClient(url, TOKEN) as client:
        result = client.query_decisions(
            "reduce pager noise and burnout for responders", limit=3, include_reasons=True
        )
    assert isinstance(result, QueryDecisionsResult)
    assert (result.total, result.agent) == (3, "cstp")
    assert result.decisions[0].id == "c65c0367"
    assert all(d.reasons is not None for d in result.decisions)
    block = render_precedents(result.decisions)
    assert block.count("[project]") == 3 and "**c65c0367** — " in block


def test_search_docs_is_typed(url: str) -> None:
    with CSTPClient(url, TOKEN) as client:
        result = client.search_docs("a notification without id is never answered", max_sections=1)
    assert [s.heading for s in result.sections] == ["Batches and notifications"]


def test_a_wrong_token_raises_unauthorized(url: str) -> None:
    with CSTPClient(url, "not-the-token") as client, pytest.raises(UnauthorizedError) as caught:
        client.query_decisions("kafka")
    assert caught.value.code == -32001


def test_bad_params_raise_invalid_params_naming_the_field(url: str) -> None:
    with CSTPClient(url, TOKEN) as client, pytest.raises(InvalidParamsError) as caught:
        client.query_decisions("kafka", limit=0)
    assert [e["field"] for e in caught.value.errors] == ["limit"]


def test_an_unknown_method_raises_method_not_found(url: str) -> None:
    with CSTPClient(url, TOKEN) as client, pytest.raises(MethodNotFoundError):
        client.call("cstp.noSuchMethod", {})


def test_over_the_limit_raises_rate_limited_with_retry_after(url: str) -> None:
    with CSTPClient(url, TOKEN) as client, pytest.raises(RateLimitedError) as caught:
        for _ in range(2):
            client.discover()
    assert 1 <= caught.value.retry_after <= 60


async def test_async_client_gives_the_same_typed_result(url: str) -> None:
    async with AsyncCSTPClient(url, TOKEN) as client:
        result = await client.query_decisions("reduce pager noise and burnout", limit=2)
        with pytest.raises(InvalidParamsError):
            await client.search_docs("x", max_sections=11)
    assert result.decisions[0].id == "c65c0367"


async def test_mcp_tool_call_round_trip_on_the_real_server(url: str) -> None:
    async with mcp_session(url, TOKEN) as session:
        result = await session.call_tool(
            "cstp.queryDecisions", {"query": "reduce pager noise and burnout", "limit": 1}
        )
    assert result.is_error is False and result.structured_content is not None
    assert result.structured_content["decisions"][0]["id"] == "c65c0367"


def test_cstp_query_prints_a_table_and_json(url: str) -> None:
    env = {"CSTP_URL": url, "CSTP_TOKEN": TOKEN, "COLUMNS": "200"}
    table = cstp("query", "reduce pager noise", "--limit", "2", env=env, timeout=60)
    assert table.returncode == 0, table.stderr
    assert "c65c0367" in table.stdout and "distance" in table.stdout
    as_json = cstp("query", "reduce pager noise", "--limit", "2", "--json", env=env, timeout=60)
    assert json.loads(as_json.stdout)["decisions"][0]["id"] == "c65c0367"
    refused = cstp("query", "x", "--status", "maybe", env=env, timeout=60)
    assert refused.returncode == 1 and "-32602" in refused.stderr


def test_a_dead_chroma_server_raises_store_unavailable(tmp_path: Path) -> None:
    port, dead = free_port(), free_port()
    env = {
        "CSTP_EMBEDDING_MODEL": "wordllama-l2-supercat-256",
        "CSTP_CHROMA_URL": f"http://127.0.0.1:{dead}",
        "CSTP_CHROMA_TIMEOUT_SECONDS": "3",
        "CSTP_DATA_DIR": str(tmp_path),
    }
    server: subprocess.Popen[bytes] = start_cstp(port, env)
    try:
        client = CSTPClient(f"http://127.0.0.1:{port}")
        with client, pytest.raises(StoreUnavailableError) as caught:
            client.query_decisions("kafka")
    finally:
        stop(server)
    assert (caught.value.code, caught.value.retryable) == (-32003, True)


def test_a_service_without_peers_says_so_to_the_client_and_the_cli(url: str) -> None:
    with CSTPClient(url, TOKEN) as client:
        assert client.list_peers().peers == []
        with pytest.raises(InvalidParamsError) as caught:
            client.query_decisions("kafka", peers="*")
    assert [e["field"] for e in caught.value.errors] == ["peers"]
    env = {"CSTP_URL": url, "CSTP_TOKEN": TOKEN}
    refused = CliRunner().invoke(app, ["query", "kafka", "--peers", "*"], env=env)
    assert refused.exit_code == 1 and "-32602" in refused.stderr
    assert "--peers: this service has no peers configured" in refused.stderr
    listed = CliRunner().invoke(app, ["peers"], env=env)
    assert listed.exit_code == 0 and "No peers configured" in listed.stdout
