"""`cstp index` then `cstp serve`, as a user runs them: the index run leaves a current
snapshot with the graph, and the server maps it instead of reading Chroma (issue 44,
item 10). Real processes; a low snapshot and graph threshold (settings) so the 48 example
records get both."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from a2a.index.snapshot import CURRENT, MANIFEST
from tests.conftest import REPO, rpc_call
from tests.servers import cstp, free_port, output_of, start_cstp, stop

pytestmark = pytest.mark.slow

EXAMPLES = REPO / "examples" / "decisions"
RECORDS = 48


def _env(data: Path) -> dict[str, str]:
    return {
        "CSTP_EMBEDDING_MODEL": "wordllama-l2-supercat-256",
        "CSTP_DATA_DIR": str(data),
        "CSTP_INDEX_SNAPSHOT_MIN_RECORDS": "20",
        "CSTP_INDEX_GRAPH_MIN_ROWS": "20",
    }


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A data folder `cstp index` filled with the examples, and what it logged."""
    data = tmp_path_factory.mktemp("indexed")
    result = cstp("index", str(EXAMPLES), env=_env(data))
    assert result.returncode == 0, result.stderr
    return data, result.stderr


def test_cstp_index_leaves_a_current_snapshot_with_the_graph(indexed: tuple[Path, str]) -> None:
    data, logged = indexed
    root = data / "index" / "decisions"
    folder = root / (root / CURRENT).read_text().strip()
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["rows"] == RECORDS
    assert manifest["stamp"]["model"] == "wordllama-l2-supercat-256"
    assert (folder / "graph.faiss").exists() and "graph.faiss" in manifest["files"]
    assert f"snapshot written: {RECORDS} records" in logged and "with its graph" in logged


def test_cstp_serve_after_cstp_index_answers_from_its_snapshot(
    indexed: tuple[Path, str],
) -> None:
    data, _ = indexed
    port = free_port()
    server = start_cstp(port, _env(data))
    try:
        reply = httpx.post(
            f"http://127.0.0.1:{port}/cstp",
            json=rpc_call("cstp.queryDecisions", {"query": "database choice", "limit": 5}),
            timeout=30,
        ).json()
        assert len(reply["result"]["decisions"]) == 5
        log = output_of(server)
        assert f"loaded from snapshot {data / 'index' / 'decisions'}: {RECORDS} records" in log
        # Its graph came with it, and Chroma's marker was the stamp: nothing was read back.
        assert "with its graph; Chroma's marker is its stamp: nothing read" in log
        assert "loading from Chroma" not in log and "graph built" not in log
    finally:
        stop(server)
