"""The graph walk's breadth, sized by measured recall, and the walk beside hnswlib and faiss.

Two parts, one process:

- `--calibrate`: measures, for each store size of `--calibrate-sizes` and each passing
  share of `SHARES`, the smallest efSearch of `GRID` at which the service's walk (our faiss
  HNSWSQ graph, max(2k, 40) candidates scored again exactly, as `SearchIndex.semantic`
  does) keeps mean recall@10 >= `--target` against an exact float64 search, over the
  calibration queries. Each share is measured with a random mask of that share and with
  every filter of `FILTERS` whose share falls in its bucket (the largest efSearch wins);
  the graph grows through the sizes (one build), as a store's does. The index tests'
  clustered 32-d vectors are measured too at `--clustered-sizes` (5k, 10k); the widest
  of the two wins, 1M is carried from the earlier sweeps (`CARRIED`), and the table is
  made monotone (never narrower for more rows or for a smaller share) and written to
  `a2a/index/breadth_table.py`, which `walk_breadth` reads.
- `--builds N`: only the efSearch our graph needs at N rows (no filter) per build: float16
  or float32 codes, efConstruction 128 or 300.
- the side-by-side: at each of `--sizes`, our planner (`SearchIndex.semantic`, the table's
  efSearch; an exact scan under 20% passing) beside hnswlib and faiss HNSW (IndexHNSWFlat),
  each tuned over `--configs` (M, efConstruction) and efSearch to mean recall@10 >= 0.99
  on the calibration queries, in every filter cell (none, broad ~50%, medium ~10%,
  selective ~0.1%: scale_bench's cells). A library in a filter cell walks with the filter
  (faiss: IDSelectorBitmap; hnswlib: its `filter` callable); where no efSearch of the grid
  reaches 0.99 it answers with its own exact search under the filter (faiss IndexFlatIP
  with the selector, hnswlib BFIndex with the filter), marked `flat`. Timed on held-out
  queries (another seed), in batches of `--batch` queries, the engines' order rotated per
  batch (each engine warm within its batch, as a serving graph is); p50 and recall@10 of
  each engine per cell, and our p50 / the best library's.

The vectors are real text vectors: bench/query_bench.py's generated decisions embedded with
the static 256-d model (wordllama), as bench/graph_bench.py and bench/serve_path_bench.py
use. Random unit vectors (scale_bench's `--synthetic-vectors`) have no structure for a graph
to use: their recall per efSearch says nothing of a real store's.

    python bench/walk_bench.py --calibrate --sizes 100000,300000 --cache /tmp/records.pkl \
        --keep /tmp/walk-bench

`--cache FILE` keeps the embedded records (300k: ~5 min to embed here); `--keep DIR` the
built graphs and indexes, so a re-run loads them. One thread for every search (faiss on
one OpenMP thread: 2 were 4x slower here); builds use `--build-threads`.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import faiss
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from graph_bench import load_records
from query_bench import generate_queries, percentile

from a2a.embeddings import load_embedder
from a2a.index import IndexedRecord, SearchIndex, breadth_table
from a2a.index import search_index as planner
from a2a.index.graph import GraphIndex
from a2a.index.snapshot import SnapshotStamp, load_index, write_snapshot
from a2a.records.filters import QueryFilters

FAST = "wordllama-l2-supercat-256"
K = 10
TABLE = Path(__file__).resolve().parent.parent / "a2a" / "index" / "breadth_table.py"
#: Passing shares the table holds (the planner walks from GRAPH_MIN_FRACTION = 0.2).
SHARES = (1.0, 0.5, 0.35, 0.2)
#: efSearch values tried, ascending.
GRID = (
    *(16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256, 288),
    *(320, 352, 384, 448, 512, 576, 640, 704, 768, 896, 1024, 1280, 1536, 1792, 2048),
)
#: Sizes not calibrated by this bench, carried from bench/graph_bench.py's sweeps at 1M
#: (docs/scaling-measurements-graph.md: the smallest efSearch keeping recall@10 >= 0.99 with
#: 100% / 50% / 30% / 20% passing; the 30% need stands for the 35% share). A size past the
#: largest calibrated one takes these until a calibration reaches it.
CARRIED: dict[int, dict[float, int]] = {1_000_000: {1.0: 1024, 0.5: 1448, 0.35: 1871, 0.2: 2048}}
#: Filters of the calibration (bench/graph_bench.py's, in the walk's range).
FILTERS: dict[str, dict[str, Any]] = {
    "~50%": {"status": ["decided", "reviewed"], "minConfidence": 0.2},
    "~20%": {"minConfidence": 0.8},
}
#: The side-by-side's cells (bench/scale_bench.py's).
CELLS: dict[str, dict[str, Any] | None] = {
    "none": None,
    "broad ~50%": {"status": ["decided", "reviewed"], "minConfidence": 0.2},
    "medium ~10%": {"category": "security"},
    "selective ~0.1%": {"category": "architecture", "stakes": "critical", "minConfidence": 0.9},
}


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


def ms(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    out = call()
    return (time.perf_counter() - started) * 1000, out


def truths(vectors: np.ndarray, queries: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """Per query, the exact top-K cosine distances (float64, rounded to 6 places) among the
    rows passing `mask` (None: all), ascending: (queries x K)."""
    rows = np.arange(len(vectors)) if mask is None else np.flatnonzero(mask)
    q64 = queries.astype(np.float64).T
    best = np.full((len(queries), 0), np.inf)
    for start in range(0, len(rows), 32_768):
        block = rows[start : start + 32_768]
        dist = 1.0 - vectors[block].astype(np.float64) @ q64  # rows x queries
        cut = min(K, len(block))
        part = np.partition(dist, cut - 1, axis=0)[:cut].T
        best = np.sort(np.concatenate([best, part], axis=1), axis=1)[:, :K]
    return np.round(np.clip(best, 0, 2), 6)


def recall(vectors: np.ndarray, q: np.ndarray, rows: np.ndarray, truth: np.ndarray) -> float:
    """recall@K with ties (bench/graph_bench.py's): the share of the K exact results matched
    by a returned row at the same or a smaller exact distance."""
    rows = np.asarray(rows, np.int64)
    rows = rows[rows >= 0]
    if len(truth) == 0:
        return 1.0
    found = np.round(np.clip(1 - vectors[rows].astype(np.float64) @ q.astype(np.float64), 0, 2), 6)
    return min(len(truth), int(np.count_nonzero(found <= truth[-1]))) / len(truth)


def walk_top(graph: GraphIndex, vectors: np.ndarray, q: np.ndarray, mask: Any, ef: int) -> Any:
    """What SearchIndex.semantic's walk returns: the graph's candidates scored exactly, best
    K (ties aside)."""
    rows = graph.search(q, mask, planner.graph_candidates(K), ef)
    dots = vectors[rows].astype(np.float64) @ q.astype(np.float64)
    return rows[np.argsort(-dots, kind="stable")[:K]]


def smallest_ef(
    reaches: Callable[[int], float], target: float, grid: Sequence[int] = GRID
) -> tuple[int, float]:
    """`(efSearch, recall)`: the smallest of `grid` whose mean recall reaches `target` (found
    by bisection: recall grows with efSearch), or the largest with its recall."""
    low, high = 0, len(grid) - 1
    top = reaches(grid[high])
    if top < target:
        return grid[high], top
    got = {high: top}
    while low < high:
        mid = (low + high) // 2
        got[mid] = reaches(grid[mid])
        if got[mid] >= target:
            high = mid
        else:
            low = mid + 1
    return grid[high], got[high]


# -- calibration ------------------------------------------------------------------------------


def calibrate(
    vectors: np.ndarray,
    masks: dict[str, np.ndarray],
    queries: np.ndarray,
    sizes: list[int],
    target: float,
    final: GraphIndex | None,
) -> dict[int, dict[float, int]]:
    """The table: per size, per share of SHARES, the smallest efSearch reaching `target`.
    `masks`: each calibration filter's mask over every row (cut to each size); `final`:
    the service's graph of every row (the same adds in the same order: the largest size's
    graph, not built twice)."""
    rng = np.random.default_rng(5)
    graph = GraphIndex(vectors.shape[1])
    table: dict[int, dict[float, int]] = {}
    built = 0
    for size in sizes:
        started = time.perf_counter()
        if size == len(vectors) and final is not None:
            graph = final
        else:
            graph.add(vectors[built:size], np.arange(built, size, dtype=np.int64))
        built = size
        took = time.perf_counter() - started
        part = vectors[:size]
        table[size] = {}
        lines = []
        for n, share in enumerate(SHARES):
            upper = SHARES[n - 1] if n else 1.01
            cell: list[tuple[str, Any]] = []
            if share == 1.0:
                cell.append(("all", None))
            else:
                cell.append((f"random {share:.0%}", rng.random(size) < share))
            for name, mask in masks.items():
                got = float(np.mean(mask[:size]))
                if share <= got < upper:
                    cell.append((f"{name} ({got:.0%})", mask[:size]))
            need = 0
            for name, mask in cell:
                truth = truths(part, queries, mask)

                def reaches(
                    ef: int,
                    mask: Any = mask,
                    truth: Any = truth,
                    graph: Any = graph,
                    part: Any = part,
                ) -> float:
                    return float(
                        np.mean(
                            [
                                recall(part, q, walk_top(graph, part, q, mask, ef), t)
                                for q, t in zip(queries, truth, strict=True)
                            ]
                        )
                    )

                ef, got_recall = smallest_ef(reaches, target)
                lines.append(f"  {name}: efSearch {ef} (recall {got_recall:.4f})")
                need = max(need, ef)
            table[size][share] = need
        print(
            f"calibration at {size:,} rows of {vectors.shape[1]}-d "
            f"(graph grown in {took:.0f} s; {load()}):"
        )
        print("\n".join(lines), flush=True)
    return table


def widest(tables: list[dict[int, dict[float, int]]]) -> dict[int, dict[float, int]]:
    """The widest efSearch of `tables` in each cell, made monotone: never narrower for more
    rows, nor for a smaller share."""
    sizes = sorted(tables[0])
    table = {
        size: {share: max(t[size][share] for t in tables) for share in SHARES} for size in sizes
    }
    for n, size in enumerate(sizes):
        for m, share in enumerate(SHARES):
            wider = [table[size][share]]
            if n:
                wider.append(table[sizes[n - 1]][share])
            if m:
                wider.append(table[size][SHARES[m - 1]])
            table[size][share] = max(wider)
    return table


def clustered(count: int, seed: int, dim: int = 32) -> np.ndarray:
    """Unit vectors around 60 centres (tests/index/helpers.clustered's shape: the index
    tests' data, which needs a wider walk than the bench's text vectors at the same size)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((60, dim)).astype(np.float32)
    vectors = centres[rng.integers(0, 60, count)] + 0.35 * rng.standard_normal((count, dim))
    vectors = vectors.astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def write_table(table: dict[int, dict[float, int]], target: float, queries: int) -> None:
    today = datetime.date.today().isoformat()
    rows = "\n".join(
        f"    {size}: {{{', '.join(f'{s}: {ef}' for s, ef in by_share.items())}}},"
        for size, by_share in table.items()
    )
    TABLE.write_text(
        f'''"""The graph walk's efSearch by store size and passing share, as measured.

Written by `python bench/walk_bench.py --calibrate` ({today}); edit by re-running it, not
by hand. Each entry is the smallest efSearch at which the service's walk (a2a.index.graph:
faiss HNSWSQ fp16, M=32, efConstruction=128, max(2k, 40) candidates scored again exactly)
kept mean recall@10 >= {target} against an exact search over {queries} queries (k=10), at
that many graph nodes with that share passing (a random mask, and the bench's filters of
that share), on two data sets: the bench's generated decisions embedded with the static
256-d model, and 32-d vectors around 60 centres (the index tests' shape, at 5k and 10k).
The widest of them wins; made monotone: never narrower for more rows or a smaller share.
Sizes past the largest calibrated one are carried from bench/graph_bench.py's 1M sweeps
(walk_bench.CARRIED).
`a2a.index.search_index.walk_breadth` reads it.
"""

#: rows -> {{share passing -> efSearch}}, shares descending.
BREADTHS: dict[int, dict[float, int]] = {{
{rows}
}}
'''
    )
    print(f"wrote {TABLE}")


