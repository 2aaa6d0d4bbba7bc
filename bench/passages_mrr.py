"""Semantic retrieval with a record embedded as several passages, against one vector a record.

    python bench/passages_mrr.py [CORPUS] [QUERIES] [--model NAME] [--cache DIR] [--json-out FILE]

CORPUS defaults to ../shared/data/adr and QUERIES to ../shared/data/queries-dev.jsonl.
Variants, each scored by MRR@10 (overall and per query kind) and Recall@5, filters applied:

- `record`: one vector a record, the service's text (`DecisionRecord.embedding_text`),
  which the model cuts at 256 word pieces: today's semantic mode.
- `sections`: title + each top-level section of the ADR (`adr_passages`, the importer's
  own section scanner); a record scores as its best passage, one result per record.
- `record+sections`: both sets of vectors, best of all.
- `sections-chunked`: as `sections`, sections longer than CHUNK_WORDS words split into
  chunks of that many words (each again prefixed by the title and heading).

Each variant is also fused with BM25 (`hybrid` column): the service's keyword index over the
same records, top 50 of each ranking, fused by the shipped settings (`CSTP_FUSION_METHOD`,
`CSTP_HYBRID_*`), so the column says what passages would do to the hybrid mode.

Cost per record: passages (vectors), vector bytes (float32), embedding time as a ratio to
the `record` variant, and query time (dot products + best passage per record, numpy brute
force) as a ratio to the `record` variant, measured in the same run. `--cache DIR` keeps
each variant's vectors and embedding seconds (per model) so that a second run skips the
embedding; its embedding times are then those of the runs that filled the cache.
"""

from __future__ import annotations

import os

# One BLAS thread: scoring a query takes microseconds, and OpenBLAS's thread pool on a busy
# machine would time its own scheduling instead of the extra passages.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from a2a.app.stack import fusion_config
from a2a.embeddings import DEFAULT_MODEL, MODELS, Embedder, load_embedder
from a2a.evaluation.metrics import mean_by_kind, recall_at, reciprocal_rank
from a2a.evaluation.queries import LabelledQuery, load_queries
from a2a.index.bm25 import BM25Index
from a2a.index.tokens import analyze
from a2a.ingest import discover, load_file
from a2a.ingest.markdown_adr import adr_passages
from a2a.query.fusion import fuse
from a2a.query.keyword import KeywordHit
from a2a.records import DecisionRecord
from a2a.records.filters import QueryFilters
from a2a.settings import load_settings

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CHUNK_WORDS = 180
#: Depth of each ranking before fusing, as the service's hybrid mode reads them.
DEPTH = 50
#: Times each query's scoring is repeated for its time (one is a few microseconds).
TIMING_REPEATS = 20


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
    """Passage vectors grouped by record (`starts[i]`: the first passage of record i)."""

    vectors: np.ndarray
    starts: np.ndarray
    embed_seconds: float

    def best_per_record(self, query: np.ndarray) -> np.ndarray:
        """Each record's best passage score (cosine similarity), in record order."""
        return np.maximum.reduceat(self.vectors @ query, self.starts)


def _group(vectors: np.ndarray, owner: np.ndarray, seconds: float) -> Index:
    order = np.argsort(owner, kind="stable")
    owner = owner[order]
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    return Index(vectors[order], starts, seconds)


def build(
    embedder: Embedder, corpus: Corpus, name: str, variant: Variant, cache: Path | None
) -> Index:
    texts, owner = [], []
    for position, record in enumerate(corpus.records):
        passages = variant(record, corpus.markdown[record.source or ""])
        texts.extend(passages)
        owner.extend([position] * len(passages))
    stored = None if cache is None else cache / f"{embedder.name}-{name}.npz"
    if stored is not None and stored.is_file():
        saved = np.load(stored)
        if len(saved["vectors"]) == len(texts):
            return _group(saved["vectors"], np.asarray(owner), float(saved["seconds"]))
    started = time.perf_counter()
    vectors = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
    seconds = time.perf_counter() - started
    if stored is not None:
        stored.parent.mkdir(parents=True, exist_ok=True)
        np.savez(stored, vectors=vectors, seconds=seconds)
    return _group(vectors, np.asarray(owner), seconds)


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


@dataclass
class Keyword:
    """BM25 over the records' embedded text: the service's own BM25 (a2a.index.bm25)."""

    index: BM25Index
    ids: list[str]

    @classmethod
    def of(cls, corpus: Corpus) -> Keyword:
        index = BM25Index()
        index.add([analyze(r.embedding_text()) for r in corpus.records])
        return cls(index, [r.id for r in corpus.records])

    def search(self, query: str, allowed: list[int]) -> list[KeywordHit]:
        mask = np.zeros(len(self.ids), dtype=bool)
        mask[allowed] = True
        alive = np.ones(len(self.ids), dtype=bool)
        rows, scores = self.index.scores(analyze(query), mask, alive)
        hits = [
            KeywordHit(self.ids[r], round(float(v), 6)) for r, v in zip(rows, scores, strict=True)
        ]
        return sorted(hits, key=lambda hit: (-hit.score, hit.id))[:DEPTH]


