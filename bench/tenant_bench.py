"""Tenants on one replica (issue 26's targets), measured over real HTTP on `cstp serve`.

The stores are built once into `--data` (default var/tenant_bench) and reused: `--tenants`
tenants `t00`.. of `--size` synthetic decisions each (bench/query_bench.py's generator, a
seed per tenant, embedded with the fast model), and tenant `big`, the first `--org-tenants`
of them in one collection (the same records and vectors). Then, each on a fresh
`cstp serve` (embedded Chroma, snapshots on; RSS read from /proc of the server):

1. reference: no memory budget. Every tenant answers `--queries` queries (its first load
   from Chroma writes its snapshot), then every tenant is loaded together: the RSS above
   the idle server's is the real cost of the loaded indexes (bytes per record, against
   a2a.index.sync's estimate). Org-level search (`tenant: "*"` over t00..t09 with a token
   granted only those; timed once their union graph is built, a2a.app.union_graphs) and
   the `big` tenant answer the same queries interleaved: p50 each, how each org-level query
   searched (/metrics), and the top-10 ids each shares with the `big` tenant's exact answer.
2. budget: CSTP_INDEX_MEMORY_MIB a quarter of the measured total. The tenants are queried
   round-robin (each visit's first query finds it evicted) for `--rounds` rounds: every
   answer must equal the reference's; latency of the first query of each visit (evicted:
   snapshot load + catch-up) and of the others; the server's peak RSS (VmHWM) against the
   budget + 400 MiB.

    python bench/tenant_bench.py --tenants 50 --size 10000 --queries 5 --rounds 2
    python bench/tenant_bench.py --build-only      # the stores alone
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from query_bench import generate_queries, generate_records, percentile

from a2a.embeddings import load_embedder
from a2a.index.search_index import GRAPH_MIN_ROWS, ORG_GRAPH_MIN_ROWS
from a2a.records import DecisionRecord
from a2a.store.chroma import ChromaDecisionStore
from a2a.tenants.names import collection_of

FAST = "wordllama-l2-supercat-256"
BASE = "decisions"
BIG = "big"
TOKEN = "bench-token-0123456789"
ORG_TOKEN = "org-token-0123456789"
BIN = Path(sys.executable).parent
#: How an org-level query searched (/metrics cstp_org_searches_total's `path`).
PATHS = ("union", "tenants")


def tenant_name(k: int) -> str:
    return f"t{k:02d}"


def tenant_records(k: int, size: int) -> list[DecisionRecord]:
    """Tenant k's records: its own seed, ids unique across tenants (for `big`)."""
    records = generate_records(size, seed=1000 + k)
    return [r.model_copy(update={"id": f"{tenant_name(k)}-{i:06d}"}) for i, r in enumerate(records)]


def build(data: Path, tenants: int, size: int, org: int) -> None:
    """Fill `data`/chroma with the tenants' collections and `big` (each kept when full)."""
    embedder = load_embedder(FAST)
    big = ChromaDecisionStore(
        data_dir=data / "chroma", collection=collection_of(BASE, BIG), embedding_model=FAST
    )
    big_full = big.count() == org * size
    for k in range(tenants):
        store = ChromaDecisionStore(
            data_dir=data / "chroma",
            collection=collection_of(BASE, tenant_name(k)),
            embedding_model=FAST,
        )
        if store.count() == size and (k >= org or big_full):
            store.close()
            continue
        started = time.perf_counter()
        records = tenant_records(k, size)
        vectors = np.asarray(embedder.embed_documents([r.embedding_text() for r in records]))
        if store.count() != size:
            store.upsert(records, vectors)
        if k < org and not big_full:
            big.upsert(records, vectors)
        store.close()
        print(f"built {tenant_name(k)}: {size:,} records in {time.perf_counter() - started:.0f} s")
    big.close()


