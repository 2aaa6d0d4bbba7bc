"""An embedding provider against the same model in process: indexing rate and query p50.

Issue 43's targets: through a local OpenAI-style server serving the bundled model's
vectors, indexing runs within 1.5x of the in-process model's rate, and queries within
1.5x or +2 ms. Both are measured in one run, side by side on the same machine:

- the server is tests/openai_embeddings_server.py in a process of its own (uvicorn,
  MiniLM int8, the bundled default), on 127.0.0.1;
- **indexing**: `--records` synthetic records (bench/query_bench.py's generator) written
  by `Indexer` into a fresh embedded store, once with the model in process and once
  through the provider (CSTP_EMBEDDING_BATCH 64), `--rounds` times alternately; the best
  round of each counts (the machine is shared: the best is the least disturbed);
- **queries**: `--queries` texts through `QueryService.query_decisions` (semantic, limit
  10, the dynamic batcher as `cstp serve` builds it) over each store, the two services
  asked alternately, text by text; p50 and p90 of each, in milliseconds; and the p50 of
  `embed_query` alone, the same way (the provider's own cost beside the model's).

    .venv/bin/python bench/provider_bench.py [--records 300] [--queries 200] [--out FILE]

Prints one JSON object (also written to `--out`); exit 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from query_bench import generate_queries, generate_records  # noqa: E402

from a2a.embeddings import DEFAULT_MODEL, Embedder, load_embedder  # noqa: E402
from a2a.embeddings.batching import query_batcher  # noqa: E402
from a2a.embeddings.provider import ProviderEmbedder  # noqa: E402
from a2a.ingest.indexer import Indexer, IndexSummary  # noqa: E402
from a2a.query.params import QueryDecisionsParams  # noqa: E402
from a2a.query.service import QueryService  # noqa: E402
from a2a.records import DecisionRecord  # noqa: E402
from a2a.store.async_store import AsyncStore  # noqa: E402
from a2a.store.chroma import ChromaDecisionStore  # noqa: E402
from tests.openai_embeddings_server import SERVED_MODEL  # noqa: E402
from tests.servers import free_port  # noqa: E402

#: Issue 43: the provider's indexing rate at least the in-process one / 1.5; its query
#: p50 at most 1.5x the in-process one, or at most 2 ms more.
INDEX_RATIO = 1.5
QUERY_RATIO = 1.5
QUERY_EXTRA_MS = 2.0
WARMUP_QUERIES = 10


def start_server(port: int) -> subprocess.Popen[bytes]:
    """tests/openai_embeddings_server.py on `port`, answering (its model loaded)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.openai_embeddings_server", "--port", str(port)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    url = f"http://127.0.0.1:{port}/v1/embeddings"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the embeddings server exited with {process.returncode}")
        try:
            body = {"model": SERVED_MODEL, "input": ["warm-up"]}
            if httpx.post(url, json=body, timeout=10).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    process.kill()
    raise TimeoutError("the embeddings server did not answer within 120 s")


def index_rate(
    embedder: Embedder, records: Sequence[DecisionRecord], folder: Path
) -> tuple[float, ChromaDecisionStore]:
    """Records/s of writing `records` into a fresh store in `folder`, and that store."""
    store = ChromaDecisionStore(data_dir=folder, collection="bench", embedding_model=embedder.name)
    summary = IndexSummary()
    started = time.perf_counter()
    Indexer(store, embedder).write(records, summary)
    seconds = time.perf_counter() - started
    assert summary.new == len(records), summary
    return len(records) / seconds, store


async def query_times(services: list[QueryService], texts: Sequence[str]) -> list[list[float]]:
    """Milliseconds of each text's query, per service, the services asked in turn."""
    params = [QueryDecisionsParams.model_validate({"query": t, "limit": 10}) for t in texts]
    for service in services:
        for warm in params[:WARMUP_QUERIES]:
            await service.query_decisions(warm)
    times: list[list[float]] = [[] for _ in services]
    for param in params:
        for n, service in enumerate(services):
            started = time.perf_counter()
            await service.query_decisions(param)
            times[n].append((time.perf_counter() - started) * 1000)
    return times


def embed_times(embedders: list[Embedder], texts: Sequence[str]) -> list[list[float]]:
    """Milliseconds of each text's `embed_query` alone, per embedder, asked in turn: the
    provider's own cost (HTTP, JSON) beside the model's."""
    times: list[list[float]] = [[] for _ in embedders]
    for text in texts:
        for n, embedder in enumerate(embedders):
            started = time.perf_counter()
            embedder.embed_query(text)
            times[n].append((time.perf_counter() - started) * 1000)
    return times


def percentile(values: Sequence[float], q: int) -> float:
    return round(statistics.quantiles(values, n=100, method="inclusive")[q - 1], 2)


def run(args: argparse.Namespace) -> dict[str, Any]:
    records = generate_records(args.records, seed=7)
    texts = generate_queries(args.queries, seed=11)
    port = free_port()
    server = start_server(port)
    local = load_embedder(DEFAULT_MODEL)
    remote = ProviderEmbedder(
        f"http://127.0.0.1:{port}/v1", SERVED_MODEL, dimensions=384, timeout_seconds=60
    )
    rates: dict[str, list[float]] = {"in_process": [], "provider": []}
    try:
        with tempfile.TemporaryDirectory(prefix="cstp-provider-bench-") as folder:
            stores: dict[str, ChromaDecisionStore] = {}
            for round_ in range(args.rounds):
                for name, embedder in (("in_process", local), ("provider", remote)):
                    where = Path(folder) / f"{name}-{round_}"
                    rate, stores[name] = index_rate(embedder, records, where)
                    rates[name].append(round(rate, 1))
            services = [
                QueryService(
                    AsyncStore(stores[name], timeout_seconds=60.0),
                    embedder,
                    agent_id="bench",
                    batcher=query_batcher(embedder, 256, 5.0),
                )
                for name, embedder in (("in_process", local), ("provider", remote))
            ]
            here, there = asyncio.run(query_times(services, texts))
            alone = embed_times([local, remote], texts)
    finally:
        server.terminate()
        server.wait(timeout=20)
    best_local, best_remote = max(rates["in_process"]), max(rates["provider"])
    p50_local, p50_remote = percentile(here, 50), percentile(there, 50)
    index_ok = best_remote * INDEX_RATIO >= best_local
    query_ok = p50_remote <= max(p50_local * QUERY_RATIO, p50_local + QUERY_EXTRA_MS)
    return {
        "model": DEFAULT_MODEL,
        "records": args.records,
        "queries": args.queries,
        "index_records_per_s": rates,
        "index_ratio": round(best_local / best_remote, 2),
        "query_ms": {
            "in_process": {"p50": p50_local, "p90": percentile(here, 90)},
            "provider": {"p50": p50_remote, "p90": percentile(there, 90)},
        },
        "embed_query_ms_p50": {
            "in_process": percentile(alone[0], 50),
            "provider": percentile(alone[1], 50),
        },
        "query_p50_ratio": round(p50_remote / p50_local, 2),
        "query_p50_extra_ms": round(p50_remote - p50_local, 2),
        "targets": {
            "index_within_1.5x": index_ok,
            "query_within_1.5x_or_2ms": query_ok,
        },
        "cores": len(os.sched_getaffinity(0)),
        "load_average": os.getloadavg(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=300)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    report = run(args)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0 if all(report["targets"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
