"""Keyword search alone at scale: `SearchIndex.keyword` against bm25s' precomputed floor.

Builds a SearchIndex (tiny random vectors, no Chroma) from `--base` synthetic decisions,
repeated under fresh ids up to `--size` (so 1M builds in minutes: the copies share their
analysed text and stored fields, and bm25s indexes the same token ids repeated). Then, per
filter, each query is timed through the service's keyword path (`SearchIndex.keyword`: analyse,
score, top 10) and through the floor (`keyword_floor`: bm25s tokenise, `get_scores * mask`,
argpartition), the two interleaved query by query, `--repeat` times each, for `--rounds`
rounds. Each round prints p50/p99 of both over each query's first timing and the ratio, then
the same over each query's least timing ("best-of": a time slice lost to another process on
a shared machine drops out, while a query that is slow every time stays slow); the spread
between rounds shows the machine's noise. A last line per round times the first query after
a write (whose new statistics make every term's weights be computed again).

    python bench/keyword_scale.py --size 100000 --queries 100 --rounds 3
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from query_bench import generate_queries, generate_records, percentile
from scale_bench import FILTERS, K, keyword_floor

from a2a.index import IndexedRecord, SearchIndex
from a2a.records.filters import QueryFilters


def build(size: int, base: int) -> tuple[SearchIndex, bm25s.BM25]:
    """The SearchIndex and bm25s model over `size` records (`base` distinct ones, repeated)."""
    records = generate_records(base, seed=7)
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((base, 4)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    documents = [r.embedding_text() for r in records]
    index = SearchIndex()
    for copy in range(0, size, base):
        for first in range(0, min(base, size - copy), 50_000):
            batch = [
                IndexedRecord(f"{copy + i:07d}", records[i], vectors[i], documents[i])
                for i in range(first, min(first + 50_000, base, size - copy))
            ]
            index.upsert(batch)
        print(f"  {min(copy + base, size):,} indexed", flush=True)
    stemmer = Stemmer.Stemmer("english")
    tokenized = bm25s.tokenize(documents, stopwords="en", stemmer=stemmer, show_progress=False)
    ids = [tokenized.ids[i % base] for i in range(size)]
    floor = bm25s.BM25()
    floor.index(bm25s.tokenization.Tokenized(ids, tokenized.vocab), show_progress=False)
    return index, floor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--base", type=int, default=100_000, help="distinct records")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--repeat", type=int, default=3, help="times per query; best-of columns take the least"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    index, floor = build(args.size, min(args.base, args.size))
    print(f"built {args.size:,} in {time.perf_counter() - started:.0f} s", flush=True)
    stemmer = Stemmer.Stemmer("english")
    queries = generate_queries(args.queries, seed=7)
    with index.reading():
        masks = {
            n: index.mask(None if f is None else QueryFilters.model_validate(f))
            for n, f in FILTERS.items()
        }
        for text in queries[:5]:  # warm caches (per-generation statistics, per-term weights)
            index.keyword(text, masks["none"], K)
        print(
            f"{'round':5} {'filter':7} {'pass':>8} | {'keyword p50':>11} {'p99':>7} | "
            f"{'floor p50':>9} {'p99':>7} | ratio p50 | {'best-of p50':>8} {'p99':>7} "
            f"p99/p50 | ratio"
        )
        for round_ in range(1, args.rounds + 1):
            for name, mask in masks.items():
                ours, floors, ours_min, floors_min = [], [], [], []
                for text in queries:
                    mine, theirs = [], []
                    for _ in range(args.repeat):
                        t = time.perf_counter()
                        index.keyword(text, mask, K)
                        mine.append((time.perf_counter() - t) * 1000)
                        t = time.perf_counter()
                        keyword_floor(floor, stemmer, text, mask)
                        theirs.append((time.perf_counter() - t) * 1000)
                    ours.append(mine[0])
                    floors.append(theirs[0])
                    ours_min.append(min(mine))
                    floors_min.append(min(theirs))
                p50, f50 = percentile(ours, 50), percentile(floors, 50)
                q50, q99 = percentile(ours_min, 50), percentile(ours_min, 99)
                print(
                    f"{round_:<5} {name:7} {int(mask.sum()):>8} | {p50:>9.2f}ms "
                    f"{percentile(ours, 99):>5.2f}ms | {f50:>7.2f}ms "
                    f"{percentile(floors, 99):>5.2f}ms | {p50 / f50:>8.2f}x | "
                    f"{q50:>6.2f}ms {q99:>5.2f}ms {q99 / q50:>5.1f}x | "
                    f"{q50 / percentile(floors_min, 50):>5.2f}x",
                    flush=True,
                )
            # The first query after a write recomputes its terms' weights (new statistics).
            cold = []
            for text in queries:
                index._generation += 1  # what every write does; the records stay the same
                t = time.perf_counter()
                index.keyword(text, masks["none"], K)
                cold.append((time.perf_counter() - t) * 1000)
            print(
                f"{round_:<5} {'none, first query after a write':28} | "
                f"{percentile(cold, 50):>6.2f}ms {percentile(cold, 99):>5.2f}ms",
                flush=True,
            )


if __name__ == "__main__":
    main()
