"""The planner's approximate path beside exact search and the graph libraries alone, one run.

Generates `size` synthetic decisions (bench/query_bench.py's generator), embeds them with
the static 256-d model (wordllama: real text vectors, not random ones, whose lack of
structure no graph index handles), indexes them in a SearchIndex (no Chroma: this measures
the index), then for each filter (none, ~50%, ~20%, ~10%, ~0.1%) times, query by query:
- planner: `SearchIndex.semantic(..., exact=False)` (graph walk + exact re-scoring when the
  planner takes it, an exact scan otherwise), and hybrid's semantic half (depth 50);
- exact: `SearchIndex.semantic(..., exact=True)` (the scan `exact: true` gets);
- numpy: one float32 matmul + argpartition under the mask (the exact floor);
- faiss HNSW alone (IndexHNSWFlat, M=32, no filter) and hnswlib alone (M=32, no filter),
  on the same vectors and queries, at EQUAL RECALL: each anchor's efSearch is the smallest
  of `--anchor-breadths` whose mean recall@10 reaches the planner's (the row's), and its
  p50 is the one at that efSearch (shown with it);
and prints p50 (ms) and recall@10 against exact. Then the snapshot: write time, size, and
load time (a2a.index.snapshot) beside a rebuild of the same index from the records, and
RSS after each. `--sweep` prints recall and p50 per breadth and filter fraction (how
GRAPH_CANDIDATES_PER_RESULT and GRAPH_MIN_FRACTION were chosen).

    python bench/graph_bench.py --size 100000 --queries 200 [--sweep]

At 1M the builds are long (one thread: ~15 min per graph); `--snapshot DIR` keeps the
planner's index (with its graph) and `--anchor-cache DIR` the two anchors, so a re-run
loads them instead (`--cache FILE` keeps the embedded records).
"""

from __future__ import annotations

import argparse
import asyncio
import pickle
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import faiss
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from query_bench import generate_queries, generate_records, percentile

from a2a.app.process import configure_process
from a2a.embeddings import load_embedder
from a2a.index import IndexedRecord, SearchIndex
from a2a.index import graph as graph_module
from a2a.index import search_index as planner
from a2a.index.snapshot import SnapshotStamp, load_index, write_snapshot
from a2a.index.sync import LiveIndex
from a2a.records.filters import QueryFilters
from a2a.store.chroma import ChromaDecisionStore

FAST = "wordllama-l2-supercat-256"
K = 10
#: --org: the planner of org-level search (SearchIndex.plan's `org`).
ORG = False
FILTERS: dict[str, dict[str, Any] | None] = {
    "none": None,
    "~50%": {"status": ["decided", "reviewed"], "minConfidence": 0.2},
    "~20%": {"minConfidence": 0.8},
    "~10%": {"category": "security"},
    "~0.1%": {"category": "architecture", "stakes": "critical", "minConfidence": 0.9},
}


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def build_records(size: int) -> list[IndexedRecord]:
    embedder = load_embedder(FAST)
    decisions = generate_records(size, seed=7)
    texts = [d.embedding_text() for d in decisions]
    vectors = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
    return [IndexedRecord(d.id, d, vectors[n], texts[n]) for n, d in enumerate(decisions)]


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return (time.perf_counter() - started) * 1000, result


def recall(found: Sequence[float], truth: Sequence[float]) -> float:
    """recall@k with ties: the share of the k exact results matched by a found row at the
    same or a smaller exact distance (rounded as shown). Rows tied at the k-th distance are
    equally right; exact search picks the smallest ids among them (the generator repeats
    titles, so some queries tie dozens of rows)."""
    if not truth:
        return 1.0
    kth = truth[-1]
    return min(len(truth), sum(1 for d in found if d <= kth)) / len(truth)