# -- the side-by-side -------------------------------------------------------------------------


class Engine:
    """One library's tuned search in one cell: `search(q)` -> rows, its description."""

    def __init__(self, name: str, search: Callable[[np.ndarray], Any], what: str) -> None:
        self.name, self.search, self.what = name, search, what


def build_library(
    library: str, vectors: np.ndarray, m: int, ef_construction: int, keep: Path | None, threads: int
) -> tuple[Any, float]:
    """(index, build seconds or nan when loaded) of hnswlib or faiss HNSWFlat."""
    import hnswlib

    dim = vectors.shape[1]
    name = f"{library}-{len(vectors)}-M{m}-efc{ef_construction}"
    path = None if keep is None else keep / (name + (".bin" if library == "hnswlib" else ".faiss"))
    if library == "hnswlib":
        index = hnswlib.Index(space="ip", dim=dim)
        if path is not None and path.exists():
            index.load_index(str(path), max_elements=len(vectors))
            index.set_num_threads(1)
            return index, float("nan")
        index.init_index(max_elements=len(vectors), M=m, ef_construction=ef_construction)
        index.set_num_threads(threads)
        took, _ = ms(lambda: index.add_items(vectors, np.arange(len(vectors))))
        index.set_num_threads(1)
        if path is not None:
            index.save_index(str(path))
        return index, took / 1000
    if path is not None and path.exists():
        return faiss.read_index(str(path)), float("nan")
    flat = faiss.IndexHNSWFlat(dim, m, faiss.METRIC_INNER_PRODUCT)
    flat.hnsw.efConstruction = ef_construction
    faiss.omp_set_num_threads(threads)
    took, _ = ms(lambda: flat.add(vectors))
    faiss.omp_set_num_threads(1)
    if path is not None:
        faiss.write_index(flat, str(path))
    return flat, took / 1000


