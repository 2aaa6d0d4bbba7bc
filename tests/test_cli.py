"""The `cstp` command as a user runs it: real processes, real files."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import pytest

from a2a.store.lock import EmbeddedStoreLock
from tests.conftest import REPO, rpc_call
from tests.servers import cstp, free_port, output_of, start_cstp, stop

EXAMPLES = REPO / "examples" / "decisions"
FAST = {"CSTP_EMBEDDING_MODEL": "wordllama-l2-supercat-256"}


def test_index_twice_reports_new_then_unchanged(tmp_path: Path) -> None:
    env = {**FAST, "CSTP_DATA_DIR": str(tmp_path)}
    first = cstp("index", str(EXAMPLES), env=env)
    assert first.returncode == 0, first.stderr
    assert "48 new, 0 updated, 0 unchanged, 0 failed (1 files skipped)" in first.stderr
    second = cstp("index", str(EXAMPLES), env=env)
    assert "0 new, 0 updated, 48 unchanged, 0 failed" in second.stderr


def test_bad_file_is_reported_and_the_good_ones_are_indexed(tmp_path: Path) -> None:
    folder = tmp_path / "records"
    folder.mkdir()
    (folder / "good.yaml").write_text("id: g1\ntitle: Good record\nstatus: decided\n")
    (folder / "broken.yaml").write_text("id: [unclosed\n")
    (folder / "bad.json").write_text('{"title": 5')
    result = cstp(
        "index",
        str(folder),
        str(tmp_path / "missing"),
        env={**FAST, "CSTP_DATA_DIR": str(tmp_path / "data")},
    )
    assert result.returncode == 1
    assert "1 new, 0 updated, 0 unchanged, 3 failed" in result.stderr
    for name in ("broken.yaml", "bad.json", "missing"):
        assert name in result.stderr


def test_bad_setting_exits_2_naming_it(tmp_path: Path) -> None:
    result = cstp("index", str(EXAMPLES), env={"CSTP_CHROMA_TIMEOUT_SECONDS": "-1"})
    assert result.returncode == 2
    assert "CSTP_CHROMA_TIMEOUT_SECONDS" in result.stderr


def test_index_stops_at_once_while_another_process_holds_the_embedded_store(
    tmp_path: Path,
) -> None:
    with EmbeddedStoreLock(tmp_path / "cstp.lock", role="cstp serve on test"):
        result = cstp(
            "index", str(EXAMPLES), env={**FAST, "CSTP_DATA_DIR": str(tmp_path)}, timeout=60
        )
    assert result.returncode == 3
    assert "cstp serve on test" in result.stderr and "CSTP_CHROMA_URL" in result.stderr


@pytest.mark.slow
def test_serve_with_index_answers_queries_and_shuts_down_cleanly(tmp_path: Path) -> None:
    port = free_port()
    env = {"CSTP_DATA_DIR": str(tmp_path), "CSTP_AGENT_ID": "emerson"}
    server = start_cstp(port, env, "--index", str(EXAMPLES))
    try:
        call = rpc_call(
            "cstp.queryDecisions",
            {"query": "reduce pager noise and burnout for responders", "limit": 3},
        )
        result = httpx.post(f"http://127.0.0.1:{port}/cstp", json=call, timeout=30).json()
        assert result["result"]["agent"] == "emerson"
        assert result["result"]["decisions"][0]["id"] == "c65c0367"
        assert len(result["result"]["decisions"]) == 3
    finally:
        stop(server, signal.SIGTERM)
    # uvicorn shuts down gracefully, then re-raises SIGTERM: exit status -15 is expected.
    assert server.returncode in (0, -signal.SIGTERM)
    log = output_of(server)
    assert "Application shutdown complete" in log
    assert not (tmp_path / "cstp.owner").exists()


def test_rate_limit_on_a_method_that_is_not_served_exits_2_naming_the_setting(
    tmp_path: Path,
) -> None:
    result = cstp(
        "serve",
        "--port",
        str(free_port()),
        env={**FAST, "CSTP_DATA_DIR": str(tmp_path), "CSTP_RATE_LIMITS": "cstp.nope=10/minute"},
        timeout=120,
    )
    assert result.returncode == 2
    assert "CSTP_RATE_LIMITS" in result.stderr and "Traceback" not in result.stderr