def distances_of(vectors: np.ndarray, rows: Sequence[int], q: np.ndarray) -> list[float]:
    """Exact cosine distances (float64, rounded to 6 places) of `rows` to `q`."""
    dots = vectors[np.asarray(rows, np.int64)].astype(np.float64) @ q.astype(np.float64)
    return np.round(np.clip(1 - dots, 0, 2), 6).tolist()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument(
        "--org",
        action="store_true",
        help="the planner as org-level search runs it (walks from ORG_GRAPH_MIN_ROWS rows)",
    )
    parser.add_argument("--sweep-only", action="store_true", help="stop after the sweep")
    parser.add_argument("--breadths", default="64,128,256,384", help="efSearch values to sweep")
    parser.add_argument("--fractions", default="1,0.5,0.2,0.1", help="passing shares to sweep")
    parser.add_argument("--cache", type=Path, help="keep the embedded records in this file")
    parser.add_argument(
        "--chroma", type=Path, help="also time a start through Chroma, store kept in this folder"
    )
    parser.add_argument("--starts-only", action="store_true", help="only the --chroma starts")
    parser.add_argument(
        "--no-anchors", action="store_true", help="leave out faiss and hnswlib alone (1M: ~15 min)"
    )
    parser.add_argument(
        "--anchor-breadths",
        default="16,24,32,48,64,96,128,192,256,384,512,768,1024,1536,2048",
        help="efSearch values tried (ascending) for each anchor to reach the planner's recall",
    )
    parser.add_argument("--snapshot", type=Path, help="load the index from / keep it in here")
    parser.add_argument("--anchor-cache", type=Path, help="load the anchors from / keep them here")
    parser.add_argument("--start", type=Path, help=argparse.SUPPRESS)  # one start (child)
    parser.add_argument(
        "--sweep-snapshot", type=Path, help="sweep the index of this snapshot folder (no build)"
    )
    args = parser.parse_args()
    global ORG
    ORG = args.org
    if args.sweep_snapshot is not None:
        loaded = load_index(args.sweep_snapshot, model=FAST, dimension=256)
        assert loaded is not None, f"no snapshot in {args.sweep_snapshot}"
        embedder = load_embedder(FAST)
        queries = [
            np.asarray(embedder.embed_query(q), np.float32)
            for q in generate_queries(args.queries, seed=11)
        ]
        faiss.omp_set_num_threads(1)
        if args.breadths == "planner":  # the table's planner columns, no anchors
            matrix = np.asarray(loaded[0]._vectors.matrix, np.float32)
            print_table(loaded[0], queries, matrix, None, None)
            return
        breadths = [int(b) for b in args.breadths.split(",")]
        sweep(loaded[0], queries, breadths, [float(f) for f in args.fractions.split(",")])
        return
    if args.start is not None:
        asyncio.run(one_start(args.start))
        return
    faiss.omp_set_num_threads(1)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)
    global ANCHOR_BREADTHS
    ANCHOR_BREADTHS = [int(b) for b in args.anchor_breadths.split(",")]
    embedder = load_embedder(FAST)
    queries = [
        np.asarray(embedder.embed_query(q), np.float32)
        for q in generate_queries(args.queries, seed=11)
    ]
    loaded = None
    starts_only = args.starts_only and args.chroma is not None
    if args.snapshot is not None and (args.snapshot / "CURRENT").exists() and not starts_only:
        load_ms, loaded = timed(lambda: load_index(args.snapshot, model=FAST, dimension=256))
    if loaded is not None and len(loaded[0]) == args.size and loaded[0].graph is not None:
        index, records = loaded[0], None
        print(f"index (graph included) loaded from {args.snapshot} in {load_ms / 1000:.1f} s")
    else:
        records = load_records(args.size, args.cache)
        if starts_only:
            start_lines(args.chroma, records)
            return
        before = rss_mib()
        build_ms, index = timed(lambda: _index_of(records))
        rss_built = rss_mib() - before
        print(
            f"index built from records (graph included) in {build_ms / 1000:.1f} s, "
            f"+{rss_built:.0f} MiB"
        )
        if args.snapshot is not None:
            stamp = SnapshotStamp(revision="bench", watermark_ms=0, model=FAST, dimension=256)
            write_snapshot(index, stamp, args.snapshot)
    vectors = np.asarray(index._vectors.matrix, np.float32)

    if args.sweep or args.sweep_only:
        breadths = [int(b) for b in args.breadths.split(",")]
        sweep(index, queries, breadths, [float(f) for f in args.fractions.split(",")])
        if args.sweep_only:
            return

    flat: Any = None
    hnsw: Any = None
    if not args.no_anchors:
        flat, hnsw = build_anchors(vectors, args.anchor_cache)

    print_table(index, queries, vectors, flat, hnsw)

    snapshot_lines(index)
    if args.chroma is not None:
        del index, flat, hnsw, vectors
        start_lines(args.chroma, records or load_records(args.size, args.cache))


