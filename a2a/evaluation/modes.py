"""Every retrieval mode of the query service scored on labelled queries, side by side."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, get_args

from a2a.evaluation.metrics import CUTOFF, mean_by_kind, ndcg, recall_at, reciprocal_rank
from a2a.evaluation.queries import LabelledQuery
from a2a.query.params import MAX_LIMIT, QueryDecisionsParams, RetrievalMode
from a2a.query.service import QueryService

MODES: tuple[str, ...] = get_args(RetrievalMode)
#: How deep each single-mode ranking is read for offline fusion: the most one call returns.
CANDIDATE_DEPTH = MAX_LIMIT


@dataclass
class ModeReport:
    """Mean metrics of one retrieval mode, its per-query latency (milliseconds) and MRR@10.

    `reciprocal_ranks` holds each query's reciprocal rank at 10, in the queries' order.
    """

    mode: str
    recall1: float = 0.0
    recall5: float = 0.0
    recall10: float = 0.0
    mrr10: float = 0.0
    ndcg10: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    reciprocal_ranks: list[float] = field(default_factory=list)
    mrr_by_kind: dict[str, float] = field(default_factory=dict)

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.latencies_ms) if self.latencies_ms else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The numbers, rounded, for JSON output."""
        return {
            "mode": self.mode,
            "recall@1": round(self.recall1, 3),
            "recall@5": round(self.recall5, 3),
            "recall@10": round(self.recall10, 3),
            "mrr@10": round(self.mrr10, 3),
            "ndcg@10": round(self.ndcg10, 3),
            "p50_ms": round(self.p50_ms, 2),
            "mrr@10_by_kind": {k: round(v, 3) for k, v in self.mrr_by_kind.items()},
        }


def _params(item: LabelledQuery, mode: str, limit: int) -> QueryDecisionsParams:
    return QueryDecisionsParams.model_validate(
        {"query": item.query, "limit": limit, "retrievalMode": mode, "filters": item.filters}
    )


def score_rankings(
    mode: str, rankings: Sequence[Sequence[str]], queries: Sequence[LabelledQuery]
) -> ModeReport:
    """The metrics of one ranked source list per query (in the queries' order)."""
    report = ModeReport(mode)
    for ranked, item in zip(rankings, queries, strict=True):
        report.recall1 += recall_at(ranked, item.relevant, 1)
        report.recall5 += recall_at(ranked, item.relevant, 5)
        report.recall10 += recall_at(ranked, item.relevant, 10)
        report.reciprocal_ranks.append(reciprocal_rank(ranked, item.relevant))
        report.ndcg10 += ndcg(ranked, item.relevant)
    count = max(len(queries), 1)
    for name in ("recall1", "recall5", "recall10", "ndcg10"):
        setattr(report, name, getattr(report, name) / count)
    report.mrr10 = sum(report.reciprocal_ranks) / count
    if queries:
        report.mrr_by_kind = mean_by_kind(report.reciprocal_ranks, queries)
    return report


async def evaluate(
    service: QueryService, queries: Sequence[LabelledQuery], modes: Sequence[str] = MODES
) -> list[ModeReport]:
    """Every query through `service` in every mode (limit 10, filters as labelled)."""
    reports = []
    for mode in modes:
        rankings, latencies = [], []
        for item in queries:
            started = time.perf_counter()
            result = await service.query_decisions(_params(item, mode, CUTOFF))
            latencies.append((time.perf_counter() - started) * 1000)
            rankings.append([d.source or "" for d in result.decisions])
        report = score_rankings(mode, rankings, queries)
        report.latencies_ms = latencies
        reports.append(report)
    return reports


@dataclass(frozen=True, slots=True)
class SemanticCandidate:
    """A semantic hit: record id and cosine distance in [0, 2]."""

    id: str
    distance: float


@dataclass(frozen=True, slots=True)
class KeywordCandidate:
    """A keyword hit: record id and BM25 score (higher is better)."""

    id: str
    score: float


@dataclass(frozen=True, slots=True)
class Candidates:
    """One query's semantic and keyword rankings, each up to `CANDIDATE_DEPTH` deep, best first.

    `sources` maps each record id in either ranking to its source path.
    """

    semantic: list[SemanticCandidate]
    keyword: list[KeywordCandidate]
    sources: dict[str, str]


async def collect_candidates(
    service: QueryService, queries: Sequence[LabelledQuery], depth: int = CANDIDATE_DEPTH
) -> list[Candidates]:
    """Each query's semantic and keyword rankings from `service`, filters as labelled.

    Read once, then fused offline by every method and parameter under comparison.
    """
    found = []
    for item in queries:
        semantic = (await service.query_decisions(_params(item, "semantic", depth))).decisions
        keyword = (await service.query_decisions(_params(item, "keyword", depth))).decisions
        found.append(
            Candidates(
                [SemanticCandidate(d.id, d.distance or 0.0) for d in semantic],
                [KeywordCandidate(d.id, d.score or 0.0) for d in keyword],
                {d.id: d.source or "" for d in [*semantic, *keyword]},
            )
        )
    return found


def format_table(reports: Sequence[ModeReport]) -> str:
    """The reports as an aligned plain-text table, one mode a row, MRR@10 per kind after."""
    kinds = sorted({kind for r in reports for kind in r.mrr_by_kind})
    header = f"{'mode':<10}{'R@1':>7}{'R@5':>7}{'R@10':>7}{'MRR@10':>8}{'nDCG@10':>9}{'p50 ms':>9}"
    header += "".join(f"{kind[:11]:>12}" for kind in kinds)
    rows = [header, "-" * len(header)]
    for r in reports:
        rows.append(
            f"{r.mode:<10}{r.recall1:>7.3f}{r.recall5:>7.3f}{r.recall10:>7.3f}"
            f"{r.mrr10:>8.3f}{r.ndcg10:>9.3f}{r.p50_ms:>9.2f}"
            + "".join(f"{r.mrr_by_kind.get(kind, 0.0):>12.3f}" for kind in kinds)
        )
    return "\n".join(rows)