@dataclass
class SemanticHit:
    id: str
    distance: float


def rank(
    index: Index, query: np.ndarray, corpus: Corpus, allowed: list[int]
) -> tuple[list[int], np.ndarray, float]:
    """Allowed record positions best first (ties by source), the scores, and the time, ms."""
    started = time.perf_counter()
    for _ in range(TIMING_REPEATS):
        best = index.best_per_record(query)
    elapsed = (time.perf_counter() - started) * 1000 / TIMING_REPEATS
    sources = [r.source or "" for r in corpus.records]
    return sorted(allowed, key=lambda i: (-best[i], sources[i])), best, elapsed


def score(
    index: Index,
    vectors: np.ndarray,
    corpus: Corpus,
    queries: Sequence[LabelledQuery],
    keyword: Keyword,
) -> dict[str, Any]:
    fusion = fusion_config(load_settings())
    sources = [r.source or "" for r in corpus.records]
    position = {r.id: i for i, r in enumerate(corpus.records)}
    ranks, recalls, hybrid, times = [], [], [], []
    for vector, item in zip(vectors, queries, strict=True):
        allowed = [i for i, r in enumerate(corpus.records) if passes(r, item.filters)]
        order, best, elapsed = rank(index, vector, corpus, allowed)
        ranked = [sources[i] for i in order[:10]]
        ranks.append(reciprocal_rank(ranked, item.relevant))
        recalls.append(recall_at(ranked, item.relevant, 5))
        times.append(elapsed)
        semantic = [SemanticHit(corpus.records[i].id, 1.0 - float(best[i])) for i in order[:DEPTH]]
        fused = fuse(semantic, keyword.search(item.query, allowed), fusion)[:10]
        hybrid.append(reciprocal_rank([sources[position[h.id]] for h in fused], item.relevant))
    records = len(corpus.records)
    return {
        "mrr@10": round(statistics.fmean(ranks), 3),
        "recall@5": round(statistics.fmean(recalls), 3),
        "mrr@10_by_kind": {k: round(v, 3) for k, v in mean_by_kind(ranks, queries).items()},
        "hybrid_mrr@10": round(statistics.fmean(hybrid), 3),
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
    parser.add_argument("--cache", type=Path, help="Folder keeping each variant's vectors.")
    args = parser.parse_args()
    corpus = load_corpus(args.corpus)
    queries = load_queries(args.queries)
    embedder = load_embedder(args.model)
    vectors = np.asarray([embedder.embed_query(q.query) for q in queries], dtype=np.float32)
    indexes = {
        name: build(embedder, corpus, name, variant, args.cache)
        for name, variant in VARIANTS.items()
    }
    record, sections = indexes["record"], indexes["sections"]
    owners = [
        np.repeat(np.arange(len(i.starts)), np.diff(np.r_[i.starts, len(i.vectors)]))
        for i in (record, sections)
    ]
    indexes["record+sections"] = _group(
        np.concatenate([record.vectors, sections.vectors]),
        np.concatenate(owners),
        record.embed_seconds + sections.embed_seconds,
    )
    keyword = Keyword.of(corpus)
    results = {
        name: score(index, vectors, corpus, queries, keyword) for name, index in indexes.items()
    }
    base = results["record"]
    print(f"{args.model}: {len(corpus.records)} records, {len(queries)} queries")
    kinds = sorted(base["mrr@10_by_kind"])
    print(
        f"{'variant':<18}{'MRR@10':>8}{'R@5':>7}"
        + "".join(f"{k[:10]:>11}" for k in kinds)
        + f"{'hybrid':>8}{'vec/rec':>9}{'bytes/rec':>10}{'embed x':>9}{'query x':>9}"
    )
    for name, r in results.items():
        r["embed_time_ratio"] = round(r["embed_ms_per_record"] / base["embed_ms_per_record"], 2)
        r["query_time_ratio"] = round(r["query_ms_p50"] / base["query_ms_p50"], 2)
        print(
            f"{name:<18}{r['mrr@10']:>8.3f}{r['recall@5']:>7.3f}"
            + "".join(f"{r['mrr@10_by_kind'][k]:>11.3f}" for k in kinds)
            + f"{r['hybrid_mrr@10']:>8.3f}{r['passages_per_record']:>9.2f}"
            f"{r['vector_bytes_per_record']:>10}{r['embed_time_ratio']:>9.2f}"
            f"{r['query_time_ratio']:>9.2f}"
        )
    print(
        f"record embedding: {base['embed_ms_per_record']:.1f} ms per record; "
        f"record query scoring: {base['query_ms_p50'] * 1000:.0f} µs"
    )
    for name in ("sections", "sections-chunked"):
        pairs = list(zip(results[name]["reciprocal_ranks"], base["reciprocal_ranks"], strict=True))
        better, worse = sum(a > b for a, b in pairs), sum(a < b for a, b in pairs)
        print(f"{name} against record: {better} queries ranked better, {worse} worse")
    if args.json_out:
        args.json_out.write_text(json.dumps({"model": args.model, "variants": results}, indent=2))


if __name__ == "__main__":
    main()