def load_records(size: int, cache: Path | None) -> list[IndexedRecord]:
    """`size` embedded records, from `cache` when it holds them (else made and kept there)."""
    started = time.perf_counter()
    if cache is not None and cache.exists():
        with cache.open("rb") as handle:
            records: list[IndexedRecord] = pickle.load(handle)[:size]
    else:
        records = build_records(size)
        if cache is not None:
            with cache.open("wb") as handle:
                pickle.dump(records, handle, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"generated and embedded {size:,} records in {time.perf_counter() - started:.0f} s")
    return records


def start_lines(folder: Path, records: list[IndexedRecord]) -> None:
    """Start to first answer through Chroma, without a snapshot and with one, each in a
    fresh process (its RSS its own)."""
    store = ChromaDecisionStore(data_dir=folder / "store", collection="bench", embedding_model=FAST)
    if store.count() != len(records):
        started = time.perf_counter()
        decisions = generate_records(len(records), seed=7)
        for start in range(0, len(records), 5000):
            part = records[start : start + 5000]
            vectors = np.asarray([r.embedding for r in part], np.float32)
            store.upsert(decisions[start : start + 5000], vectors)
        print(f"wrote {len(records):,} records to Chroma in {time.perf_counter() - started:.0f} s")
    store.close()
    shutil.rmtree(folder / "snapshots", ignore_errors=True)
    print()
    for label in ("without a snapshot", "with the snapshot"):
        run = subprocess.run(
            [sys.executable, __file__, "--start", str(folder)],
            capture_output=True,
            text=True,
            check=True,
        )
        print(f"start {label}: {run.stdout.strip()}")


async def one_start(folder: Path) -> None:
    configure_process()  # as `cstp serve` does: BLAS and faiss on one thread
    store = ChromaDecisionStore(data_dir=folder / "store", collection="bench", embedding_model=FAST)
    query = np.asarray(load_embedder(FAST).embed_query("postgres migration"), np.float32)
    before = rss_mib()
    started = time.perf_counter()
    live = LiveIndex(
        store, snapshots=folder / "snapshots", model=FAST, dimension=256, snapshot_min_records=0
    )
    index = await live.current()
    with index.reading():
        index.semantic(query, index.mask(None), K)
    first = time.perf_counter() - started
    rss = rss_mib() - before
    with_graph = index.graph is not None
    await live.stop()  # the graph's build and the snapshot's write, when due
    print(
        f"first answer after {first:.1f} s ({'graph' if with_graph else 'exact scan'}), "
        f"+{rss:.0f} MiB RSS then; graph and snapshot done after "
        f"{time.perf_counter() - started:.1f} s"
    )


ANCHOR_BREADTHS = [16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048]