# -- the server ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def chroma_run(path: Path, log: Path) -> Iterator[str]:
    """`chroma run` on the stores in `path` (the embedded folder's format); its URL."""
    port = free_port()
    process = subprocess.Popen(
        [
            str(BIN / "chroma"),
            "run",
            "--path",
            str(path),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/api/v2/heartbeat").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"chroma run did not start: {log.read_text()[-2000:]}")
            time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=60)


class Server:
    """A `cstp serve` on 127.0.0.1 with its log and /proc readings."""

    def __init__(self, data: Path, log: Path, env: dict[str, str]) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        grants = "|".join(tenant_name(k) for k in range(int(env.pop("ORG", "10"))))
        settings = {
            "CSTP_EMBEDDING_MODEL": FAST,
            "CSTP_DATA_DIR": str(data),
            "CSTP_AUTH_TOKENS": f"bench:{TOKEN}:read+write:*,org:{ORG_TOKEN}:read:{grants}",
            "CSTP_CHROMA_TIMEOUT_SECONDS": "120",
            **env,
        }
        self.process = subprocess.Popen(
            [str(BIN / "cstp"), "serve", "--host", "127.0.0.1", "--port", str(port)],
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            env={**os.environ, **settings},
        )
        self.http = httpx.Client(timeout=600)
        deadline = time.monotonic() + 300
        while True:
            try:
                if self.http.get(f"{self.url}/ready").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"cstp serve did not start: {log.read_text()[-2000:]}")
            time.sleep(0.3)

    def call(self, method: str, params: dict[str, Any], token: str = TOKEN) -> Any:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        answer = self.http.post(
            f"{self.url}/cstp", json=body, headers={"Authorization": f"Bearer {token}"}
        ).json()
        if "result" not in answer:
            raise RuntimeError(f"{method} {params}: {answer}")
        return answer["result"]

    def status(self, field: str) -> float:
        """A /proc/<pid>/status field of the server in MiB (VmRSS, VmHWM)."""
        text = Path(f"/proc/{self.process.pid}/status").read_text()
        found = re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE)
        assert found is not None
        return int(found.group(1)) / 1024

    def metric(self, name: str) -> float:
        text = self.http.get(f"{self.url}/metrics").text
        found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
        return float(found.group(1)) if found else float("nan")

    def log_count(self, text: str) -> int:
        return self.log.read_text().count(text)

    def stop(self) -> None:
        self.http.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()


@contextmanager
def serving(data: Path, log: Path, env: dict[str, str]) -> Iterator[Server]:
    server = Server(data, log, env)
    try:
        yield server
    finally:
        server.stop()


def org_paths(server: Server) -> dict[str, float]:
    """Org-level queries so far, by how they searched (union graph or each tenant's)."""
    return {path: server.metric(f'cstp_org_searches_total{{path="{path}"}}') for path in PATHS}


def timed_query(
    server: Server, tenant: str, text: str, token: str = TOKEN, **extra: Any
) -> tuple[float, Any]:
    """(ms, the answer's decisions as (id, tenant, distance, score)) of one query."""
    started = time.perf_counter()
    params = {"query": text, "tenant": tenant, **extra}
    answer = server.call("cstp.queryDecisions", params, token)
    ms = (time.perf_counter() - started) * 1000
    return ms, [
        (d["id"], d.get("tenant"), d.get("distance"), d.get("score")) for d in answer["decisions"]
    ]


