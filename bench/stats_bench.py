"""cstp.getStats at 100k decisions against a filtered query, measured in one run.

Fills a SearchIndex with synthetic decisions (bench/query_bench.py's generator, random unit
vectors, agents spread over 20 writers, no Chroma: getStats never reads it) and times,
interleaved, query by query:
- getStats: `DecisionService.get_stats` over the index (IndexTable), no filters and the
  ~10% filter, to the wire dict;
- floor: a filtered query's index part, `SearchIndex.semantic` top 10 under the ~10%
  filter's mask (what cstp.queryDecisions computes after embedding the query).
It prints p50/p99 of each and the getStats/floor ratio (CONTRACT.md: getStats answers from
the index "in the same order of time as a filtered query").

    python bench/stats_bench.py --size 100000 --rounds 50
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from query_bench import generate_records, percentile

from a2a.decisions.indexed import IndexTable
from a2a.decisions.params import GetStatsParams
from a2a.decisions.service import DecisionService
from a2a.index import IndexedRecord, SearchIndex
from a2a.records.filters import QueryFilters
from a2a.rpc.protocol import to_wire
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore

FILTER = {"category": "security"}
DIMENSION = 256


class FixedIndex:
    """The one index this bench builds, as an IndexSource (nothing else writes it)."""

    def __init__(self, index: SearchIndex) -> None:
        self.index = index

    async def current(self) -> SearchIndex:
        return self.index


async def run_sync(call):  # type: ignore[no-untyped-def]
    return call()


def build(size: int) -> SearchIndex:
    rng = np.random.default_rng(7)
    index = SearchIndex()
    records = generate_records(size, seed=7)
    for start in range(0, size, 10_000):
        chunk = records[start : start + 10_000]
        vectors = rng.standard_normal((len(chunk), DIMENSION)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        batch = []
        for n, record in enumerate(chunk):
            record = record.model_copy(update={"recorded_by": f"agent-{(start + n) % 20}"})
            batch.append(IndexedRecord(record.id, record, vectors[n], record.title))
        index.upsert(batch)
    return index


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    started = time.perf_counter()
    index = build(args.size)
    print(f"{args.size} decisions indexed in {time.perf_counter() - started:.1f} s")
    # The service never touches the store for getStats; an embedded folder stands in.
    folder = Path(tempfile.mkdtemp(prefix="cstp-stats-bench-"))
    chroma = ChromaDecisionStore(data_dir=folder, collection="x", embedding_model="none")
    store = AsyncStore(chroma, 5)
    service = DecisionService(store, None, IndexTable(FixedIndex(index), run_sync))  # type: ignore[arg-type]
    filters = QueryFilters.model_validate(FILTER)
    query = np.random.default_rng(1).standard_normal(DIMENSION).astype(np.float32)

    def floor() -> None:
        with index.reading():
            mask, passing = index.selection(filters)
            index.semantic(query, mask, 10, passing)

    timings: dict[str, list[float]] = {
        "getStats (no filter)": [],
        "getStats (~10%)": [],
        "filtered query (~10%)": [],
    }
    for n in range(args.rounds + 3):
        order = ["a", "b", "c"] if n % 2 else ["c", "b", "a"]
        for step in order:
            t = time.perf_counter()
            if step == "a":
                to_wire(await service.get_stats(GetStatsParams()))
                name = "getStats (no filter)"
            elif step == "b":
                to_wire(await service.get_stats(GetStatsParams.model_validate({"filters": FILTER})))
                name = "getStats (~10%)"
            else:
                floor()
                name = "filtered query (~10%)"
            if n >= 3:  # warm-up rounds left out
                timings[name].append((time.perf_counter() - t) * 1000)
    floor_p50 = percentile(timings["filtered query (~10%)"], 50)
    for name, values in timings.items():
        p50, p99 = percentile(values, 50), percentile(values, 99)
        print(
            f"{name:24s} p50 {p50:7.2f} ms  p99 {p99:7.2f} ms"
            f"  ratio to floor p50 {p50 / floor_p50:5.2f}x"
        )


if __name__ == "__main__":
    asyncio.run(main())
