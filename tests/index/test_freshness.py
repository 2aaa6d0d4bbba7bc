"""Cross-process freshness: `cstp serve` sees what another process wrote, at the next query.

Real processes: a `chroma run` server, `cstp serve` and `cstp index` against it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from a2a.store.chroma import ChromaDecisionStore
from tests.conftest import rpc_call
from tests.servers import cstp, free_port, start_chroma, start_cstp, stop

pytestmark = pytest.mark.slow

FAST = "wordllama-l2-supercat-256"
MODES = ["semantic", "keyword", "hybrid"]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    chroma_port, port = free_port(), free_port()
    chroma = start_chroma(tmp_path / "chroma", chroma_port, log=tmp_path / "chroma.log")
    env = {
        "CSTP_CHROMA_URL": f"http://127.0.0.1:{chroma_port}",
        "CSTP_EMBEDDING_MODEL": FAST,
        "CSTP_DATA_DIR": str(tmp_path / "unused"),
    }
    try:
        _write(tmp_path / "first", [{"id": "a1", "title": "Adopt Postgres for billing"}])
        indexed = cstp("index", str(tmp_path / "first"), env=env)
        assert indexed.returncode == 0, indexed.stderr
        server = start_cstp(port, env)
        try:
            yield f"http://127.0.0.1:{port}", env
        finally:
            stop(server)
    finally:
        stop(chroma)


def _write(folder: Path, records: list[dict[str, Any]]) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "records.yaml").write_text(yaml.safe_dump(records))


def _found(base_url: str, query: str, mode: str) -> dict[str, str]:
    params = {"query": query, "retrievalMode": mode, "limit": 50}
    body = httpx.post(f"{base_url}/cstp", json=rpc_call("cstp.queryDecisions", params), timeout=60)
    return {d["id"]: d["title"] for d in body.json()["result"]["decisions"]}


def test_records_written_updated_and_deleted_by_other_processes_are_seen_at_once(
    served: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    base_url, env = served
    for mode in MODES:
        assert "z1" not in _found(base_url, "zeppelin freight", mode)

    _write(tmp_path / "second", [{"id": "z1", "title": "Ship freight by zeppelin"}])
    assert cstp("index", str(tmp_path / "second"), env=env).returncode == 0
    for mode in MODES:
        assert _found(base_url, "zeppelin freight", mode).get("z1") == "Ship freight by zeppelin"

    _write(tmp_path / "second", [{"id": "z1", "title": "Ship freight by airship zeppelin"}])
    assert cstp("index", str(tmp_path / "second"), env=env).returncode == 0
    for mode in MODES:
        found = _found(base_url, "zeppelin freight", mode)
        assert found.get("z1") == "Ship freight by airship zeppelin", mode

    writer = ChromaDecisionStore(
        collection="decisions", embedding_model=FAST, server_url=env["CSTP_CHROMA_URL"]
    )
    try:
        writer.delete(["z1"])
    finally:
        writer.close()
    for mode in MODES:
        assert "z1" not in _found(base_url, "zeppelin freight", mode)
    assert "a1" in _found(base_url, "postgres billing", "keyword")
