"""SIGTERM never cuts work short: calls in flight are answered, index batches are written whole.

Real processes: a `chroma run` server, `cstp serve` and `cstp index` against it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from a2a.indexer import BATCH_SIZE
from a2a.store import ChromaDecisionStore
from tests.conftest import REPO, rpc_call
from tests.servers import BIN, cstp, free_port, start_chroma, start_cstp, stop

pytestmark = pytest.mark.slow

FAST = "wordllama-l2-supercat-256"


@pytest.fixture
def chroma(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    process = start_chroma(tmp_path / "chroma", port)
    try:
        yield process, f"http://127.0.0.1:{port}"
    finally:
        os.kill(process.pid, signal.SIGCONT)
        stop(process)


def gauge(base_url: str, name: str) -> float:
    text = httpx.get(f"{base_url}/metrics", timeout=30).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                return sample.value
    raise AssertionError(f"{name} not exposed")


def refuses_connections(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def poll(condition: Any, what: str, seconds: float = 120) -> None:
    """Wait until `condition()` is true; the deadline only guards against a hang."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.05)


def test_sigterm_during_a_batch_of_50_queries_still_answers_all_of_them(
    tmp_path: Path, chroma: tuple[subprocess.Popen[bytes], str]
) -> None:
    chroma_process, chroma_url = chroma
    env = {
        "CSTP_CHROMA_URL": chroma_url,
        "CSTP_EMBEDDING_MODEL": FAST,
        "CSTP_CHROMA_TIMEOUT_SECONDS": "300",
        "CSTP_DATA_DIR": str(tmp_path / "unused"),
    }
    assert cstp("index", str(REPO / "examples" / "decisions"), env=env).returncode == 0
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    server = start_cstp(port, env)
    batch = [rpc_call("cstp.queryDecisions", {"query": f"event bus {i}"}, i) for i in range(50)]
    answer: dict[str, httpx.Response] = {}
    try:
        # Chroma frozen: the batch is held in flight for as long as the test needs.
        os.kill(chroma_process.pid, signal.SIGSTOP)
        sender = threading.Thread(
            target=lambda: answer.update(r=httpx.post(f"{base_url}/cstp", json=batch, timeout=300))
        )
        sender.start()
        poll(lambda: gauge(base_url, "cstp_rpc_requests_in_flight") == 1, "batch in flight")
        server.send_signal(signal.SIGTERM)
        poll(lambda: refuses_connections(port), "server stops accepting connections")
        os.kill(chroma_process.pid, signal.SIGCONT)
        sender.join(timeout=300)
        server.wait(timeout=60)
    finally:
        stop(server)
    response = answer["r"]
    assert response.status_code == 200
    body = response.json()
    assert sorted(item["id"] for item in body) == list(range(50))
    assert [item.get("error") for item in body] == [None] * 50
    assert all(len(item["result"]["decisions"]) == 10 for item in body)
    assert server.returncode in (0, -signal.SIGTERM)


def write_records(folder: Path, n: int) -> None:
    folder.mkdir()
    records = [
        {"id": f"rec{i:05d}", "title": f"Decision {i} about service {i % 17}", "context": "x" * 40}
        for i in range(n)
    ]
    (folder / "many.yaml").write_text(yaml.safe_dump(records))


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["sigterm", "sigint"]
)
def test_index_stops_after_the_batch_being_written_and_reports_what_it_did(
    tmp_path: Path, chroma: tuple[subprocess.Popen[bytes], str], sig: signal.Signals, code: int
) -> None:
    _, chroma_url = chroma
    total = 64 * BATCH_SIZE
    write_records(tmp_path / "records", total)
    env = {**os.environ, "CSTP_CHROMA_URL": chroma_url, "CSTP_DATA_DIR": str(tmp_path / "d")}
    process = subprocess.Popen(
        [str(BIN / "cstp"), "index", str(tmp_path / "records")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    store = ChromaDecisionStore(
        collection="decisions", embedding_model="all-minilm-l6-v2-int8", server_url=chroma_url
    )
    try:
        poll(lambda: process.poll() is not None or store.count() > 0, "first batch written")
        process.send_signal(sig)
        _, stderr = process.communicate(timeout=300)
        stored = store.count()
    finally:
        if process.poll() is None:
            process.kill()
        store.close()
    assert process.returncode == code, stderr
    assert 0 < stored < total and stored % BATCH_SIZE == 0
    assert f"{stored} new, 0 updated, 0 unchanged, 0 failed" in stderr
    assert f"interrupted by {sig.name} after {stored} of {total} records" in stderr