def library_search(library: str, index: Any, mask: np.ndarray | None, ef: int) -> Any:
    """The library's top-K rows of a query at efSearch `ef`, filtered by `mask`."""
    if library == "hnswlib":
        keep = None if mask is None else mask.tolist().__getitem__

        def hnswlib_top(q: np.ndarray) -> Any:
            index.set_ef(ef)
            try:
                return index.knn_query(q, k=K, filter=keep)[0][0].astype(np.int64)
            except RuntimeError:  # found fewer than K passing rows: counted as none found
                return np.zeros(0, dtype=np.int64)

        return hnswlib_top
    params = faiss.SearchParametersHNSW()
    params.efSearch = ef
    if mask is None:
        params.bounded_queue = False
    else:
        bits = np.packbits(mask, bitorder="little")
        params.sel = faiss.IDSelectorBitmap(len(mask), faiss.swig_ptr(bits))
        params.bits = bits  # kept alive with the params

    def faiss_top(q: np.ndarray) -> Any:
        return index.search(q.reshape(1, -1), K, params=params)[1][0]

    return faiss_top


def library_flat(library: str, vectors: np.ndarray, mask: np.ndarray, built: dict[str, Any]) -> Any:
    """The library's exact search under `mask` (its brute force with the filter); the
    brute-force index kept in `built`."""
    if library == "hnswlib":
        import hnswlib

        if library not in built:
            built[library] = hnswlib.BFIndex(space="ip", dim=vectors.shape[1])
            built[library].init_index(max_elements=len(vectors))
            built[library].add_items(vectors, np.arange(len(vectors)))
        brute = built[library]
        keep = mask.tolist().__getitem__

        def hnswlib_flat(q: np.ndarray) -> Any:
            return brute.knn_query(q, k=K, num_threads=1, filter=keep)[0][0].astype(np.int64)

        return hnswlib_flat
    if library not in built:
        built[library] = faiss.IndexFlatIP(vectors.shape[1])
        built[library].add(vectors)
    flat = built[library]
    bits = np.packbits(mask, bitorder="little")
    params = faiss.SearchParameters()
    params.sel = faiss.IDSelectorBitmap(len(mask), faiss.swig_ptr(bits))
    params.bits = bits

    def faiss_flat(q: np.ndarray) -> Any:
        return flat.search(q.reshape(1, -1), K, params=params)[1][0]

    return faiss_flat