def wait_for_log(server: Server, text: str, count: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while server.log_count(text) < count and time.monotonic() < deadline:
        time.sleep(0.5)


def p(values: list[float], q: float) -> float:
    return percentile(sorted(values), q) if values else float("nan")


# -- the runs ------------------------------------------------------------------------------


def reference(
    server: Server, names: list[str], queries: list[str], org: int, org_queries: int
) -> tuple[dict[tuple[str, str], Any], float]:
    """Every tenant's answers (unlimited budget) and the MiB the loaded indexes cost."""
    idle = server.status("VmRSS")
    answers: dict[tuple[str, str], Any] = {}
    for name in names:
        for text in queries:
            answers[name, text] = timed_query(server, name, text)[1]
    wait_for_log(server, "search index snapshot written", len(names), 300)
    loaded = server.metric("cstp_index_tenants_loaded")
    used = server.status("VmRSS") - idle
    rows = len(names) * args.size
    print(
        f"reference: {len(names)} tenants loaded ({loaded:.0f} by /metrics); RSS idle "
        f"{idle:.0f} MiB, +{used:.0f} MiB loaded = {used * 2**20 / rows:,.0f} bytes per record"
    )
    # Org-level search over t00.. (a token granted only those) beside the one `big` tenant.
    texts = generate_queries(org_queries, seed=99)
    timed_query(server, BIG, texts[0])  # loads big; its graph builds after
    # Every graph (each tenant's past ORG_GRAPH_MIN_ROWS, big's) built or loaded before timing.
    graphs = len(names) * (args.size >= ORG_GRAPH_MIN_ROWS) + (org * args.size >= GRAPH_MIN_ROWS)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and graphs > sum(
        server.log_count(text) for text in ("search index graph built", "with its graph")
    ):
        time.sleep(0.5)
    # The org-level set's union graph (a2a.app.union_graphs), started by the first "*" call.
    timed_query(server, "*", texts[0], ORG_TOKEN)
    if org * args.size >= GRAPH_MIN_ROWS:
        wait_for_log(server, "org-level union graph built", 1, 600)
    for text in texts[:3]:  # warm both
        timed_query(server, "*", text, ORG_TOKEN)
        timed_query(server, BIG, text)
    searched = org_paths(server)
    org_ms: list[float] = []
    big_ms: list[float] = []
    exact_ms: list[float] = []
    overlap, big_overlap = [], []
    for i, text in enumerate(texts):
        order = [("*", ORG_TOKEN, False), (BIG, TOKEN, False), (BIG, TOKEN, True)]
        found = {}
        for tenant, token, exact in order if i % 2 == 0 else reversed(order):
            ms, hits = timed_query(server, tenant, text, token, exact=exact)
            (org_ms if tenant == "*" else exact_ms if exact else big_ms).append(ms)
            found[tenant, exact] = {h[0] for h in hits}
        truth = found[BIG, True]
        overlap.append(len(found["*", False] & truth) / max(1, len(truth)))
        big_overlap.append(len(found[BIG, False] & truth) / max(1, len(truth)))
    now = org_paths(server)
    paths = ", ".join(f"{now[path] - searched[path]:.0f} by {path}" for path in PATHS)
    print(
        f"org-level search over {org} tenants x {args.size:,} ({paths}): "
        f"p50 {p(org_ms, 50):.1f} ms "
        f"(p90 {p(org_ms, 90):.1f}); one {org * args.size:,} tenant: p50 {p(big_ms, 50):.1f} ms "
        f"(p90 {p(big_ms, 90):.1f}), exact: true p50 {p(exact_ms, 50):.1f} ms; ratio "
        f"{p(org_ms, 50) / p(big_ms, 50):.2f} ({p(org_ms, 50) / p(exact_ms, 50):.2f} to exact); "
        f"same top-10 ids as the exact 100k {statistics.mean(overlap):.1%} (the 100k tenant's "
        f"own graph: {statistics.mean(big_overlap):.1%})"
    )
    return answers, used


def budgeted(
    server: Server,
    names: list[str],
    queries: list[str],
    expected: dict[tuple[str, str], Any],
    rounds: int,
    budget_mib: int,
) -> None:
    """Round-robin over every tenant under the budget; each answer checked."""
    evicted_ms: list[float] = []
    warm_ms: list[float] = []
    wrong, rss = 0, []
    for _ in range(rounds):
        for name in names:
            for i, text in enumerate(queries):
                ms, hits = timed_query(server, name, text)
                (evicted_ms if i == 0 else warm_ms).append(ms)
                wrong += hits != expected[name, text]
        rss.append(f"{server.status('VmRSS'):.0f}")
    peak, now = server.status("VmHWM"), server.status("VmRSS")
    total = len(evicted_ms) + len(warm_ms)
    print(
        f"budget {budget_mib} MiB: {total} answers, {total - wrong} equal to the reference; "
        f"evictions {server.metric('cstp_index_evictions_total'):.0f}, loaded at the end "
        f"{server.metric('cstp_index_tenants_loaded'):.0f}"
    )
    print(
        f"query to an evicted tenant: p50 {p(evicted_ms, 50):.0f} ms, max "
        f"{max(evicted_ms):.0f} ms ({len(evicted_ms)}); to a loaded one: p50 "
        f"{p(warm_ms, 50):.1f} ms, max {max(warm_ms):.0f} ms"
    )
    print(
        f"RSS peak {peak:.0f} MiB, now {now:.0f} MiB, after each round {', '.join(rss)} MiB; "
        f"budget + 400 MiB = {budget_mib + 400} MiB"
    )


def main() -> None:
    global args
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tenants", type=int, default=50)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--org-tenants", type=int, default=10)
    parser.add_argument("--queries", type=int, default=5, help="per tenant and visit")
    parser.add_argument("--org-queries", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--data", type=Path, default=Path("var/tenant_bench"))
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument(
        "--chroma-server",
        action="store_true",
        help="serve the stores through `chroma run` (its memory then outside the replica's)",
    )
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    data = args.data / f"{args.tenants}x{args.size}"
    build(data, args.tenants, args.size, args.org_tenants)
    if args.build_only:
        return
    shutil.rmtree(data / "index", ignore_errors=True)  # every run loads from Chroma first
    names = [tenant_name(k) for k in range(args.tenants)]
    queries = generate_queries(args.queries, seed=7)
    logs = Path(tempfile.mkdtemp(prefix="tenant_bench."))
    org = {
        "ORG": str(args.org_tenants),
        "CSTP_INDEX_SNAPSHOT_MIN_RECORDS": str(min(args.size, 2_000)),
    }
    with contextlib.ExitStack() as stack:
        if args.chroma_server:
            url = stack.enter_context(chroma_run(data / "chroma", logs / "chroma.log"))
            org["CSTP_CHROMA_URL"] = url
        print(f"Chroma: {'chroma run' if args.chroma_server else 'embedded'}")
        with serving(data, logs / "reference.log", dict(org)) as server:
            expected, used = reference(server, names, queries, args.org_tenants, args.org_queries)
        budget = max(1, round(used / 4))
        env = {**org, "CSTP_INDEX_MEMORY_MIB": str(budget)}
        with serving(data, logs / "budget.log", env) as server:
            budgeted(server, names, queries, expected, args.rounds, budget)
    print(f"server logs in {logs}")


args: argparse.Namespace

if __name__ == "__main__":
    main()
