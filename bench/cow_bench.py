"""Why the search index keeps its readers-writer lock rather than copy-on-write snapshots.

The alternative (issue 24): every write builds a new index state and swaps it in, so a
reader never takes a lock. Without persistent (chunked, shared) arrays, the simple form of
that copies every part of the index on each write. This bench measures, on one index in one
process (the same run, so the ratios hold on a noisy machine):

- a reader's cost of the lock today: `with index.reading()` and the inline path's
  `try_reading()` + `stop_reading()`, per call (us);
- one write today: `SearchIndex.upsert` of one record (under the write lock), ms;
- one copy-on-write write, two ways: its floor, one memcpy of as many bytes as the index
  holds (SearchIndex.memory_bytes; any whole-state copy moves at least these), and the
  plain way, a deep copy of every part (the columns, the vectors, BM25 and tag postings,
  the text and list fields, the id map; the graph not even counted) then the same
  one-record upsert into the copy; and the memory a second state holds while readers of
  the old one finish.

    OMP_NUM_THREADS=1 .venv/bin/python bench/cow_bench.py --size 100000 \\
        --cache /tmp/i27c/records-100k.pickle
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from graph_bench import load_records

from a2a.index import IndexedRecord, SearchIndex


def per_call_us(call: Callable[[], object], repeat: int) -> float:
    """Median of 5 rounds of `repeat` calls, microseconds per call."""
    rounds = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(repeat):
            call()
        rounds.append((time.perf_counter() - started) / repeat * 1e6)
    return statistics.median(rounds)


def copied(index: SearchIndex) -> SearchIndex:
    """A whole copy of `index`'s state (what a copy-on-write write starts from): every
    array and map copied, the lock and the graph left out."""
    twin = copy.copy(index)
    for name, value in vars(index).items():
        if name in ("lock", "_graph", "_masks"):
            continue
        setattr(twin, name, copy.deepcopy(value))
    twin._graph = None
    return twin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--cache", type=Path, help="embedded records (graph_bench.py's)")
    parser.add_argument("--writes", type=int, default=10)
    parser.add_argument("--copies", type=int, default=3, help="deep copies timed (slow)")
    args = parser.parse_args()

    records = load_records(args.size, args.cache)
    index = SearchIndex(graph_min_rows=10**12)  # no graph: a copy would only cost more
    index.upsert(records[: -args.writes])
    extra: list[IndexedRecord] = records[-args.writes :]

    with_block = per_call_us(lambda: _with_reading(index), 100_000)
    inline = per_call_us(lambda: index.lock.try_reading() and index.lock.stop_reading(), 100_000)

    today, floor, cow = [], [], []
    for record in extra[: -args.copies]:
        started = time.perf_counter()
        index.upsert([record])
        today.append((time.perf_counter() - started) * 1000)
    held = np.ones(index.memory_bytes(), dtype=np.uint8)
    for _ in range(5):
        started = time.perf_counter()
        held.copy()
        floor.append((time.perf_counter() - started) * 1000)
    for record in extra[-args.copies :]:
        started = time.perf_counter()
        twin = copied(index)
        twin.upsert([record])
        cow.append((time.perf_counter() - started) * 1000)
    write_ms, cow_ms = statistics.median(today), statistics.median(cow)
    floor_ms, second_mib = statistics.median(floor), held.nbytes / 2**20

    print(f"index of {len(index):,} records, {index.dimension}-d vectors, no graph")
    print(f"reader, `with index.reading()`:            {with_block:8.2f} us per call")
    print(f"reader, try_reading + stop_reading (inline): {inline:8.2f} us per call")
    print(f"one write today (lock, upsert of 1):       {write_ms:8.2f} ms (p50 of {len(today)})")
    print(f"copy-on-write floor (memcpy of the index): {floor_ms:8.2f} ms (p50 of 5)")
    print(f"copy-on-write, deep copy + upsert of 1:    {cow_ms:8.2f} ms (p50 of {len(cow)})")
    print(
        f"  = {floor_ms / write_ms:,.0f}x (floor) to {cow_ms / write_ms:,.0f}x (deep copy) a"
        f" write today; a second state holds {second_mib:,.0f} MiB"
    )
    print(f"  the lock a reader skips costs {with_block:.2f} us; a semantic query ~0.5 ms")


def _with_reading(index: SearchIndex) -> None:
    with index.reading():
        pass


if __name__ == "__main__":
    main()
