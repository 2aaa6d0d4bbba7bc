"""Semantic retrieval with a record embedded as several passages, against one vector a record.

    python bench/passages_mrr.py [CORPUS] [QUERIES] [--model NAME] [--json-out FILE]

CORPUS defaults to ../shared/data/adr and QUERIES to ../shared/data/queries-dev.jsonl.
Variants, each scored by MRR@10 (overall and per query kind) and Recall@5, filters applied:

- `record`: one vector a record, the service's text (`DecisionRecord.embedding_text`),
  which the model cuts at 256 word pieces: today's semantic mode.
- `sections`: title + each top-level section of the ADR (`adr_passages`, the importer's
  own section scanner); a record scores as its best passage, one result per record.
- `record+sections`: both sets of vectors, best of all.
- `sections-chunked`: as `sections`, sections longer than CHUNK_WORDS words split into
  chunks of that many words (each again prefixed by the title and heading).

Cost per record: passages (vectors), vector bytes (float32), embedding seconds, and query
time as a ratio to the `record` variant measured in the same run (brute-force numpy dot
products, so the ratio reflects the extra vectors, not an index).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from a2a.embeddings import DEFAULT_MODEL, MODELS, Embedder, load_embedder
from a2a.evaluation import LabelledQuery, load_queries, mean_by_kind, recall_at, reciprocal_rank
from a2a.ingest import discover, load_file
from a2a.ingest.markdown_adr import adr_passages
from a2a.query.params import QueryFilters
from a2a.records import DecisionRecord

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CHUNK_WORDS = 180


@dataclass
class Corpus:
    """The records, and their Markdown text by source."""

    records: list[DecisionRecord]
    markdown: dict[str, str]


def load_corpus(folder: Path) -> Corpus:
    records: list[DecisionRecord] = []
    markdown: dict[str, str] = {}
    for path, root in discover([folder]):
        for record in load_file(path, root).records:
            records.append(record)
            markdown[record.source or ""] = path.read_text(encoding="utf-8")
    return Corpus(records, markdown)


def _chunks(words: list[str], size: int) -> list[str]:
    return [" ".join(words[i : i + size]) for i in range(0, len(words), size)] or [""]


def section_passages(record: DecisionRecord, markdown: str, chunk: int | None) -> list[str]:
    """Title + heading + text of each top-level section (chunked when `chunk` words)."""
    passages = []
    for heading, body in adr_passages(markdown) or [("", record.embedding_text())]:
        prefix = f"{record.title}\n\n{heading}\n".rstrip() + "\n"
        bodies = _chunks(body.split(), chunk) if chunk else [body]
        passages.extend(prefix + text for text in bodies)
    return passages


Variant = Callable[[DecisionRecord, str], list[str]]

VARIANTS: dict[str, Variant] = {
    "record": lambda r, _md: [r.embedding_text()],
    "sections": lambda r, md: section_passages(r, md, None),
    "sections-chunked": lambda r, md: section_passages(r, md, CHUNK_WORDS),
}


@dataclass
class Index:
    """Passage vectors, and for each the position of its record."""

    vectors: np.ndarray
    owner: np.ndarray
    embed_seconds: float

    def best_per_record(self, query: np.ndarray, records: int) -> np.ndarray:
        """Each record's best passage score (cosine similarity), -inf for none."""
        scores = self.vectors @ query
        best = np.full(records, -np.inf)
        np.maximum.at(best, self.owner, scores)
        return best


def build(embedder: Embedder, corpus: Corpus, variant: Variant) -> Index:
    texts, owner = [], []
    for position, record in enumerate(corpus.records):
        passages = variant(record, corpus.markdown[record.source or ""])
        texts.extend(passages)
        owner.extend([position] * len(passages))
    started = time.perf_counter()
    vectors = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
    return Index(vectors, np.asarray(owner), time.perf_counter() - started)


def passes(record: DecisionRecord, filters: dict[str, Any] | None) -> bool:
    """The labelled filters (status, dateAfter, dateBefore, ...) on one record's fields."""
    if not filters:
        return True
    wanted = QueryFilters.model_validate(filters)
    if wanted.status is not None and record.status not in wanted.status:
        return False
    if (wanted.after or wanted.before) and record.date is None:
        return False
    if wanted.after is not None and record.date is not None and record.date < wanted.after:
        return False
    return not (
        wanted.before is not None and record.date is not None and record.date > wanted.before
    )


