"""What the search index holds per record, by part, and the RSS of a replica after a load.

Builds a SearchIndex of `size` generated decisions (bench/graph_bench.py's records:
bench/query_bench.py's generator, embedded with the static 256-d model), writes its
snapshot, then, in a fresh process (its RSS its own, no string shared with the records):
- maps the snapshot (a2a.index.snapshot.load_index) and answers one semantic and one
  keyword query: RSS growth after the load;
- the bytes each part of the index holds, walked object by object (numpy arrays by their
  buffers, mapped files apart, every other Python object by sys.getsizeof), with the
  Python objects per record of each part; the graph by its file's size;
- `SearchIndex.memory_bytes()` when the index has it (the estimate tenants evict by);
- a full garbage collection's pause (`gc.collect()`), before and after `gc.freeze()`.

    python bench/memory_bench.py --size 100000 --cache /tmp/cstp-records-100k.pickle
    python bench/memory_bench.py --size 1000000 --cache /tmp/cstp-records-1m.pickle
"""

from __future__ import annotations

import argparse
import gc
import mmap
import pickle
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

import faiss
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from graph_bench import FAST, _index_of, build_records, rss_mib
from query_bench import generate_queries, percentile

from a2a.embeddings import load_embedder
from a2a.index.snapshot import SnapshotStamp, load_index, write_snapshot
from a2a.records.filters import QueryFilters

#: Graph files of a snapshot: the graph's part is their size.
GRAPH_FILES = ("graph.faiss", "graph_rows.npy")
#: Shared by every instance, not held by the index: classes, modules, functions.
_SKIPPED = (
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
)


def deep_size(root: Any, seen: set[int]) -> tuple[int, int, int]:
    """(bytes in memory, bytes of mapped files, Python objects) reachable from `root`,
    each object counted once across calls sharing `seen`. numpy arrays count their
    buffer (a view its base's), not the objects in an object array; faiss objects nothing
    (the graph is measured by its file)."""
    owned = mapped = objects = 0
    stack = [root]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            base = item
            while isinstance(base, np.ndarray) and base.base is not None:
                base = base.base
            if isinstance(base, mmap.mmap):
                if id(base) not in seen:
                    seen.add(id(base))
                    mapped += len(base)
            elif isinstance(base, np.ndarray):
                if id(base) not in seen or base is item:
                    seen.add(id(base))
                    owned += base.nbytes
            else:  # a buffer of another kind (an unpickled array's): the array's bytes
                owned += item.nbytes
            continue
        if isinstance(item, _SKIPPED) or type(item).__module__.startswith("faiss"):
            continue
        objects += 1
        owned += sys.getsizeof(item)
        if isinstance(item, str | bytes | int | float | bool | type(None)):
            continue
        stack.extend(gc.get_referents(item))
        if hasattr(item, "__dict__") and not isinstance(item, type):
            stack.append(vars(item))
        for klass in type(item).__mro__:
            for slot in getattr(klass, "__slots__", ()):
                if hasattr(item, slot):
                    stack.append(getattr(item, slot))
    return owned, mapped, objects


def parts(index: Any, folder: Path) -> None:
    """One line per attribute of the index: MiB held, MiB mapped, Python objects/record."""
    rows = max(1, len(index))
    seen: set[int] = {id(index.lock), id(type(index))}
    total = mapped_total = objects_total = 0
    print("| part | MiB | mapped MiB | bytes/record | Python objects/record |")
    print("|---|---|---|---|---|")
    skip = {"lock", "_graph", "_masks", "_exact_vectors", "_field_weights"}
    for name, value in sorted(vars(index).items()):
        if name in skip:
            continue
        owned, mapped, objects = deep_size(value, seen)
        if owned + mapped < 4096:
            continue
        total, mapped_total, objects_total = (
            total + owned,
            mapped_total + mapped,
            objects_total + objects,
        )
        print(
            f"| {name} | {owned / 2**20:,.1f} | {mapped / 2**20:,.1f} | "
            f"{(owned + mapped) / rows:,.0f} | {objects / rows:.2f} |"
        )
    graph = sum((folder / f).stat().st_size for f in GRAPH_FILES if (folder / f).exists())
    print(f"| _graph (file size) | {graph / 2**20:,.1f} | - | {graph / rows:,.0f} | 0 |")
    print(
        f"| **total** | {(total + graph) / 2**20:,.1f} | {mapped_total / 2**20:,.1f} | "
        f"{(total + graph + mapped_total) / rows:,.0f} | {objects_total / rows:.2f} |"
    )


def latency(index: Any) -> None:
    """p50 (ms) over 200 queries of what a query costs besides the graph: a semantic
    search (no filter: the graph; ~10%: an exact scan), a keyword search, and reading the
    ten results' summaries (`shown`), which came from a tuple per row and now from columns."""
    embedder = load_embedder(FAST)
    queries = generate_queries(200, seed=11)
    vectors = [np.asarray(embedder.embed_query(q), np.float32) for q in queries]
    rng = np.random.default_rng(5)
    times: dict[str, list[float]] = {"semantic": [], "semantic ~10%": [], "keyword": []}
    times["shown (10 rows)"] = []
    with index.reading():
        mask, passing = index.selection(None)
        narrow, narrow_rows = index.selection(QueryFilters.model_validate({"category": "security"}))
        alive = np.flatnonzero(mask)
        for text, vector in zip(queries, vectors, strict=True):
            for name, call in (
                ("semantic", lambda v=vector: index.semantic(v, mask, 10, passing)),
                ("semantic ~10%", lambda v=vector: index.semantic(v, narrow, 10, narrow_rows)),
                ("keyword", lambda t=text: index.keyword(t, mask, 10, passing)),
                ("shown (10 rows)", lambda: index.shown(rng.choice(alive, 10).tolist())),
            ):
                started = time.perf_counter()
                call()
                times[name].append((time.perf_counter() - started) * 1000)
    print(
        "p50 ms: "
        + ", ".join(f"{name} {percentile(values, 50):.3f}" for name, values in times.items())
    )


