"""The decision calls of both clients and the decision CLI commands against real `cstp serve`."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from a2a.client import AsyncCSTPClient, CSTPClient, ForbiddenError, InvalidParamsError
from a2a.client.errors import SaturatedError, error_from_object
from a2a.decisions.results import CalibrationResult, DecisionResult
from tests.decisions.wire import (
    READER_TOKEN,
    SCOPED_TOKENS,
    WRITER,
    WRITER_TOKEN,
    served,
)
from tests.mcp_session import mcp_session
from tests.servers import BIN, cstp

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("client"), "embedded") as base:
        yield base


def test_the_sync_client_records_reviews_reads_lists_and_scores(url: str) -> None:
    with CSTPClient(url, WRITER_TOKEN) as client:
        decision = {"id": "cli-1", "title": "Sync", "category": "sync", "confidence": 0.75}
        assert client.record_decision(decision).created is True
        assert client.record_decision(decision).created is False
        summary = client.review_decision("cli-1", "success", lessons="Fine.")
        assert (summary.status, summary.outcome, summary.recorded_by) == (
            "reviewed",
            "success",
            WRITER,
        )
        record = client.get_decision("cli-1")
        assert isinstance(record, DecisionResult) and record.lessons == "Fine."
        for n in range(2, 6):
            client.record_decision({"id": f"cli-{n}", "title": "More", "category": "sync"})
        page = client.list_decisions({"category": "sync"}, limit=2)
        assert len(page.decisions) == 2 and page.next_cursor is not None
        every = [d.id for d in client.iter_decisions({"category": "sync"}, limit=2)]
        assert sorted(every) == [f"cli-{n}" for n in range(1, 6)]
        calibration = client.get_calibration({"category": "sync"}, bins=4)
        assert isinstance(calibration, CalibrationResult)
        assert calibration.decisions == 1
        assert calibration.brier_score == pytest.approx(0.0625)
        with pytest.raises(InvalidParamsError) as caught:
            client.get_decision("no-such-id")
        assert [e["field"] for e in caught.value.errors] == ["id"]


async def test_the_async_client_makes_the_same_calls(url: str) -> None:
    async with AsyncCSTPClient(url, WRITER_TOKEN) as client:
        created = await client.record_decision({"title": "Async", "category": "async"})
        await client.review_decision(created.id, "partial", status="superseded")
        record = await client.get_decision(created.id)
        assert (record.outcome, record.status) == ("partial", "superseded")
        listed = [d.id async for d in client.iter_decisions({"category": "async"})]
        assert listed == [created.id]
        page = await client.list_decisions({"category": "async"}, order="dateAsc")
        assert page.next_cursor is None
        assert (await client.get_calibration({"category": "async"})).decisions == 0


@pytest.mark.skipif(not SCOPED_TOKENS, reason="scoped tokens arrive with the pipeline branch")
def test_a_read_token_raises_forbidden_with_the_required_scope(url: str) -> None:
    with CSTPClient(url, READER_TOKEN) as client, pytest.raises(ForbiddenError) as caught:
        client.record_decision({"title": "Not allowed"})
    assert (caught.value.code, caught.value.required_scope) == (-32004, "write")


def test_codes_32004_and_32005_have_their_own_exceptions() -> None:
    forbidden = error_from_object(
        {"code": -32004, "message": "m", "data": {"requiredScope": "write"}}
    )
    assert isinstance(forbidden, ForbiddenError) and forbidden.required_scope == "write"
    saturated = error_from_object(
        {"code": -32005, "message": "m", "data": {"retryable": True, "retryAfter": 3}}
    )
    assert isinstance(saturated, SaturatedError) and saturated.retry_after == 3


def test_the_cli_records_reviews_gets_lists_and_scores(url: str, tmp_path: Path) -> None:
    env = {"CSTP_URL": url, "CSTP_TOKEN": WRITER_TOKEN}
    path = tmp_path / "decisions.yaml"
    path.write_text(
        "- id: shell-1\n  title: From the shell\n  category: shell\n  confidence: 0.5\n"
        "  date: 2026-02-01T10:00:00Z\n"
        "- id: shell-2\n  title: Second\n  category: shell\n",
        encoding="utf-8",
    )
    recorded = cstp("record", str(path), "--json", env=env)
    assert recorded.returncode == 0, recorded.stderr
    assert [json.loads(line) for line in recorded.stdout.splitlines()] == [
        {"id": "shell-1", "created": True},
        {"id": "shell-2", "created": True},
    ]
    reviewed = cstp("review", "shell-1", "--outcome", "failure", "--lessons", "No.", env=env)
    assert reviewed.returncode == 0, reviewed.stderr
    got = cstp("get", "shell-1", "--json", env=env)
    assert got.returncode == 0, got.stderr
    record = json.loads(got.stdout)
    assert (record["outcome"], record["lessons"], record["date"]) == (
        "failure",
        "No.",
        "2026-02-01T10:00:00Z",
    )
    listed = cstp("list", "--category", "shell", "--all", "--limit", "1", "--json", env=env)
    # shell-2 has no date, so it is dated now: the newest comes first.
    assert [d["id"] for d in json.loads(listed.stdout)["decisions"]] == ["shell-2", "shell-1"]
    calibration = cstp("calibration", "--category", "shell", "--bins", "2", "--json", env=env)
    assert json.loads(calibration.stdout)["brierScore"] == pytest.approx(0.25)


def piped(*args: str, stdin: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "cstp"), *args],
        input=stdin,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_cli_reads_a_decision_from_stdin_and_exits_1_naming_bad_fields(url: str) -> None:
    env = {"CSTP_URL": url, "CSTP_TOKEN": WRITER_TOKEN}
    good = piped("record", "-", "--json", stdin='{"id": "piped", "title": "Piped"}', env=env)
    assert json.loads(good.stdout) == {"id": "piped", "created": True}
    bad = piped("record", "-", stdin='{"title": "Piped", "confidence": 1.5}', env=env)
    assert bad.returncode == 1
    assert '"field": "decision.confidence"' in bad.stderr
    unreadable = piped("record", "-", stdin="- just\n- strings\n", env=env)
    assert unreadable.returncode == 2


async def mcp_call(url: str, token: str, name: str, arguments: dict[str, Any]) -> Any:
    async with mcp_session(url, token) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert {"cstp.recordDecision", "cstp.getCalibration"} <= tools
        return await session.call_tool(name, arguments)


async def test_mcp_tools_record_and_read_and_enforce_the_write_scope(url: str) -> None:
    decision = {"decision": {"id": "mcp-1", "title": "Over MCP"}}
    made = await mcp_call(url, WRITER_TOKEN, "cstp.recordDecision", decision)
    assert made.is_error is False and made.structured_content == {"id": "mcp-1", "created": True}
    read = await mcp_call(url, READER_TOKEN, "cstp.getDecision", {"id": "mcp-1"})
    assert read.structured_content is not None
    assert read.structured_content["recordedBy"] == WRITER
    refused = await mcp_call(
        url, READER_TOKEN, "cstp.reviewDecision", {"id": "mcp-1", "outcome": "success"}
    )
    assert refused.is_error is True and refused.structured_content is not None
    assert refused.structured_content["code"] == -32004
