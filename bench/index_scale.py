"""The search index at 1M decisions without writing them to Chroma: memory and query cost.

Writing 1M records into Chroma takes longer than a shared machine can give (~30-60 min
here), so this fills the service's own index straight from synthetic decisions with random
unit vectors: a LiveIndex over an empty embedded Chroma folder is loaded, then its
SearchIndex is given the records directly. Queries then run the whole
`QueryService.query_decisions` path (freshness check, inline answer or worker hop, mask,
search, metadata, result models), timed beside the same floors as scale_bench.py,
interleaved query by query (each going first on every other query).

    python bench/index_scale.py --size 1000000 --queries 30
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from query_bench import generate_queries, generate_records
from scale_bench import FAST, FILTERS, print_cells, rss_mib

from a2a.app.process import configure_process
from a2a.embeddings import load_embedder
from a2a.index import IndexedRecord
from a2a.index.sync import LiveIndex
from a2a.query.service import QueryService
from a2a.records.filters import QueryFilters
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore


async def measure(size: int, queries: int, folder: Path) -> None:
    embedder = load_embedder(FAST)
    store = ChromaDecisionStore(data_dir=folder, collection="bench", embedding_model=embedder.name)
    live = LiveIndex(store)
    service = QueryService(AsyncStore(store, 30), embedder, "bench", index=live)
    await live.current()  # loads the empty collection; nothing is written to Chroma after
    index = live.index
    rng = np.random.default_rng(7)
    documents: list[str] = []
    started = time.perf_counter()
    before = rss_mib()
    tracemalloc.start()
    for first in range(0, size, 50_000):
        records = generate_records(min(50_000, size - first), seed=first)
        vectors = rng.standard_normal((len(records), 256)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        batch = [
            IndexedRecord(
                f"{first + i:07d}",
                r,
                vectors[i],
                r.embedding_text(),
            )
            for i, r in enumerate(records)
        ]
        index.upsert(batch)
        documents.extend(r.document for r in batch)
        print(f"  {first + len(batch):,} indexed", flush=True)
    traced = tracemalloc.get_traced_memory()[0] / 2**20
    tracemalloc.stop()
    print(
        f"built {size:,} in {time.perf_counter() - started:.0f} s; traced memory "
        f"{traced:,.0f} MiB (index plus the kept document texts); RSS +{rss_mib() - before:,.0f} "
        "MiB",
        flush=True,
    )
    stemmer = Stemmer.Stemmer("english")
    floor = bm25s.BM25()
    floor.index(
        bm25s.tokenize(documents, stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    del documents
    with index.reading():
        vectors = np.asarray(index._vectors.matrix)
        masks = {
            n: index.mask(None if f is None else QueryFilters.model_validate(f))
            for n, f in FILTERS.items()
        }
    queries_text = generate_queries(queries, seed=7)
    await print_cells(service, embedder, queries_text, vectors, index.ids, masks, floor, stemmer)
    print(f"RSS now {rss_mib():,.0f} MiB (index, floor bm25s model, numpy copies)")
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=30)
    args = parser.parse_args()
    configure_process()  # as `cstp serve` does: BLAS and faiss on one thread
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    with tempfile.TemporaryDirectory() as scratch:
        asyncio.run(measure(args.size, args.queries, Path(scratch)))


if __name__ == "__main__":
    main()
