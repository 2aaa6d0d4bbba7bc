"""Filtered search at 100k-1M decisions: the service beside its floor, measured in one run.

For each size it writes synthetic decisions (bench/query_bench.py's generator) into an
embedded Chroma folder through `Indexer.write` (model and Chroma time split: wall time
in each, which overlap little because Chroma's embedded upsert holds the GIL), or with
`--synthetic-vectors` straight through the store with random unit vectors (no model:
for 1M). It loads the search index from Chroma (time, RSS), then for every mode
(semantic, keyword, hybrid) and filter (none, ~50%, ~10%, ~0.1%) times, query by query
and interleaved (each going first on every other query), after a first pass over the cell's
queries that the table leaves out (its service p99 is printed as `cold p99`):
- service: what cstp.queryDecisions computes, `to_wire(QueryService.query_decisions(...))`
  (freshness check, embedding, index search, metadata, the reply's dict; not the JSON
  bytes or HTTP);
- floor: the query embedding plus an exact numpy scan of the same vectors under the same
  precomputed mask (semantic), bm25s scoring masked by it (keyword), both (hybrid).
It prints p50/p99 of each, the service/floor ratio, recall@10 of semantic results against
an exact float64 search, indexing records/s, and RSS.

    python bench/scale_bench.py --sizes 100000 --queries 50 [--data DIR] [--synthetic-vectors]
        [--no-queries]   # stop after the indexing and load lines
    python bench/scale_bench.py --planner     # the gather/scan crossover of a2a.index.vectors

`--data DIR` keeps the stores (DIR/<size>) and reuses one that already holds `size` records.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import Stemmer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from query_bench import generate_queries, generate_records, percentile

from a2a.app.process import configure_process
from a2a.embeddings import Embedder, load_embedder
from a2a.index.sync import LiveIndex
from a2a.index.tokens import analyze_query
from a2a.index.vectors import VectorMatrix
from a2a.ingest.indexer import MODEL_PROCESS_MIN_RECORDS, Indexer, IndexSummary
from a2a.query.params import QueryDecisionsParams
from a2a.query.service import QueryService
from a2a.records.filters import QueryFilters
from a2a.rpc.protocol import to_wire
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore

FAST = "wordllama-l2-supercat-256"
FILTERS: dict[str, dict[str, Any] | None] = {
    "none": None,
    "~50%": {"status": ["decided", "reviewed"], "minConfidence": 0.2},
    "~10%": {"category": "security"},
    "~0.1%": {"category": "architecture", "stakes": "critical", "minConfidence": 0.9},
}
MODES = ("semantic", "keyword", "hybrid")
K = 10


def rss_mib() -> float:
    """Current resident set size of this process, MiB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class TimedEmbedder:
    """An Embedder that adds up the time spent in embed_documents."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.seconds = inner, 0.0
        self.name, self.dimension = inner.name, inner.dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        started = time.perf_counter()
        try:
            return self.inner.embed_documents(texts)
        finally:
            self.seconds += time.perf_counter() - started

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


class TimedStore(ChromaDecisionStore):
    """The embedded store, adding up the time spent in upsert (Chroma's write)."""

    seconds = 0.0

    def upsert(self, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return super().upsert(*args, **kwargs)
        finally:
            TimedStore.seconds += time.perf_counter() - started


def write_store(folder: Path, size: int, embedder: Embedder, synthetic: bool) -> str:
    """Fill `folder` with `size` decisions (unless it already holds them); a report line."""
    store = TimedStore(data_dir=folder, collection="bench", embedding_model=embedder.name)
    if store.count() == size:
        store.close()
        return f"reused the store in {folder} ({size:,} records)"
    records = generate_records(size, seed=7)
    started, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    TimedStore.seconds = 0.0
    if synthetic:
        rng = np.random.default_rng(7)
        for start in range(0, size, 5000):
            batch = records[start : start + 5000]
            vectors = rng.standard_normal((len(batch), embedder.dimension)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            store.upsert(batch, vectors)
        model = 0.0
    else:
        timed = TimedEmbedder(embedder)
        indexer = Indexer(store, timed, model_process_min=MODEL_PROCESS_MIN_RECORDS)  # type: ignore[arg-type]
        indexer.write(records, IndexSummary())
        model = timed.seconds
    total = time.perf_counter() - started
    used, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    own_cpu = used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime
    store.close()
    chroma = TimedStore.seconds
    in_child = not synthetic and size >= MODEL_PROCESS_MIN_RECORDS
    return (
        f"indexing {size:,}: {size / total:,.0f} records/s overall ({total:.0f} s); "
        + ("model in a child process, " if in_child else f"model {model:.0f} s, ")
        + f"Chroma writes {chroma:.0f} s ({size / chroma:,.0f} rec/s alone); CPU {own_cpu:.0f} s "
        f"in this process, {children.ru_utime + children.ru_stime:.0f} s in children"
    )


def exact_top(vectors: np.ndarray, query: np.ndarray, mask: np.ndarray, k: int) -> np.ndarray:
    """Floor: rows of the k best inner products under `mask` (numpy, gather or full scan)."""
    rows = np.flatnonzero(mask)
    few = len(rows) < 0.15 * len(mask)
    scores = vectors[rows] @ query if few else (vectors @ query)[rows]
    if len(rows) > k:
        best = np.argpartition(-scores, k - 1)[:k]
        return rows[best]
    return rows


def exact_ids(
    vectors: np.ndarray, ids: Sequence[str], query: np.ndarray, mask: np.ndarray, k: int
) -> list[str]:
    """Ground truth for recall@k: the k ids under `mask` with the smallest float64 cosine
    distance rounded to 6 places, ties by id (scored in blocks: no 1M x dim float64 copy)."""
    rows = np.flatnonzero(mask)
    q64 = query.astype(np.float64)
    dots = np.empty(len(rows))
    for start in range(0, len(rows), 65_536):
        block = rows[start : start + 65_536]
        dots[start : start + len(block)] = vectors[block].astype(np.float64) @ q64
    distances = np.round(1 - dots, 6)
    if len(distances) > k:
        keep = distances <= np.partition(distances, k - 1)[k - 1]
        rows, distances = rows[keep], distances[keep]
    ranked = sorted(zip(distances.tolist(), (ids[r] for r in rows.tolist()), strict=True))
    return [record_id for _, record_id in ranked[:k]]


def keyword_floor(model: bm25s.BM25, stemmer: Any, text: str, mask: np.ndarray) -> np.ndarray:
    """Floor: bm25s scores of `text` under `mask`, top k by argpartition."""
    tokens = bm25s.tokenize(
        text, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
    )[0]
    scores = model.get_scores(tokens) * mask
    return np.argpartition(-scores, K)[:K]


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return (time.perf_counter() - started) * 1000, result


async def measure(
    size: int, folder: Path, embedder: Embedder, queries: list[str], *, with_queries: bool = True
) -> None:
    store = ChromaDecisionStore(data_dir=folder, collection="bench", embedding_model=embedder.name)
    before = rss_mib()
    live = LiveIndex(store)
    started = time.perf_counter()
    await live.current()
    load_s = time.perf_counter() - started
    index_rss = rss_mib() - before
    index = live.index
    print(
        f"load {size:,}: {load_s:.1f} s; index RSS +{index_rss:,.0f} MiB "
        f"({index_rss / size * 100_000:,.0f} MiB per 100k)",
        flush=True,
    )
    if not with_queries:
        store.close()
        return
    service = QueryService(AsyncStore(store, 30), embedder, "bench", index=live)
    with index.reading():
        vectors = np.asarray(index._vectors.matrix, dtype=np.float32)
        ids = list(index.ids)
        masks = {
            name: index.mask(None if f is None else QueryFilters.model_validate(f))
            for name, f in FILTERS.items()
        }
        documents = None
    records = {r.id: r for r in generate_records(size, seed=7)}
    documents = [records[i].embedding_text() for i in ids]
    stemmer = Stemmer.Stemmer("english")
    floor_bm25 = bm25s.BM25()
    floor_bm25.index(
        bm25s.tokenize(documents, stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    del records, documents
    await print_cells(service, embedder, queries, vectors, ids, masks, floor_bm25, stemmer)
    print(f"RSS now {rss_mib():,.0f} MiB (index, floor bm25s model, numpy copies)")
    store.close()


async def print_cells(
    service: QueryService,
    embedder: Embedder,
    queries: list[str],
    vectors: np.ndarray,
    ids: Sequence[str],
    masks: dict[str, np.ndarray],
    floor_bm25: bm25s.BM25,
    stemmer: Any,
) -> None:
    """Time every mode x filter cell: the service's wire answer beside its floor, query by
    query, each going first on every other query; print p50/p99, ratios and recall@10."""
    print(
        f"{'mode':9} {'filter':7} {'pass':>7} | {'service p50':>11} {'p99':>7} | "
        f"{'floor p50':>9} {'p99':>7} | {'ratio p50':>9} {'p99/p50':>7} | recall@10 | cold p99"
    )
    for mode in MODES:
        for name, filters in FILTERS.items():
            mask = masks[name]
            service_ms, floor_ms, recalls = [], [], []
            checks: list[tuple[np.ndarray, list[str]]] = []

            def floor(text: str, mask: np.ndarray = mask, mode: str = mode) -> Any:
                q = np.asarray(embedder.embed_query(text), dtype=np.float32)
                top = None
                if mode != "keyword":
                    top = exact_top(vectors, q, mask, K)
                if mode != "semantic":
                    keyword_floor(floor_bm25, stemmer, text, mask)
                return q, top

            every = [
                QueryDecisionsParams.model_validate(
                    {"query": text, "filters": filters, "limit": K, "retrievalMode": mode}
                )
                for text in queries
            ]
            # A first pass over the cell's queries, each side once, before the timed one: a
            # query that needs more memory than any before it touches pages the process never
            # used, and on this VM a first touch costs ~14 us a page (2,044 page faults, +53
            # ms, on one keyword query at 1M; 490, +7 ms, on the first ~10% one at 100k).
            # The table compares steady states; `cold p99` is the service's in that pass.
            cold_ms = []
            for text, params in zip(queries, every, strict=True):
                started = time.perf_counter()
                to_wire(await service.query_decisions(params))
                cold_ms.append((time.perf_counter() - started) * 1000)
                floor(text)
            analyze_query.cache_clear()  # the pass leaves no query analysed that was not before
            for turn, (text, params) in enumerate(zip(queries, every, strict=True)):
                # Each goes first on every other query: neither always finds the rows the
                # other just read in the CPU's caches.
                if turn % 2:
                    ms, (q, _) = timed(lambda text=text: floor(text))
                started = time.perf_counter()
                wire = to_wire(await service.query_decisions(params))
                service_ms.append((time.perf_counter() - started) * 1000)
                if not turn % 2:
                    ms, (q, _) = timed(lambda text=text: floor(text))
                floor_ms.append(ms)
                if mode == "semantic":
                    checks.append((q, [x["id"] for x in wire["decisions"]]))
            # Recall after the timed loop: its float64 scan between queries evicted the
            # caches, which cost the service (more Python, per-row metadata) more than the floor.
            for q, got in checks:
                want = exact_ids(vectors, ids, q, mask, K)
                recalls.append(len(set(want) & set(got)) / max(len(want), 1))
            p50, p99 = percentile(service_ms, 50), percentile(service_ms, 99)
            f50, f99 = percentile(floor_ms, 50), percentile(floor_ms, 99)
            recall = f"{min(recalls):.2f}" if recalls else "-"
            print(
                f"{mode:9} {name:7} {int(mask.sum()):>7} | {p50:>9.2f}ms {p99:>5.1f}ms | "
                f"{f50:>7.2f}ms {f99:>5.1f}ms | {p50 / f50:>8.2f}x {p99 / p50:>6.1f}x | "
                f"{recall:>9} | {percentile(cold_ms, 99):>6.1f}ms",
                flush=True,
            )


def planner() -> None:
    """Time gather-then-score against score-all-then-mask at several selectivities."""
    rng = np.random.default_rng(0)
    n, dim = 100_000, 256
    matrix = VectorMatrix()
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    matrix.append(vectors / np.linalg.norm(vectors, axis=1, keepdims=True), np.arange(n))
    q = matrix.matrix[0].copy()
    print(f"{'pass':>6} | {'gather ms':>9} | {'scan ms':>8}")
    for fraction in (0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8):
        mask = rng.random(n) < fraction
        rows = np.flatnonzero(mask)
        gather = min(timed(lambda r=rows: matrix._gathered_dot(r, q))[0] for _ in range(20))
        scan = min(timed(lambda r=rows: (matrix.matrix @ q)[r])[0] for _ in range(20))
        print(f"{fraction:>6.0%} | {gather:>9.2f} | {scan:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--model", default=FAST)
    parser.add_argument("--data", type=Path)
    parser.add_argument("--synthetic-vectors", action="store_true")
    parser.add_argument("--planner", action="store_true")
    parser.add_argument("--no-queries", action="store_true")
    args = parser.parse_args()
    configure_process()  # as `cstp serve` does: BLAS and faiss on one thread
    if args.planner:
        planner()
        return
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    embedder = load_embedder(args.model)
    queries = generate_queries(args.queries, seed=7)
    with tempfile.TemporaryDirectory() as scratch:
        root = args.data or Path(scratch)
        for size in (int(s) for s in args.sizes.split(",")):
            folder = root / str(size)
            print(write_store(folder, size, embedder, args.synthetic_vectors), flush=True)
            asyncio.run(measure(size, folder, embedder, queries, with_queries=not args.no_queries))


if __name__ == "__main__":
    main()
