"""HTTP load on a served store: req/s and p50/p99 at 16 and 64 concurrent clients.

Bounded in time, sent to 127.0.0.1 only. Starts `cstp serve` on an embedded store that
scale_bench.py left (`--store DIR`: the Chroma folder, collection `bench`), waits until
/ready (the index loaded), then for each concurrency runs, for `--seconds` each:
`cstp.queryDecisions` (semantic, the ~0.1% filter, limit 10), then `GET /health` as the
ceiling of the HTTP stack. Also measures the query embedder alone on the same cores (one
thread per core): one query a call, the ceiling the issue asks 80% of (`/alone`), and,
for a batchable model, BATCH queries a call, the ceiling of a service that batches
concurrent queries as this one does (`/batched`). Counts -32003 answers. Beside each row,
the CPU time per request of the server process and of this load generator (which shares
the cores), and the mean queries per model call in the server (`batch`, from /metrics).

    python bench/scale_bench.py --sizes 100000 --data /tmp/cstp-bench
    python bench/http_load.py --store /tmp/cstp-bench/100000 [--seconds 10]

With the default model (MiniLM, 384-d), write the store with its name first:

    python bench/scale_bench.py --sizes 100000 --synthetic-vectors --data /tmp/cstp-minilm \\
        --model all-minilm-l6-v2-int8 --no-queries
    python bench/http_load.py --store /tmp/cstp-minilm/100000 --model all-minilm-l6-v2-int8

`--stall` measures instead how long `GET /health` waits behind heavy queries: 1 and 8
clients send 100-term keyword queries (the store's most common terms, limit 10) while a
thread probes /health every 0.5 ms; it prints the queries' req/s and p50 and /health's
p50, p99 and max (queries answered on the event loop must leave it free to serve others).

    python bench/http_load.py --store /tmp/cstp-bench/100000 --stall [--seconds 6]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import logging
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from query_bench import generate_queries, generate_records, percentile

from a2a.embeddings import Embedder, is_batchable, load_embedder

FAST = "wordllama-l2-supercat-256"
#: Queries per model call of the batched ceiling: MiniLM int8's CPU per query is flat from 4
#: to 32 (a2a.embeddings.batching.MAX_BATCH).
BATCH = 8
NARROW = {"category": "architecture", "stakes": "critical", "minConfidence": 0.9}


async def drive(
    url: str, clients: int, seconds: float, body: Any | None, queries: list[str] | None = None
) -> dict[str, Any]:
    """`clients` loops sending requests for `seconds`; latencies, codes, req/s.

    Query texts are taken in turn from `queries` (default: 200 generated ones). aiohttp,
    one keep-alive connection per client: httpx's AsyncClient could not send more than
    ~250 req/s here (its pool, not the server, was the ceiling).
    """
    latencies: list[float] = []
    codes: dict[int, int] = {}
    deadline = time.perf_counter() + seconds
    queries = queries or generate_queries(200, seed=11)
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


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process `pid` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def embedder_ceiling(
    embedder: Embedder, seconds: float, threads: int, batch: int
) -> tuple[float, float]:
    """(queries/s, CPU ms per query) of the embedding model alone with `threads` threads,
    each calling it with `batch` queries at a time (1: `embed_query`; more: `query_groups`,
    as the service's dynamic batcher calls a batchable model under load)."""
    queries = generate_queries(200, seed=11)
    counts = [0] * threads
    deadline = time.perf_counter() + seconds

    def work(i: int) -> None:
        while time.perf_counter() < deadline:
            n = counts[i]
            if batch == 1:
                embedder.embed_query(queries[n % len(queries)])
            else:
                texts = [queries[(n + j) % len(queries)] for j in range(batch)]
                for _ in embedder.query_groups(texts):  # type: ignore[attr-defined]
                    pass
            counts[i] += batch

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    cpu = cpu_seconds(os.getpid())
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    used = cpu_seconds(os.getpid()) - cpu
    return sum(counts) / seconds, used / max(sum(counts), 1) * 1000


def batch_totals(base: str) -> tuple[float, float]:
    """(sum, count) of the server's cstp_query_embedding_batch_size histogram so far."""
    text = httpx.get(f"{base}/metrics", timeout=10).text
    found = dict(re.findall(r"^cstp_query_embedding_batch_size_(sum|count) (\S+)$", text, re.M))
    return float(found.get("sum", 0)), float(found.get("count", 0))


def heavy_query(size: int, terms: int = 100) -> str:
    """The `terms` most common words of the store's text (its first 5,000 records' text)."""
    counts: collections.Counter[str] = collections.Counter()
    for record in generate_records(min(size, 5000), seed=7):
        counts.update(set(re.findall(r"[a-z]{3,}", record.embedding_text().lower())))
    return " ".join(word for word, _ in counts.most_common(terms))


class HealthProbe(threading.Thread):
    """GET /health every 0.5 ms until stopped; `latencies` in ms."""

    def __init__(self, base: str) -> None:
        super().__init__(daemon=True)
        self.base, self.running = base, True
        self.latencies: list[float] = []

    def run(self) -> None:
        with httpx.Client(timeout=30) as client:
            while self.running:
                started = time.perf_counter()
                client.get(f"{self.base}/health")
                self.latencies.append((time.perf_counter() - started) * 1000)
                time.sleep(0.0005)


def stalls(base: str, seconds: float, size: int) -> None:
    """/health's latency while 1 and 8 clients send heavy keyword queries."""
    heavy = heavy_query(size)
    body = {"retrievalMode": "keyword", "limit": 10}
    print(
        f"{'clients':>7} | {'req/s':>7} {'p50 ms':>7} | health {'p50':>6} {'p99':>6} {'max':>6} ms"
    )
    for clients in (1, 8):
        probe = HealthProbe(base)
        probe.start()
        r = asyncio.run(drive(f"{base}/cstp", clients, seconds, body, [heavy]))
        probe.running = False
        probe.join()
        h = probe.latencies
        print(
            f"{clients:>7} | {r['rps']:>7.1f} {r['p50']:>7.1f} | {percentile(h, 50):>13.2f} "
            f"{percentile(h, 99):>6.2f} {max(h):>6.1f}   {r['codes']}",
            flush=True,
        )


@contextmanager
def served(store: Path, model: str, port: int) -> Iterator[tuple[str, int]]:
    """`cstp serve` on `store` (collection `bench`) until the block ends; its base URL and
    process id, once /ready answers 200. Raises SystemExit when the server exits first."""
    with tempfile.TemporaryDirectory() as data:
        (Path(data) / "chroma").symlink_to(store.resolve())
        env = {
            **os.environ,
            "CSTP_DATA_DIR": data,
            "CSTP_COLLECTION": "bench",
            "CSTP_EMBEDDING_MODEL": model,
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
            yield base, server.pid
        finally:
            server.terminate()
            server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--model", default=FAST, help="the model the store was written with")
    parser.add_argument("--stall", action="store_true", help="/health behind heavy queries")
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    port = args.port or free_port()
    if args.stall:
        with served(args.store, args.model, port) as (base, _):
            stalls(base, args.seconds, int(args.store.name) if args.store.name.isdigit() else 0)
        return
    embedder = load_embedder(args.model)
    ceiling, model_ms = embedder_ceiling(embedder, 5, os.cpu_count() or 1, 1)
    print(
        f"query embedder alone ({args.model}), one query a call: {ceiling:,.0f} queries/s, "
        f"{model_ms:.2f} ms CPU per query"
    )
    batched = None
    if is_batchable(embedder):
        batched, batched_ms = embedder_ceiling(embedder, 5, os.cpu_count() or 1, BATCH)
        print(
            f"query embedder alone, {BATCH} queries a call: {batched:,.0f} queries/s, "
            f"{batched_ms:.2f} ms CPU per query"
        )
    with served(args.store, args.model, port) as (base, pid):
        print(
            f"{'clients':>7} {'what':9} | {'req/s':>7} {'/alone':>7} {'/batched':>8} | "
            f"{'p50 ms':>7} {'p99 ms':>7} | CPU ms/req: server, load | batch | codes"
        )
        for clients in (16, 64):
            body = {"filters": NARROW, "limit": 10}
            for what, url, payload in (
                ("query", f"{base}/cstp", body),
                ("health", f"{base}/health", None),
            ):
                server_cpu, own_cpu = cpu_seconds(pid), cpu_seconds(os.getpid())
                sizes, calls_before = batch_totals(base)
                r = asyncio.run(drive(url, clients, args.seconds, payload))
                calls = max(sum(r["codes"].values()), 1)
                server_ms = (cpu_seconds(pid) - server_cpu) / calls * 1000
                load_ms = (cpu_seconds(os.getpid()) - own_cpu) / calls * 1000
                sizes_after, calls_after = batch_totals(base)
                model_calls = calls_after - calls_before
                mean = f"{(sizes_after - sizes) / model_calls:5.1f}" if model_calls else "    -"
                of_batched = f"{r['rps'] / batched:>8.0%}" if batched else f"{'-':>8}"
                print(
                    f"{clients:>7} {what:9} | {r['rps']:>7.0f} {r['rps'] / ceiling:>7.0%} "
                    f"{of_batched} | {r['p50']:>7.1f} {r['p99']:>7.1f} | "
                    f"{server_ms:>18.2f} {load_ms:>5.2f} | {mean} | {r['codes']}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
