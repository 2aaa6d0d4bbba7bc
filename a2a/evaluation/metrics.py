"""IR metrics over a ranked list of sources with binary relevance (Recall@k, MRR, nDCG)."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence

from a2a.evaluation.queries import LabelledQuery

#: Rank cut-off of MRR@10 and nDCG@10.
CUTOFF = 10


def recall_at(ranked: Sequence[str], relevant: Sequence[str], k: int) -> float:
    """1.0 when any relevant source is in the top `k`, else 0.0."""
    return 1.0 if any(source in relevant for source in ranked[:k]) else 0.0


def reciprocal_rank(ranked: Sequence[str], relevant: Sequence[str], k: int = CUTOFF) -> float:
    """1 / rank of the first relevant source within the top `k`, else 0."""
    for rank, source in enumerate(ranked[:k], 1):
        if source in relevant:
            return 1.0 / rank
    return 0.0


def ndcg(ranked: Sequence[str], relevant: Sequence[str], k: int = CUTOFF) -> float:
    """Normalised discounted cumulative gain at `k`, binary gains."""
    gains = [1.0 if source in relevant else 0.0 for source in ranked[:k]]
    dcg = sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, 1))
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(relevant), k) + 1))
    return dcg / ideal if ideal else 0.0


def mean_by_kind(values: Sequence[float], queries: Sequence[LabelledQuery]) -> dict[str, float]:
    """The mean of per-query `values` for each query kind (`unlabelled` when None), by name."""
    groups: dict[str, list[float]] = defaultdict(list)
    for value, item in zip(values, queries, strict=True):
        groups[item.kind or "unlabelled"].append(value)
    return {kind: statistics.fmean(groups[kind]) for kind in sorted(groups)}
