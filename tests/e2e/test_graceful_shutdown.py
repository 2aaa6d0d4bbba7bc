"""SIGTERM never cuts work short: calls in flight are answered, index writes are whole.

Real processes: a `chroma run` server, `cstp serve` and `cstp index` against it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from a2a.ingest.indexer import EMBED_CHUNK_RECORDS
from a2a.store.chroma import ChromaDecisionStore
from tests.conftest import REPO, rpc_call
from tests.servers import BIN, cstp, free_port, start_chroma, start_cstp, stop

pytestmark = pytest.mark.slow

FAST = "wordllama-l2-supercat-256"


@pytest.fixture
def chroma(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    process = start_chroma(tmp_path / "chroma", port, log=tmp_path / "chroma.log")
    try:
        yield process, f"http://127.0.0.1:{port}"
    finally:
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
    _, chroma_url = chroma
    env = {
        "CSTP_CHROMA_URL": chroma_url,
        "CSTP_EMBEDDING_MODEL": FAST,
        "CSTP_DATA_DIR": str(tmp_path / "unused"),
    }
    assert cstp("index", str(REPO / "examples" / "decisions"), env=env).returncode == 0
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    server = start_cstp(port, env)
    batch = [rpc_call("cstp.queryDecisions", {"query": f"event bus {i}"}, i) for i in range(50)]
    body = json.dumps(batch).encode()
    head = (
        f"POST /cstp HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=300) as client:
            # Half the body now, the rest once shutdown has begun: the request is in flight
            # throughout, as deterministically as the test can make it.
            client.sendall(head + body[: len(body) // 2])
            poll(lambda: gauge(base_url, "cstp_rpc_requests_in_flight") == 1, "batch in flight")
            server.send_signal(signal.SIGTERM)
            poll(lambda: refuses_connections(port), "server stops accepting connections")
            client.sendall(body[len(body) // 2 :])
            raw = b"".join(iter(lambda: client.recv(65536), b""))
        server.wait(timeout=60)
    finally:
        stop(server)
    status_line, _, rest = raw.partition(b"\r\n")
    assert status_line == b"HTTP/1.1 200 OK"
    answers = json.loads(rest.partition(b"\r\n\r\n")[2])
    assert sorted(item["id"] for item in answers) == list(range(50))
    assert [item.get("error") for item in answers] == [None] * 50
    assert all(len(item["result"]["decisions"]) == 10 for item in answers)
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
def test_index_stops_after_the_write_in_progress_and_reports_what_it_did(
    tmp_path: Path, chroma: tuple[subprocess.Popen[bytes], str], sig: signal.Signals, code: int
) -> None:
    _, chroma_url = chroma
    store = ChromaDecisionStore(collection="decisions", embedding_model=FAST, server_url=chroma_url)
    batch = 512  # CSTP_INDEX_BATCH_SIZE: small batches keep the run short
    total = 8 * batch
    write_records(tmp_path / "records", total)
    env = {
        **os.environ,
        "CSTP_CHROMA_URL": chroma_url,
        "CSTP_DATA_DIR": str(tmp_path / "d"),
        "CSTP_INDEX_BATCH_SIZE": str(batch),
        "CSTP_EMBEDDING_MODEL": FAST,
    }
    process = subprocess.Popen(
        [str(BIN / "cstp"), "index", str(tmp_path / "records")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
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
    # Whole chunks: the batch being written, and the chunks of the next one embedded by then.
    assert 0 < stored < total and stored % EMBED_CHUNK_RECORDS == 0, stderr
    assert f"{stored} new, 0 updated, 0 unchanged, 0 failed" in stderr
    assert f"interrupted by {sig.name} after {stored} of {total} records" in stderr
