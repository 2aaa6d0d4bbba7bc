"""Retrieval evaluation: labelled queries against an indexed corpus, every mode side by side.

Metrics are the usual IR ones over a ranked list of record sources with binary relevance:
Recall@k (the share of queries with a relevant record in the top k, "success@k"),
MRR@10 and nDCG@10 (Jarvelin and Kekalainen, 2002). Fusion methods are compared by k-fold
cross-validation over the queries (`crossval`), never by their best number on all of them.
"""

from a2a.evaluation.metrics import CUTOFF, mean_by_kind, ndcg, recall_at, reciprocal_rank
from a2a.evaluation.modes import (
    MODES,
    Candidates,
    ModeReport,
    collect_candidates,
    evaluate,
    format_table,
    score_rankings,
)
from a2a.evaluation.queries import LabelledQuery, load_queries

__all__ = [
    "CUTOFF",
    "MODES",
    "Candidates",
    "LabelledQuery",
    "ModeReport",
    "collect_candidates",
    "evaluate",
    "format_table",
    "load_queries",
    "mean_by_kind",
    "ndcg",
    "recall_at",
    "reciprocal_rank",
    "score_rankings",
]
