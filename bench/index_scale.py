"""The search index alone at 1M decisions (no Chroma): memory and per-query cost vs floor.

Writing 1M records into Chroma takes longer than a shared machine can give, so this builds
the SearchIndex straight from synthetic decisions with random unit vectors, then times the
synchronous part of a query (`QueryService._answer`: mask, search, metadata, result
models; no freshness check, no thread hop) beside the same floors as scale_bench.py.

    python bench/index_scale.py --size 1000000 --queries 30
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import bm25s
import numpy as np
import Stemmer
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from query_bench import generate_queries, generate_records, percentile
from scale_bench import FAST, FILTERS, MODES, exact_top, keyword_floor, rss_mib

from a2a.embeddings import load_embedder
from a2a.index import IndexedRecord, SearchIndex
from a2a.query.params import QueryDecisionsParams, QueryFilters
from a2a.query.service import HybridConfig, QueryService
from a2a.store.metadata import decode, to_metadata


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=30)
    args = parser.parse_args()
    threadpool_limits(limits=1, user_api="blas")  # as LiveIndex.start does in the service
    embedder = load_embedder(FAST)
    rng = np.random.default_rng(7)
    index = SearchIndex()
    documents: list[str] = []
    started = time.perf_counter()
    tracemalloc.start()
    for first in range(0, args.size, 50_000):
        records = generate_records(min(50_000, args.size - first), seed=first)
        vectors = rng.standard_normal((len(records), 256)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        batch = [
            IndexedRecord(
                f"{first + i:07d}",
                decode(f"{first + i:07d}", to_metadata(r)),
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
        f"built {args.size:,} in {time.perf_counter() - started:.0f} s; traced memory "
        f"{traced:,.0f} MiB (index plus the kept document texts); RSS {rss_mib():,.0f} MiB"
    )
    stemmer = Stemmer.Stemmer("english")
    floor = bm25s.BM25()
    floor.index(
        bm25s.tokenize(documents, stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    del documents
    # The service's answer on this index alone: no Chroma, no LiveIndex, no worker hop.
    service = QueryService.__new__(QueryService)
    service._embedder, service._hybrid, service._default_mode = (
        embedder,
        HybridConfig(),
        "semantic",
    )
    with index.reading():
        vectors = np.asarray(index._vectors.matrix)
        masks = {
            n: index.mask(None if f is None else QueryFilters.model_validate(f))
            for n, f in FILTERS.items()
        }
        print(
            f"{'mode':9} {'filter':7} {'pass':>8} | {'index p50':>9} {'p99':>7} | "
            f"{'floor p50':>9} {'p99':>7} | ratio p50"
        )
        for mode in MODES:
            for name, filters in FILTERS.items():
                ours, floors = [], []
                for text in generate_queries(args.queries, seed=7):
                    params = QueryDecisionsParams.model_validate(
                        {"query": text, "filters": filters, "retrievalMode": mode}
                    )
                    t = time.perf_counter()
                    service._answer(index, params)
                    ours.append((time.perf_counter() - t) * 1000)
                    t = time.perf_counter()
                    q = np.asarray(embedder.embed_query(text), dtype=np.float32)
                    if mode != "keyword":
                        exact_top(vectors, q, masks[name], 10)
                    if mode != "semantic":
                        keyword_floor(floor, stemmer, text, masks[name])
                    floors.append((time.perf_counter() - t) * 1000)
                p50, f50 = percentile(ours, 50), percentile(floors, 50)
                print(
                    f"{mode:9} {name:7} {int(masks[name].sum()):>8} | {p50:>7.1f}ms "
                    f"{percentile(ours, 99):>5.0f}ms | {f50:>7.1f}ms "
                    f"{percentile(floors, 99):>5.0f}ms | {p50 / f50:.2f}x",
                    flush=True,
                )


if __name__ == "__main__":
    main()
