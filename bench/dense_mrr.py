"""Dense retrieval alone, per embedding model: MRR@10 and Recall@5 over labelled queries.

    python bench/dense_mrr.py [CORPUS] [QUERIES] [--model NAME ...]

CORPUS defaults to ../shared/data/adr and QUERIES to ../shared/data/queries-dev.jsonl.
Records are parsed by cstp's own importers and embedded as the service embeds them
(`DecisionRecord.embedding_text`); filters in the queries file are ignored (dense only).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from a2a.embeddings import MODELS, load_embedder
from a2a.ingest import discover, load_file

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=SHARED / "adr")
    parser.add_argument("queries", nargs="?", type=Path, default=SHARED / "queries-dev.jsonl")
    parser.add_argument("--model", action="append", choices=sorted(MODELS))
    args = parser.parse_args()
    records = [r for f, root in discover([args.corpus]) for r in load_file(f, root).records]
    queries = [json.loads(line) for line in args.queries.read_text().splitlines() if line]
    sources = [r.source for r in records]
    print(f"{len(records)} records, {len(queries)} queries")
    print(f"{'model':<32} {'MRR@10':>7} {'R@5':>6} {'embed s':>8} {'query ms':>9}")
    for name in args.model or ["all-minilm-l6-v2-int8", "wordllama-l2-supercat-256"]:
        embedder = load_embedder(name)
        started = time.perf_counter()
        docs = np.array(embedder.embed_documents([r.embedding_text() for r in records]))
        embed_s = time.perf_counter() - started
        started = time.perf_counter()
        vectors = np.array([embedder.embed_query(q["query"]) for q in queries])
        query_ms = (time.perf_counter() - started) * 1000 / len(queries)
        ranks = [
            _first_relevant(docs @ v, sources, q["relevant"])
            for v, q in zip(vectors, queries, strict=True)
        ]
        mrr = sum(1 / r for r in ranks if r and r <= 10) / len(queries)
        recall5 = sum(1 for r in ranks if r and r <= 5) / len(queries)
        print(f"{name:<32} {mrr:>7.3f} {recall5:>6.3f} {embed_s:>8.1f} {query_ms:>9.2f}")


def _first_relevant(scores: np.ndarray, sources: list[str], relevant: list[str]) -> int | None:
    """1-based rank of the first relevant record (ties by source), or None."""
    order = sorted(range(len(sources)), key=lambda i: (-scores[i], sources[i]))
    return next((rank for rank, i in enumerate(order, 1) if sources[i] in relevant), None)


if __name__ == "__main__":
    main()