def rss_split() -> tuple[float, float]:
    """(anonymous, file-backed) resident MiB of this process: file-backed pages (the mapped
    snapshot) are clean, and the kernel reclaims them under memory pressure."""
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("RssAnon:", "RssFile:")):
            found[line.split(":")[0]] = int(line.split()[1]) / 1024
    return found["RssAnon"], found["RssFile"]


def load_child(root: Path) -> None:
    """A replica's start from the snapshot in `root`, measured (run in a fresh process)."""
    faiss.omp_set_num_threads(1)
    gc.collect()
    before = rss_mib()
    anon_before, file_before = rss_split()
    started = time.perf_counter()
    loaded = load_index(root, model=FAST, dimension=256)
    assert loaded is not None
    index = loaded[0]
    load_s = time.perf_counter() - started
    with index.reading():
        mask, passing = index.selection(None)
        query = np.asarray(index._vectors.matrix[0], np.float32)
        index.semantic(query, mask, 10, passing)
        index.keyword("database migration security", mask, 10, passing)
        index.shown([0, 1, 2])
        filtered = index.mask(QueryFilters.model_validate({"minConfidence": 0.5}))
        index.semantic(query, filtered, 10)
    rss = rss_mib() - before
    anon, file = rss_split()
    print(
        f"snapshot load of {index.alive_count:,} records: {load_s:.2f} s; "
        f"RSS +{rss:,.0f} MiB after the load and three queries "
        f"({rss * 2**20 / len(index):,.0f} bytes/record; anonymous +{anon - anon_before:,.0f}, "
        f"file-backed +{file - file_before:,.0f})"
    )
    latency(index)
    anon, file = rss_split()
    print(
        f"RSS +{rss_mib() - before:,.0f} MiB after 800 more queries (anonymous "
        f"+{anon - anon_before:,.0f}, file-backed +{file - file_before:,.0f}: the pages of the "
        "mapped vectors and columns they read)"
    )
    if hasattr(index, "memory_bytes"):
        print(f"SearchIndex.memory_bytes(): {index.memory_bytes() / 2**20:,.1f} MiB")
    folder = root / (root / "CURRENT").read_text().strip()
    print()
    parts(index, folder)
    print()
    pauses = []
    for _ in range(3):
        started = time.perf_counter()
        gc.collect()
        pauses.append((time.perf_counter() - started) * 1000)
    tracked = len(gc.get_objects())
    gc.freeze()
    frozen = []
    for _ in range(3):
        started = time.perf_counter()
        gc.collect()
        frozen.append((time.perf_counter() - started) * 1000)
    print(
        f"full gc.collect() after the load: {min(pauses):.1f} ms (min of 3); "
        f"after gc.freeze(): {min(frozen):.1f} ms; objects tracked by the collector: "
        f"{tracked:,} before the freeze"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--cache", type=Path, help="keep the embedded records in this file")
    parser.add_argument("--no-graph", action="store_true", help="index without the HNSW graph")
    parser.add_argument("--keep", type=Path, help="write the snapshot into this folder, kept")
    parser.add_argument("--load", type=Path, help=argparse.SUPPRESS)  # the child
    args = parser.parse_args()
    if args.load is not None:
        load_child(args.load)
        return
    faiss.omp_set_num_threads(1)
    started = time.perf_counter()
    if args.cache is not None and args.cache.exists():
        with args.cache.open("rb") as handle:
            records = pickle.load(handle)[: args.size]
    else:
        records = build_records(args.size)
        if args.cache is not None:
            with args.cache.open("wb") as handle:
                pickle.dump(records, handle, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"{len(records):,} records ready in {time.perf_counter() - started:.0f} s")
    started = time.perf_counter()
    if args.no_graph:
        from a2a.index import SearchIndex

        index = SearchIndex(graph_min_rows=None)
        for start in range(0, len(records), 5000):
            index.upsert(records[start : start + 5000])
    else:
        index = _index_of(records)
    print(f"index built in {time.perf_counter() - started:.0f} s")
    stamp = SnapshotStamp(revision="bench", watermark_ms=0, model=FAST, dimension=256)
    with tempfile.TemporaryDirectory() as temporary:
        folder = str(args.keep or temporary)
        started = time.perf_counter()
        written = write_snapshot(index, stamp, Path(folder))
        size = sum(f.stat().st_size for f in written.iterdir()) / 2**20
        print(f"snapshot written in {time.perf_counter() - started:.1f} s: {size:,.0f} MiB")
        del index, records
        gc.collect()
        child = subprocess.run(
            [sys.executable, __file__, "--load", folder], capture_output=True, text=True
        )
        print(child.stdout, end="")
        if child.returncode:
            print(child.stderr, end="")
            raise SystemExit(child.returncode)


if __name__ == "__main__":
    main()