def mean_recall(
    search: Callable[[np.ndarray], Any], vectors: np.ndarray, queries: np.ndarray, truth: Any
) -> float:
    return float(
        np.mean([recall(vectors, q, search(q), t) for q, t in zip(queries, truth, strict=True)])
    )


def p50(search: Callable[[np.ndarray], Any], queries: np.ndarray) -> float:
    return percentile([ms(lambda q=q: search(q))[0] for q in queries], 50)


def tune(
    library: str,
    built: dict[tuple[int, int], Any],
    vectors: np.ndarray,
    mask: np.ndarray | None,
    queries: np.ndarray,
    truth: Any,
    target: float,
    flat: Callable[[], Any],
) -> Engine:
    """The library's fastest configuration reaching `target` on `queries` in this cell: per
    (M, efConstruction), the smallest efSearch reaching it, then the lowest p50 of those;
    its exact search under the filter when none reaches it."""
    best: tuple[float, Engine] | None = None
    misses = []
    for (m, efc), index in built.items():

        def reaches(ef: int, index: Any = index) -> float:
            return mean_recall(library_search(library, index, mask, ef), vectors, queries, truth)

        ef, got = smallest_ef(reaches, target)
        if got < target:
            misses.append(f"M={m} efC={efc}: {got:.3f} at efSearch {ef}")
            continue
        search = library_search(library, index, mask, ef)
        took = p50(search, queries)
        if best is None or took < best[0]:
            best = (took, Engine(library, search, f"M={m} efC={efc} efSearch={ef}"))
    if best is not None:
        return best[1]
    return Engine(library, flat(), "flat (HNSW short of it: " + "; ".join(misses) + ")")


