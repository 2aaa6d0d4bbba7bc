"""HTTP load on a served store: req/s and p50/p99 at 16 and 64 concurrent clients.

Bounded in time, sent to 127.0.0.1 only. Starts `cstp serve` on an embedded store that
scale_bench.py left (`--store DIR`: the Chroma folder, collection `bench`), waits until
/ready (the index loaded), then for each concurrency runs, for `--seconds` each:
`cstp.queryDecisions` (semantic, the ~0.1% filter, limit 10), then `GET /health` as the
ceiling of the HTTP stack. Also measures the query embedder alone on the same cores (one
thread per core), the ceiling the issue asks 80% of. Counts -32003 answers.

    python bench/scale_bench.py --sizes 100000 --data /tmp/cstp-bench
    python bench/http_load.py --store /tmp/cstp-bench/100000 [--seconds 10]

With the default model (MiniLM, 384-d), write the store with its name first:

    python bench/scale_bench.py --sizes 100000 --synthetic-vectors --data /tmp/cstp-minilm \\
        --model all-minilm-l6-v2-int8 --no-queries
    python bench/http_load.py --store /tmp/cstp-minilm/100000 --model all-minilm-l6-v2-int8
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import aiohttp
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from query_bench import generate_queries, percentile

from a2a.embeddings import load_embedder

FAST = "wordllama-l2-supercat-256"
NARROW = {"category": "architecture", "stakes": "critical", "minConfidence": 0.9}


async def drive(url: str, clients: int, seconds: float, body: Any | None) -> dict[str, Any]:
    """`clients` loops sending requests for `seconds`; latencies, codes, req/s.

    aiohttp, one keep-alive connection per client: httpx's AsyncClient could not send
    more than ~250 req/s here (its pool, not the server, was the ceiling).
    """
    latencies: list[float] = []
    codes: dict[int, int] = {}
    deadline = time.perf_counter() + seconds
    queries = generate_queries(200, seed=11)
    connector = aiohttp.TCPConnector(limit=clients)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def one(worker: int) -> None:
            n = worker
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                if body is None:
                    async with session.get(url) as response:
                        await response.read()
                        code = response.status
                else:
                    params = {**body, "query": queries[n % len(queries)]}
                    payload = {
                        "jsonrpc": "2.0",
                        "id": n,
                        "method": "cstp.queryDecisions",
                        "params": params,
                    }
                    async with session.post(url, json=payload) as response:
                        reply = await response.json()
                    code = reply["error"]["code"] if "error" in reply else 0
                latencies.append((time.perf_counter() - started) * 1000)
                codes[code] = codes.get(code, 0) + 1
                n += clients

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(clients)))
        elapsed = time.perf_counter() - started
    return {
        "rps": len(latencies) / elapsed,
        "p50": percentile(latencies, 50),
        "p99": percentile(latencies, 99),
        "codes": codes,
    }


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def embedder_ceiling(model: str, seconds: float, threads: int) -> float:
    """Queries/s the embedding model alone sustains with `threads` threads."""
    embedder = load_embedder(model)
    queries = generate_queries(200, seed=11)
    counts = [0] * threads
    deadline = time.perf_counter() + seconds

    def work(i: int) -> None:
        while time.perf_counter() < deadline:
            embedder.embed_query(queries[counts[i] % len(queries)])
            counts[i] += 1

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return sum(counts) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--model", default=FAST, help="the model the store was written with")
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    port = args.port or free_port()
    ceiling = embedder_ceiling(args.model, 5, os.cpu_count() or 1)
    print(f"query embedder alone ({args.model}): {ceiling:,.0f} queries/s")
    with tempfile.TemporaryDirectory() as data:
        (Path(data) / "chroma").symlink_to(args.store.resolve())
        env = {
            **os.environ,
            "CSTP_DATA_DIR": data,
            "CSTP_COLLECTION": "bench",
            "CSTP_EMBEDDING_MODEL": args.model,
            "CSTP_LOG_LEVEL": "warning",
        }
        cstp = Path(sys.executable).parent / "cstp"
        server = subprocess.Popen(
            [str(cstp), "serve", "--host", "127.0.0.1", "--port", str(port)], env=env
        )
        base = f"http://127.0.0.1:{port}"
        try:
            started = time.perf_counter()
            while True:
                if server.poll() is not None:  # never measure a server that is not ours
                    raise SystemExit(f"cstp serve exited with {server.returncode}")
                try:
                    if httpx.get(f"{base}/ready", timeout=5).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.5)
            print(f"ready after {time.perf_counter() - started:.1f} s")
            print(
                f"{'clients':>7} {'what':9} | {'req/s':>7} {'/embedder':>9} | "
                f"{'p50 ms':>7} {'p99 ms':>7} | codes"
            )
            for clients in (16, 64):
                body = {"filters": NARROW, "limit": 10}
                for what, url, payload in (
                    ("query", f"{base}/cstp", body),
                    ("health", f"{base}/health", None),
                ):
                    r = asyncio.run(drive(url, clients, args.seconds, payload))
                    print(
                        f"{clients:>7} {what:9} | {r['rps']:>7.0f} {r['rps'] / ceiling:>8.0%} | "
                        f"{r['p50']:>7.1f} "
                        f"{r['p99']:>7.1f} | {r['codes']}",
                        flush=True,
                    )
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
