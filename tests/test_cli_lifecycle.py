"""`cstp update|delete|stats|drift` against a running service (real uvicorn, embedded Chroma)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.decisions.lifecycle_wire import OTHER_TOKEN, WRITER_TOKEN, Served, served
from tests.decisions.wire import result
from tests.servers import cstp

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with served(tmp_path_factory.mktemp("cli"), "embedded") as s:
        yield s


def run(server: Served, *args: str, token: str = WRITER_TOKEN) -> tuple[int, str, str]:
    done = cstp(*args, "--url", server.url, "--token", token, env={})
    return done.returncode, done.stdout, done.stderr


def test_update_then_delete_from_the_shell(server: Served, tmp_path: Path) -> None:
    record = {"decision": {"id": "cli-1", "title": "Adopt Kafka", "category": "cli"}}
    result(server.url, "cstp.recordDecision", record)
    result(server.url, "cstp.recordDecision", {"decision": {"id": "cli-0", "title": "Old"}})
    changes = tmp_path / "changes.yaml"
    changes.write_text("context: Billing events need replay.\n")
    code, out, _ = run(
        server,
        "update",
        "cli-1",
        "--reason",
        "more context",
        "--changes",
        str(changes),
        "--confidence",
        "0.7",
        "--supersedes",
        "cli-0",
        "--json",
    )
    assert code == 0 and json.loads(out)["confidence"] == 0.7
    stored = result(server.url, "cstp.getDecision", {"id": "cli-1"})
    assert stored["context"] == "Billing events need replay."
    assert stored["history"][0]["reason"] == "more context"
    assert result(server.url, "cstp.getDecision", {"id": "cli-0"})["status"] == "superseded"
    code, _, error = run(server, "delete", "cli-1", "--reason", "dup", token=OTHER_TOKEN)
    assert code == 1 and "-32004" in error and "admin" in error
    code, out, _ = run(server, "delete", "cli-1", "--reason", "dup", "--json")
    assert code == 0 and json.loads(out) == {"id": "cli-1", "deleted": True}
    assert result(server.url, "cstp.getDecision", {"id": "cli-0"})["status"] == "decided"


def test_stats_and_drift_print_json_and_tables(server: Served) -> None:
    record = {
        "decision": {
            "id": "cli-s",
            "title": "S",
            "category": "cli-stats",
            "outcome": "success",
            "date": "2026-03-04T00:00:00Z",
        }
    }
    result(server.url, "cstp.recordDecision", record)
    code, out, _ = run(server, "stats", "--category", "cli-stats", "--json")
    assert code == 0
    assert json.loads(out)["byMonth"] == [{"month": "2026-03", "outcomes": {"success": 1}}]
    code, out, _ = run(server, "stats", "--category", "cli-stats")
    assert code == 0 and "1 decision(s), 0 undated" in out and "2026-03" in out
    code, out, _ = run(server, "drift", "--group-by", "agent", "--json")
    assert code == 0 and "groups" in json.loads(out)
    code, _, error = run(server, "drift", "--recent-days", "0")
    assert code == 1 and "recentDays" in error