def rank(
    index: Index, query: np.ndarray, corpus: Corpus, item: LabelledQuery
) -> tuple[list[str], float]:
    """The top 10 sources for one query (filters applied, ties by source) and its time, ms."""
    started = time.perf_counter()
    best = index.best_per_record(query, len(corpus.records))
    elapsed = (time.perf_counter() - started) * 1000
    sources = [r.source or "" for r in corpus.records]
    allowed = [i for i, r in enumerate(corpus.records) if passes(r, item.filters)]
    order = sorted(allowed, key=lambda i: (-best[i], sources[i]))
    return [sources[i] for i in order[:10]], elapsed


def score(
    index: Index, vectors: np.ndarray, corpus: Corpus, queries: Sequence[LabelledQuery]
) -> dict[str, Any]:
    ranks, recalls, times = [], [], []
    for vector, item in zip(vectors, queries, strict=True):
        ranked, elapsed = rank(index, vector, corpus, item)
        ranks.append(reciprocal_rank(ranked, item.relevant))
        recalls.append(recall_at(ranked, item.relevant, 5))
        times.append(elapsed)
    records = len(corpus.records)
    return {
        "mrr@10": round(statistics.fmean(ranks), 3),
        "recall@5": round(statistics.fmean(recalls), 3),
        "mrr@10_by_kind": {k: round(v, 3) for k, v in mean_by_kind(ranks, queries).items()},
        "passages_per_record": round(len(index.vectors) / records, 2),
        "vector_bytes_per_record": round(index.vectors.nbytes / records),
        "embed_ms_per_record": round(index.embed_seconds * 1000 / records, 1),
        "query_ms_p50": statistics.median(times),
        "reciprocal_ranks": ranks,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=SHARED / "adr")
    parser.add_argument("queries", nargs="?", type=Path, default=SHARED / "queries-dev.jsonl")
    parser.add_argument("--model", choices=sorted(MODELS), default=DEFAULT_MODEL)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    corpus = load_corpus(args.corpus)
    queries = load_queries(args.queries)
    embedder = load_embedder(args.model)
    vectors = np.asarray([embedder.embed_query(q.query) for q in queries], dtype=np.float32)
    indexes = {name: build(embedder, corpus, variant) for name, variant in VARIANTS.items()}
    record, sections = indexes["record"], indexes["sections"]
    indexes["record+sections"] = Index(
        np.concatenate([record.vectors, sections.vectors]),
        np.concatenate([record.owner, sections.owner]),
        record.embed_seconds + sections.embed_seconds,
    )
    results = {name: score(index, vectors, corpus, queries) for name, index in indexes.items()}
    floor = results["record"]["query_ms_p50"] or 1e-9
    print(f"{args.model}: {len(corpus.records)} records, {len(queries)} queries")
    kinds = sorted(results["record"]["mrr@10_by_kind"])
    print(
        f"{'variant':<18}{'MRR@10':>8}{'R@5':>7}"
        + "".join(f"{k[:10]:>11}" for k in kinds)
        + f"{'vec/rec':>9}{'bytes/rec':>10}{'embed ms/rec':>13}{'query x':>9}"
    )
    for name, r in results.items():
        r["query_time_ratio"] = round(r["query_ms_p50"] / floor, 2)
        print(
            f"{name:<18}{r['mrr@10']:>8.3f}{r['recall@5']:>7.3f}"
            + "".join(f"{r['mrr@10_by_kind'][k]:>11.3f}" for k in kinds)
            + f"{r['passages_per_record']:>9.2f}{r['vector_bytes_per_record']:>10}"
            f"{r['embed_ms_per_record']:>13.1f}{r['query_time_ratio']:>9.2f}"
        )
    better = sum(
        a > b
        for a, b in zip(
            *(results[n]["reciprocal_ranks"] for n in ("sections", "record")), strict=True
        )
    )
    worse = sum(
        a < b
        for a, b in zip(
            *(results[n]["reciprocal_ranks"] for n in ("sections", "record")), strict=True
        )
    )
    print(f"sections against record: {better} queries ranked better, {worse} worse")
    if args.json_out:
        args.json_out.write_text(json.dumps({"model": args.model, "variants": results}, indent=2))


if __name__ == "__main__":
    main()
