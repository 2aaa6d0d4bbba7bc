"""Write throughput over HTTP: cstp.recordDecision records/s for one client and for eight.

Starts `cstp serve` (embedded store, or a `chroma run` server with --chroma) on 127.0.0.1
with the fast WordLlama model, then for each client count C in --clients: C threads, each
with its own HTTP connection, record --per-client decisions each (distinct ids, distinct
titles). The floor is cstp.getDecision calls/s with the same C threads against the same
server in the same run: the cost of one authenticated JSON-RPC round trip that touches
Chroma, which a write cannot beat. A second floor is the store's own commit rate:
single-record ChromaDecisionStore.upsert calls/s into a scratch embedded store in this
process (no HTTP, no service). Prints a JSON report; nothing is timed in tests.

    python bench/write_load.py                    # 1 and 8 clients, 250 decisions each
    python bench/write_load.py --per-client 1000 --chroma
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

BIN = Path(sys.executable).parent
TOKEN = "bench-writer-token-0123456789"


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, process: subprocess.Popen[bytes], seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"server exited with {process.returncode}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"{url} not ready within {seconds} s")


def start(folder: Path, use_chroma: bool, log: Any) -> tuple[str, list[subprocess.Popen[bytes]]]:
    env = {
        **os.environ,
        "CSTP_EMBEDDING_MODEL": "wordllama-l2-supercat-256",
        "CSTP_AUTH_TOKENS": f"bench:{TOKEN}:read+write",
        "CSTP_DATA_DIR": str(folder / "data"),
        "CSTP_LOG_LEVEL": os.environ.get("CSTP_LOG_LEVEL", "warning"),
        "ANONYMIZED_TELEMETRY": "False",
    }
    processes = []
    if use_chroma:
        chroma_port = free_port()
        chroma = subprocess.Popen(
            [str(BIN / "chroma"), "run", "--path", str(folder / "chroma"), "--host", "127.0.0.1",
             "--port", str(chroma_port)],
            stdout=log, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
        processes.append(chroma)
        wait_ready(f"http://127.0.0.1:{chroma_port}/api/v2/heartbeat", chroma)
        env["CSTP_CHROMA_URL"] = f"http://127.0.0.1:{chroma_port}"
    port = free_port()
    server = subprocess.Popen(
        [str(BIN / "cstp"), "serve", "--host", "127.0.0.1", "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, env=env,
    )  # fmt: skip
    processes.append(server)
    url = f"http://127.0.0.1:{port}"
    wait_ready(f"{url}/ready", server)
    return url, processes


def run_clients(url: str, clients: int, per_client: int, work: Any) -> float:
    """Seconds for `clients` threads to each run `work(http, client, i)` `per_client` times."""
    failures: list[str] = []
    barrier = threading.Barrier(clients + 1)

    def client(number: int) -> None:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=url, headers=headers, timeout=60) as http:
            barrier.wait()
            for i in range(per_client):
                answer = http.post("/cstp", json=work(number, i)).json()
                if "result" not in answer:
                    failures.append(json.dumps(answer)[:300])

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise SystemExit(f"{len(failures)} calls failed, first: {failures[0]}")
    return elapsed


def record_call(run: str) -> Any:
    def work(client: int, i: int) -> dict[str, Any]:
        decision = {
            "id": f"{run}-{client}-{i}",
            "title": f"Decision {i} of writer {client}: adopt option {i % 7} for service {client}",
            "category": ["architecture", "security", "operations"][i % 3],
            "confidence": (i % 10) / 10,
            "stakes": ["low", "medium", "high"][i % 3],
            "context": f"Run {run}, writer {client}, decision {i}: a load-test record.",
            "tags": ["bench", f"writer-{client}"],
        }
        params = {"decision": decision}
        return {"jsonrpc": "2.0", "id": i, "method": "cstp.recordDecision", "params": params}

    return work


def get_call(run: str) -> Any:
    def work(client: int, i: int) -> dict[str, Any]:
        params = {"id": f"{run}-{client}-{i}"}
        return {"jsonrpc": "2.0", "id": i, "method": "cstp.getDecision", "params": params}

    return work


def raw_upserts_per_s(folder: Path, count: int = 50) -> float:
    """Single-record ChromaDecisionStore.upsert calls/s into a scratch embedded store, in
    this process, vectors computed beforehand: the store's own commit rate, the floor a
    durable one-record write cannot beat.
    """
    from a2a.embeddings import load_embedder
    from a2a.records import DecisionRecord
    from a2a.store.chroma import ChromaDecisionStore

    embedder = load_embedder("wordllama-l2-supercat-256")
    store = ChromaDecisionStore(
        collection="floor", embedding_model=embedder.name, data_dir=folder / "floor"
    )
    records = [DecisionRecord(id=f"f{i}", title=f"Floor decision {i}") for i in range(count + 1)]
    vectors = embedder.embed_documents([r.title for r in records])
    store.upsert(records[:1], vectors[:1])  # creates the collection
    started = time.perf_counter()
    for record, vector in zip(records[1:], vectors[1:], strict=True):
        store.upsert([record], [vector])
    elapsed = time.perf_counter() - started
    store.close()
    return count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="1,8", help="comma-separated client counts")
    parser.add_argument("--per-client", type=int, default=250, help="decisions per client")
    parser.add_argument("--chroma", action="store_true", help="store on a `chroma run` server")
    args = parser.parse_args()
    if not 1 <= args.per_client <= 5000:
        raise SystemExit("--per-client must be in 1..5000 (a bounded run)")
    report: dict[str, Any] = {"store": "chroma-server" if args.chroma else "embedded", "runs": []}
    with tempfile.TemporaryDirectory(prefix="cstp-write-bench-") as name:
        folder = Path(name)
        with (folder / "server.log").open("wb") as log:
            report["floor_raw_upserts_per_s"] = round(raw_upserts_per_s(folder), 1)
            url, processes = start(folder, args.chroma, log)
            try:
                for clients in [int(c) for c in args.clients.split(",")]:
                    run = f"c{clients}"
                    total = clients * args.per_client
                    write = run_clients(url, clients, args.per_client, record_call(run))
                    read = run_clients(url, clients, args.per_client, get_call(run))
                    report["runs"].append(
                        {
                            "clients": clients,
                            "records": total,
                            "write_records_per_s": round(total / write, 1),
                            "floor_get_calls_per_s": round(total / read, 1),
                            "write_to_floor_ratio": round(read / write, 3),
                            "write_to_raw_upsert_ratio": round(
                                total / write / report["floor_raw_upserts_per_s"], 2
                            ),
                        }
                    )
                    print(json.dumps(report["runs"][-1]), file=sys.stderr, flush=True)
            finally:
                for process in reversed(processes):
                    process.terminate()
                    process.wait(timeout=30)
                if os.environ.get("BENCH_KEEP_LOG"):
                    print((folder / "server.log").read_text(), file=sys.stderr)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
