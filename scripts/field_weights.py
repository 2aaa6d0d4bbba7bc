"""Choose keyword field weights and the hybrid fusion by repeated cross-validation over two
sets of labelled queries, reporting the spread of held-out fold means, not only the mean.

    python scripts/field_weights.py ../shared/data/adr ../shared/data/queries-dev.jsonl \\
        data/queries-dev2.jsonl [--repeats 20] [--vectors /tmp/adr-vectors.npy]

Builds the real SearchIndex (a2a.index) once per title weight over the corpus embedded with
the default model, answers every query in semantic, keyword and hybrid modes (filters as
labelled; 50 candidates each, as the service), and scores reciprocal rank at 10. Then:
- every mode with the shipped settings on each set (and keyword/hybrid per title weight);
- repeated 5-fold CV over the pooled queries (folds stratified by set and kind): per fold,
  the (title weight, fusion) with the best mean on the other folds is scored on the fold;
- train on one set, test on the other: the truest "unseen queries" figure here.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from a2a.app.stack import fusion_config  # noqa: E402
from a2a.embeddings import DEFAULT_MODEL, load_embedder  # noqa: E402
from a2a.evaluation.crossval import choose, stratified_folds  # noqa: E402
from a2a.evaluation.metrics import reciprocal_rank  # noqa: E402
from a2a.evaluation.queries import LabelledQuery, load_queries  # noqa: E402
from a2a.index import SearchIndex  # noqa: E402
from a2a.index.fields import FieldWeights  # noqa: E402
from a2a.index.search_index import IndexedRecord  # noqa: E402
from a2a.index.tokens import analyze_query  # noqa: E402
from a2a.ingest.indexer import Indexer, IndexSummary  # noqa: E402
from a2a.query.fusion import FusionConfig, fuse  # noqa: E402
from a2a.records.filters import QueryFilters  # noqa: E402
from a2a.settings import Settings  # noqa: E402

TITLE_WEIGHTS = (1, 2, 3, 4)
CANDIDATES = 50
#: The fusion the service would use: CSTP_FUSION_METHOD and CSTP_HYBRID_*, as set or default.
SHIPPED = fusion_config(Settings(_env_file=None))  # type: ignore[call-arg]
SHARES = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: Query-length buckets: a query of at most this many terms is "short".
SHORT_AT_MOST = (2, 3, 4, 5, 6)
FUSIONS = (
    *(FusionConfig("rrf", k, s, round(1 - s, 2)) for k in (20, 60, 100) for s in SHARES),
    *(FusionConfig(m, 60, s, round(1 - s, 2)) for m in ("dbsf", "minmax", "tmm") for s in SHARES),
)
if SHIPPED.describe() not in {c.describe() for c in FUSIONS}:
    FUSIONS = (*FUSIONS, SHIPPED)


def rankings(
    index: SearchIndex, embedder: Any, queries: list[LabelledQuery], sources: dict[str, str]
) -> list[tuple[list[Any], list[Any]]]:
    out = []
    with index.reading():
        for item in queries:
            filters = QueryFilters.model_validate(item.filters) if item.filters else None
            mask, passing = index.selection(filters)
            vector = np.asarray(embedder.embed_query(item.query), dtype=np.float32)
            out.append(
                (
                    index.semantic(vector, mask, CANDIDATES, passing),
                    index.keyword(item.query, mask, CANDIDATES, passing),
                )
            )
    return out


def rr(ids: list[str], item: LabelledQuery, sources: dict[str, str]) -> float:
    return reciprocal_rank([sources[i] for i in ids], item.relevant)


def spread(values: list[float]) -> str:
    return f"min {min(values):.3f} median {statistics.median(values):.3f} max {max(values):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", type=Path)
    parser.add_argument("sets", type=Path, nargs="+")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--vectors", type=Path)
    args = parser.parse_args()
    records = Indexer(None, None, 64).load([args.corpus], IndexSummary())  # type: ignore[arg-type]
    texts = [r.embedding_text() for r in records]
    embedder = load_embedder(DEFAULT_MODEL)
    if args.vectors and args.vectors.exists():
        vectors = np.load(args.vectors)
    else:
        vectors = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
        if args.vectors:
            np.save(args.vectors, vectors)
    sources = {r.id: r.source for r in records}
    sets = [(p.stem, load_queries(p)) for p in args.sets]
    pooled = [q for _, qs in sets for q in qs]
    strata = [f"{name}/{q.kind}" for name, qs in sets for q in qs]
    # scores[label] = RR@10 per pooled query
    scores: dict[str, list[float]] = {}
    for weight in TITLE_WEIGHTS:
        index = SearchIndex(field_weights=FieldWeights(weight, 1))
        index.upsert(
            [IndexedRecord(r.id, r, v, t) for r, v, t in zip(records, vectors, texts, strict=True)]
        )
        ranked = rankings(index, embedder, pooled, sources)
        if weight == 1:
            scores["semantic"] = [
                rr([m.id for m in s], q, sources) for (s, _), q in zip(ranked, pooled, strict=True)
            ]
        scores[f"keyword title x{weight}"] = [
            rr([m.id for m in k], q, sources) for (_, k), q in zip(ranked, pooled, strict=True)
        ]
        for config in FUSIONS:
            scores[f"hybrid title x{weight} {config.describe()}"] = [
                rr([h.id for h in fuse(s, k, config, 10)], q, sources)
                for (s, k), q in zip(ranked, pooled, strict=True)
            ]
    lengths = [len(analyze_query(q.query)) for q in pooled]
    adaptive: list[str] = []
    for t in SHORT_AT_MOST:
        for short in SHARES:
            for long in SHARES:
                short_c, long_c = (
                    FusionConfig("rrf", 60, short, round(1 - short, 2)),
                    FusionConfig("rrf", 60, long, round(1 - long, 2)),
                )
                label = f"adaptive <= {t} terms: {short_c.describe()} else {long_c.describe()}"
                a = scores[f"hybrid title x1 {short_c.describe()}"]
                b = scores[f"hybrid title x1 {long_c.describe()}"]
                scores[label] = [a[i] if lengths[i] <= t else b[i] for i in range(len(pooled))]
                adaptive.append(label)
    bounds, start = {}, 0
    for name, qs in sets:
        bounds[name] = range(start, start + len(qs))
        start += len(qs)
    print("MRR@10 per set (fixed settings, no selection):")
    shown = [
        "semantic",
        *[f"keyword title x{w}" for w in TITLE_WEIGHTS],
        *[f"hybrid title x{w} {SHIPPED.describe()}" for w in TITLE_WEIGHTS],
    ]
    print(f"{'setting':52}" + "".join(f"{n:>16}" for n in bounds))
    for label in shown:
        print(
            f"{label:52}"
            + "".join(
                f"{statistics.fmean(scores[label][i] for i in r):16.3f}" for r in bounds.values()
            )
        )
    families = {
        "semantic": ["semantic"],
        "keyword (title x1)": ["keyword title x1"],
        "keyword (title weight chosen)": [f"keyword title x{w}" for w in TITLE_WEIGHTS],
        f"hybrid shipped ({SHIPPED.describe()}, title x1)": [
            f"hybrid title x1 {SHIPPED.describe()}"
        ],
        "hybrid fusion chosen, title x1": [f"hybrid title x1 {c.describe()}" for c in FUSIONS],
        "hybrid fusion and title weight chosen": [
            f"hybrid title x{w} {c.describe()}" for w in TITLE_WEIGHTS for c in FUSIONS
        ],
    }
    families["hybrid, fusion by query length, chosen"] = adaptive
    for w in TITLE_WEIGHTS[1:]:
        families[f"hybrid {SHIPPED.describe()}, title x{w}"] = [
            f"hybrid title x{w} {SHIPPED.describe()}"
        ]
        families[f"hybrid fusion chosen, title x{w}"] = [
            f"hybrid title x{w} {c.describe()}" for c in FUSIONS
        ]
    print(
        f"\nrepeated 5-fold CV over {len(pooled)} pooled queries ({args.repeats} shuffles,"
        " stratified by set and kind): held-out fold MRR@10"
    )
    print(
        f"{'family':52}{'mean':>7}  fold spread (min / median / max)   "
        + "  ".join(f"{n:>12}" for n in bounds)
    )
    for family, labels in families.items():
        grid = {label: scores[label] for label in labels}
        fold_means, held = [], [[0.0] * len(pooled) for _ in range(args.repeats)]
        for r in range(args.repeats):
            for fold in stratified_folds(strata, 5, r):
                inside = set(fold)
                chosen = choose(grid, [i for i in range(len(pooled)) if i not in inside])
                for i in fold:
                    held[r][i] = grid[chosen][i]
                fold_means.append(statistics.fmean(held[r][i] for i in fold))
        per_set = [
            statistics.fmean(statistics.fmean(h[i] for i in rng) for h in held)
            for rng in bounds.values()
        ]
        print(
            f"{family:52}{statistics.fmean(fold_means):7.3f}  {spread(fold_means):36}"
            + "  ".join(f"{v:12.3f}" for v in per_set)
        )
    print("\nbest fixed hybrid settings (title x1) on the pooled queries, MRR@10 in sample:")
    fixed = [f"hybrid title x1 {c.describe()}" for c in FUSIONS]
    for label in sorted(fixed, key=lambda x: -statistics.fmean(scores[x]))[:6]:
        per_set = "  ".join(
            f"{n} {statistics.fmean(scores[label][i] for i in r):.3f}" for n, r in bounds.items()
        )
        print(f"  {label:52} pooled {statistics.fmean(scores[label]):.3f}  {per_set}")
    print(
        "\ntrain on one set, test on the other (setting chosen on the first, MRR@10 on the second):"
    )
    for train, test in ((a, b) for a in bounds for b in bounds if a != b):
        for family, labels in families.items():
            grid = {label: scores[label] for label in labels}
            chosen = choose(grid, list(bounds[train]))
            value = statistics.fmean(scores[chosen][i] for i in bounds[test])
            print(f"  {train} -> {test}: {family:52} {value:.3f}  ({chosen})")


if __name__ == "__main__":
    main()