def print_table(
    index: SearchIndex, queries: list[np.ndarray], vectors: np.ndarray, flat: Any, hnsw: Any
) -> None:
    """The table: one row per filter, the planner beside exact, numpy and the anchors (at
    the planner's recall on the row with no filter: the anchors filter nothing)."""
    print(
        "\n| filter | passing | path | planner p50 | recall@10 | hybrid-depth-50 p50 | exact p50 "
        "| numpy p50 | faiss alone p50 / recall / efSearch "
        "| hnswlib alone p50 / recall / efSearch |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    verdicts: list[str] = []
    for name, wire in FILTERS.items():
        filters = None if wire is None else QueryFilters.model_validate(wire)
        with index.reading():
            mask, passing = index.selection(filters)
            count = int(np.count_nonzero(mask))
            path = "graph" if index.plan(mask, passing, ORG) is not None else "exact"
            times, recalls, truths = measure_cell(index, queries, mask, passing, vectors)
        target = float(np.mean(recalls["p"]))
        cells = ["-", "-"]
        verdict = ""
        if wire is None and flat is not None:
            searches = anchor_searches(flat, hnsw)
            chosen = [
                anchor_at_recall(name, set_ef, search, queries, truths, vectors, target)
                for name, set_ef, search in searches
            ]
            cells, verdict = equal_recall_cells(index, queries, mask, passing, searches, chosen)

        def p50(key: str, times: dict[str, list[float]] = times) -> str:
            return f"{percentile(times[key], 50):.2f}" if times[key] else "-"

        print(
            f"| {name} | {count / len(index):.1%} | {path} | {p50('p')} | "
            f"{target:.3f} | {p50('h')} | {p50('e')} | {p50('n')} | {cells[0]} | {cells[1]} |"
        )
        if verdict:
            verdicts.append(verdict)
    for verdict in verdicts:
        print(verdict)


def equal_recall_cells(
    index: SearchIndex,
    queries: list[np.ndarray],
    mask: np.ndarray,
    passing: np.ndarray | None,
    searches: list[tuple[str, Any, Any]],
    chosen: list[tuple[int, float, bool]],
) -> tuple[list[str], str]:
    """The planner and the anchors at their chosen efSearch, timed again in blocks of all
    queries (planner, faiss, hnswlib), twice, each keeping its better p50: every one warm
    as a graph serving back-to-back queries is (interleaving query by query put each walk
    behind the others' cache misses: the planner then ran 3x slower); the anchors' cells
    and the verdict line (planner / best anchor against the allowance max(1.5x, +1 ms))."""
    graph = index.graph
    assert graph is not None
    breadth = index._breadth(int(np.count_nonzero(mask)))
    wanted = max(planner.GRAPH_CANDIDATES_PER_RESULT * K, planner.GRAPH_MIN_CANDIDATES)
    calls: list[Callable[[np.ndarray], Any]] = [
        lambda q: index.semantic(q, mask, K, passing),
        *(search for _, _, search in searches),
        lambda q: graph.search(q, None, wanted, breadth),  # the planner's walk alone
    ]
    for (_, set_ef, _), (ef, _, _) in zip(searches, chosen, strict=True):
        set_ef(ef)
    best_p50s = [float("inf")] * len(calls)
    for _ in range(2):
        for n, call in enumerate(calls):
            times = [timed(lambda q=q, call=call: call(q))[0] for q in queries]
            best_p50s[n] = min(best_p50s[n], percentile(times, 50))
    p50s = best_p50s
    cells = [
        f"{p50:.2f} / {got:.3f} / {'' if reached else '<'}{ef}"
        for p50, (ef, got, reached) in zip(p50s[1:-1], chosen, strict=True)
    ]
    best = min(p50s[1:-1])
    allowance = max(1.5 * best, best + 1.0)
    verdict = (
        f"equal recall, in blocks: planner {p50s[0]:.2f} ms, best anchor {best:.2f} ms: "
        f"{p50s[0] / best:.2f}x, allowance max(1.5x, +1 ms) = {allowance:.2f} ms: "
        f"{'within' if p50s[0] <= allowance else 'OUTSIDE'}; the planner's graph walk alone "
        f"(faiss HNSWSQ fp16, efSearch {breadth}, {wanted} candidates) {p50s[-1]:.2f} ms"
    )
    return cells, verdict


def anchor_searches(flat: Any, hnsw: Any) -> list[tuple[str, Any, Any]]:
    """(name, set its efSearch, top-K rows of a query) of each anchor."""

    def faiss_ef(ef: int) -> None:
        flat.hnsw.efSearch = ef

    def faiss_top(q: np.ndarray) -> np.ndarray:
        return np.asarray(flat.search(q.reshape(1, -1), K)[1][0])

    def hnswlib_top(q: np.ndarray) -> np.ndarray:
        return np.asarray(hnsw.knn_query(q, k=K)[0][0])

    return [("faiss", faiss_ef, faiss_top), ("hnswlib", hnsw.set_ef, hnswlib_top)]


def anchor_at_recall(
    name: str,
    set_ef: Callable[[int], None],
    search: Callable[[np.ndarray], np.ndarray],
    queries: list[np.ndarray],
    truths: list[list[float]],
    vectors: np.ndarray,
    target: float,
) -> tuple[int, float, bool]:
    """`(efSearch, recall, reached)` of the anchor: the smallest efSearch of ANCHOR_BREADTHS
    whose mean recall@10 reaches `target` (the planner's; rounded to 3 places as shown), or
    the largest tried when none does. The sweep (with its p50s) is printed."""
    tried = []
    for ef in ANCHOR_BREADTHS:
        if ef < K:
            continue
        set_ef(ef)
        times, got = [], []
        for q, truth in zip(queries, truths, strict=True):
            t, labels = timed(lambda q=q: search(q))
            times.append(t)
            got.append(recall(distances_of(vectors, labels.tolist(), q), truth))
        mean, p50 = float(np.mean(got)), percentile(times, 50)
        tried.append(f"{ef}: {mean:.3f} @ {p50:.2f} ms")
        if round(mean, 3) >= round(target, 3):
            print(f"{name} sweep (efSearch: recall @ p50): " + ", ".join(tried))
            return ef, mean, True
    print(f"{name} sweep (efSearch: recall @ p50): " + ", ".join(tried))
    return ef, mean, False


def build_anchors(vectors: np.ndarray, cache: Path | None = None) -> tuple[Any, Any]:
    """The graph libraries alone on the same vectors (M=32, the service's efConstruction,
    one thread); loaded from / kept in `cache` when given."""
    import hnswlib

    faiss_file = None if cache is None else cache / f"faiss-{len(vectors)}.index"
    hnswlib_file = None if cache is None else cache / f"hnswlib-{len(vectors)}.bin"
    hnsw = hnswlib.Index(space="ip", dim=vectors.shape[1])
    if faiss_file is not None and faiss_file.exists():
        flat = faiss.read_index(str(faiss_file))
        faiss_build = float("nan")
    else:
        flat = faiss.IndexHNSWFlat(vectors.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
        flat.hnsw.efConstruction = graph_module.BUILD_BREADTH
        faiss_build, _ = timed(lambda: flat.add(vectors))
        if faiss_file is not None:
            faiss_file.parent.mkdir(parents=True, exist_ok=True)
            faiss.write_index(flat, str(faiss_file))
    if hnswlib_file is not None and hnswlib_file.exists():
        hnsw.load_index(str(hnswlib_file), max_elements=len(vectors))
        hnswlib_build = float("nan")
    else:
        hnsw.init_index(max_elements=len(vectors), M=32, ef_construction=graph_module.BUILD_BREADTH)
        hnsw.set_num_threads(1)
        hnswlib_build, _ = timed(lambda: hnsw.add_items(vectors, np.arange(len(vectors))))
        if hnswlib_file is not None:
            hnswlib_file.parent.mkdir(parents=True, exist_ok=True)
            hnsw.save_index(str(hnswlib_file))
    hnsw.set_num_threads(1)
    print(
        f"anchors built: faiss HNSWFlat {faiss_build / 1000:.1f} s, "
        f"hnswlib {hnswlib_build / 1000:.1f} s "
        f"(M=32, efConstruction={graph_module.BUILD_BREADTH}, one thread; nan: from the cache)"
    )
    return flat, hnsw


def measure_cell(
    index: SearchIndex,
    queries: list[np.ndarray],
    mask: np.ndarray,
    passing: np.ndarray | None,
    vectors: np.ndarray,
) -> tuple[dict[str, list[float]], dict[str, list[float]], list[list[float]]]:
    """Per query: ms of planner (p), hybrid's depth-50 semantic half (h), exact (e) and
    numpy (n); recall@10 of p; and the exact top-K distances of each query."""
    times: dict[str, list[float]] = {k: [] for k in ("p", "h", "e", "n")}
    recalls: dict[str, list[float]] = {"p": []}
    truths: list[list[float]] = []
    for q in queries:
        t, exact = timed(lambda q=q: index.semantic(q, mask, K, passing, exact=True))
        times["e"].append(t)
        truth = [m.distance for m in exact]
        truths.append(truth)
        t, got = timed(lambda q=q: index.semantic(q, mask, K, passing, org=ORG))
        times["p"].append(t)
        recalls["p"].append(recall([m.distance for m in got], truth))
        t, _ = timed(lambda q=q: index.semantic(q, mask, 50, passing, org=ORG))
        times["h"].append(t)
        t, _ = timed(lambda q=q: _numpy_top(vectors, q, mask))
        times["n"].append(t)
    return times, recalls, truths


def _index_of(records: list[IndexedRecord]) -> SearchIndex:
    index = SearchIndex()
    for start in range(0, len(records), 5000):
        index.upsert(records[start : start + 5000])
    index.warm()
    return index


def _numpy_top(vectors: np.ndarray, q: np.ndarray, mask: np.ndarray) -> np.ndarray:
    scores = vectors @ q
    scores[~mask] = -np.inf
    return np.argpartition(-scores, K)[:K]


def sweep(
    index: SearchIndex, queries: list[np.ndarray], breadths: list[int], fractions: list[float]
) -> None:
    """Recall@10 and p50 of the graph path per breadth and per filter fraction (forced on)."""
    rng = np.random.default_rng(3)
    size = len(index)
    print("\nsweep: | passing | efSearch | candidates | recall@10 (min over queries) | p50 ms |")
    for fraction in fractions:
        mask = np.ones(size, bool) if fraction == 1.0 else rng.random(size) < fraction
        for breadth in breadths:
            for wanted in (40,):
                got, worst, times = [], 1.0, []
                for q in queries:
                    with index.reading():
                        truth = [m.distance for m in index.semantic(q, mask, K, exact=True)]
                        graph = index.graph
                        assert graph is not None
                        started = time.perf_counter()
                        rows = graph.search(q, None if fraction == 1.0 else mask, wanted, breadth)
                        dots = np.asarray(index._vectors.matrix[rows], np.float32) @ q
                        best = rows[np.argsort(-dots)[:K]]
                        times.append((time.perf_counter() - started) * 1000)
                    r = recall(distances_of(index._vectors.matrix, best.tolist(), q), truth)
                    got.append(r)
                    worst = min(worst, r)
                print(
                    f"| {fraction:.0%} | {breadth} | {wanted} | {np.mean(got):.4f} ({worst:.1f}) "
                    f"| {percentile(times, 50):.2f} |"
                )


def snapshot_lines(index: SearchIndex) -> None:
    stamp = SnapshotStamp(revision="bench", watermark_ms=0, model=FAST, dimension=256)
    with tempfile.TemporaryDirectory() as folder:
        write_ms, written = timed(lambda: write_snapshot(index, stamp, Path(folder)))
        size = sum(f.stat().st_size for f in written.iterdir()) / 2**20
        before = rss_mib()
        load_ms, loaded = timed(lambda: load_index(Path(folder), model=FAST, dimension=256))
        assert loaded is not None
        first_ms, _ = timed(lambda: _first_answer(loaded[0]))
        rss_loaded = rss_mib() - before
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"\nsnapshot: written in {write_ms / 1000:.1f} s ({size:.0f} MiB); loaded in "
            f"{load_ms / 1000:.2f} s, first answer {first_ms:.1f} ms after it; "
            f"+{rss_loaded:.0f} MiB RSS after the load (vectors mapped, pages touched by "
            f"the checksum); peak RSS {peak:.0f} MiB"
        )


def _first_answer(index: SearchIndex) -> None:
    with index.reading():
        mask, passing = index.selection(None)
        index.semantic(np.asarray(index._vectors.matrix[0], np.float32), mask, K, passing)


if __name__ == "__main__":
    main()