def side_by_side(
    size: int,
    records: list[IndexedRecord],
    tuning: np.ndarray,
    held_out: np.ndarray,
    configs: list[tuple[int, int]],
    keep: Path | None,
    threads: int,
    batch: int,
    target: float,
) -> None:
    index = our_index(records[:size], keep)
    vectors = np.ascontiguousarray(index.vectors.matrix[:size], dtype=np.float32)
    print(f"\n## {size:,} rows ({load()})")
    try:
        import hnswlib  # noqa: F401

        libraries = ["hnswlib", "faiss"]
    except ImportError:
        print("hnswlib is not importable here: left out (pip install hnswlib to include it)")
        libraries = ["faiss"]
    built: dict[str, dict[tuple[int, int], Any]] = {}
    for library in libraries:
        built[library] = {}
        for m, efc in configs:
            built[library][(m, efc)], took = build_library(library, vectors, m, efc, keep, threads)
            print(f"{library} M={m} efC={efc}: built in {took:.0f} s (nan: loaded)", flush=True)
    flats: dict[str, Any] = {}
    print(
        "\n| cell | passing | engine | how | p50 ms | recall@10 | ours / best library |\n"
        "|---|---|---|---|---|---|---|"
    )
    for cell, wire in CELLS.items():
        filters = None if wire is None else QueryFilters.model_validate(wire)
        with index.reading():
            mask, passing = index.selection(filters)
        count = int(np.count_nonzero(mask))
        walks = index.plan(mask, passing) is not None
        lib_mask = None if count == size else np.asarray(mask[:size], dtype=bool)
        tune_truth = truths(vectors, tuning, lib_mask)
        held_truth = truths(vectors, held_out, lib_mask)

        def ours(q: np.ndarray, mask: Any = mask, passing: Any = passing) -> Any:
            with index.reading():
                found = index.semantic(q, mask, K, passing)
            return np.asarray([m.row for m in found], np.int64)

        how = (
            f"walk, efSearch {planner.walk_breadth(index.alive_count, count)}"
            if walks
            else "exact scan"
        )
        engines = [Engine("ours", ours, how)]
        for library in libraries:
            engines.append(
                tune(
                    library,
                    built[library],
                    vectors,
                    lib_mask,
                    tuning,
                    tune_truth,
                    target,
                    lambda library=library, m=lib_mask: library_flat(library, vectors, m, flats),
                )
            )
        times: dict[str, list[float]] = {e.name: [] for e in engines}
        for start in range(0, len(held_out), batch):
            turn = (start // batch) % len(engines)
            for engine in engines[turn:] + engines[:turn]:
                for q in held_out[start : start + batch]:
                    times[engine.name].append(ms(lambda q=q, e=engine: e.search(q))[0])
        p50s = {e.name: percentile(times[e.name], 50) for e in engines}
        best = min(p50s[e.name] for e in engines[1:])
        for e in engines:
            got = mean_recall(e.search, vectors, held_out, held_truth)
            ratio = f"{p50s['ours'] / best:.2f}x" if e.name == "ours" else ""
            print(
                f"| {cell} | {count / size:.1%} | {e.name} | {e.what} | {p50s[e.name]:.3f} "
                f"| {got:.4f} | {ratio} |",
                flush=True,
            )
    print(f"({load()} at the end of {size:,})")


def builds(vectors: np.ndarray, queries: np.ndarray, target: float) -> None:
    """Which build choice makes our graph need its breadth: the efSearch at which a walk
    (no filter, max(2k, 40) candidates scored exactly) reaches `target`, for our graph
    (float16 codes, efConstruction 128), the same at efConstruction 300, and faiss
    HNSWFlat (float32) at 128 and 300 (M=32 each)."""
    truth = truths(vectors, queries, None)
    wanted = planner.graph_candidates(K)
    for codes, efc in (("fp16", 128), ("fp16", 300), ("float32", 128), ("float32", 300)):
        if codes == "fp16":
            graph = GraphIndex(vectors.shape[1], build_breadth=efc)
            took, _ = ms(lambda g=graph: g.add(vectors, np.arange(len(vectors), dtype=np.int64)))

            def top(q: np.ndarray, ef: int, g: GraphIndex = graph) -> Any:
                return walk_top(g, vectors, q, None, ef)
        else:
            flat = faiss.IndexHNSWFlat(vectors.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
            flat.hnsw.efConstruction = efc
            took, _ = ms(lambda f=flat: f.add(vectors))

            def top(q: np.ndarray, ef: int, f: Any = flat) -> Any:
                params = faiss.SearchParametersHNSW()
                params.efSearch = max(ef, wanted)
                rows = f.search(q.reshape(1, -1), wanted, params=params)[1][0]
                dots = vectors[rows].astype(np.float64) @ q.astype(np.float64)
                return rows[np.argsort(-dots, kind="stable")[:K]]

        ef, got = smallest_ef(
            lambda ef, top=top: mean_recall(lambda q: top(q, ef), vectors, queries, truth),
            target,
        )
        print(
            f"{len(vectors):,} rows, M=32, {codes} codes, efConstruction {efc}: built in "
            f"{took / 1000:.0f} s, efSearch {ef} for recall@10 {got:.4f}",
            flush=True,
        )


def our_index(records: list[IndexedRecord], keep: Path | None) -> SearchIndex:
    """The service's index of `records` with its graph (kept in / loaded from `keep`)."""
    folder = None if keep is None else keep / f"index-{len(records)}"
    if folder is not None and (folder / "CURRENT").exists():
        loaded = load_index(folder, model=FAST, dimension=256)
        if loaded is not None and loaded[0].graph is not None:
            return loaded[0]
    index = SearchIndex()
    took, _ = ms(
        lambda: [index.upsert(records[s : s + 5000]) for s in range(0, len(records), 5000)]
    )
    print(f"our index of {len(records):,} built in {took / 1000:.0f} s (graph included)")
    if folder is not None:
        stamp = SnapshotStamp(revision="bench", watermark_ms=0, model=FAST, dimension=256)
        write_snapshot(index, stamp, folder)
    return index


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100000,300000")
    parser.add_argument("--queries", type=int, default=200, help="per query set (two sets)")
    parser.add_argument("--calibrate", action="store_true", help="measure and write the table")
    parser.add_argument("--calibrate-sizes", default="5000,10000,20000,50000,100000,200000,300000")
    parser.add_argument("--target", type=float, default=0.99)
    parser.add_argument(
        "--configs", default="16:200,32:200,32:400", help="M:efConstruction of each library"
    )
    parser.add_argument(
        "--clustered-sizes",
        default="5000,10000",
        help="sizes at which the index tests' clustered 32-d vectors are also measured",
    )
    parser.add_argument(
        "--builds", type=int, help="only: the breadth our graph needs per build at this size"
    )
    parser.add_argument("--no-compare", action="store_true", help="only the calibration")
    parser.add_argument(
        "--build-only", action="store_true", help="build (and --keep) the graphs, no timing"
    )
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--build-threads", type=int, default=2)
    parser.add_argument("--cache", type=Path, help="keep the embedded records in this file")
    parser.add_argument("--keep", type=Path, help="keep built graphs and indexes in this folder")
    args = parser.parse_args()
    faiss.omp_set_num_threads(1)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)
    print(f"walk_bench, {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; {load()}")
    sizes = [int(s) for s in args.sizes.split(",")]
    calibrate_sizes = [int(s) for s in args.calibrate_sizes.split(",")] if args.calibrate else []
    largest = max(sizes + calibrate_sizes + ([args.builds] if args.builds else []))
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    records = load_records(largest, args.cache)
    embedder = load_embedder(FAST)

    def query_set(seed: int) -> np.ndarray:
        texts = generate_queries(args.queries, seed=seed)
        return np.asarray([embedder.embed_query(t) for t in texts], np.float32)

    tuning, held_out = query_set(11), query_set(12)
    if args.builds is not None:
        part = np.asarray([r.embedding for r in records[: args.builds]], dtype=np.float32)
        builds(part, tuning, args.target)
        return
    if args.calibrate:
        index = our_index(records[:largest], args.keep)
        masks = {}
        for name, wire in FILTERS.items():
            with index.reading():
                masks[name] = np.array(index.mask(QueryFilters.model_validate(wire)), dtype=bool)
        vectors = np.ascontiguousarray(index.vectors.matrix[:largest], dtype=np.float32)
        assert index.graph is not None
        text = calibrate(vectors, masks, tuning, calibrate_sizes, args.target, index.graph)
        print("text vectors:", text)
        dots = clustered(max(calibrate_sizes), seed=31)
        shaped = calibrate(
            dots, {}, clustered(args.queries, seed=32), calibrate_sizes, args.target, None
        )
        print("clustered vectors:", shaped)
        table = widest([text, shaped])
        write_table(table, args.target, len(tuning))
        importlib.reload(breadth_table)  # walk_breadth reads the table just written
        del index, vectors
    if args.no_compare:
        return
    configs = [(int(m), int(e)) for m, e in (c.split(":") for c in args.configs.split(","))]
    if args.build_only:
        for size in sizes:  # the libraries' graphs only (ours: the run that times them)
            vectors = np.asarray([r.embedding for r in records[:size]], dtype=np.float32)
            for library in ("hnswlib", "faiss"):
                for m, efc in configs:
                    _, took = build_library(library, vectors, m, efc, args.keep, args.build_threads)
                    print(f"{library} {size:,} M={m} efC={efc}: built in {took:.0f} s", flush=True)
        return
    for size in sizes:
        side_by_side(
            size,
            records,
            tuning,
            held_out,
            configs,
            args.keep,
            args.build_threads,
            args.batch,
            args.target,
        )


if __name__ == "__main__":
    main()
