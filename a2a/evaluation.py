"""Retrieval evaluation: labelled queries against an indexed corpus, every mode side by side.

Metrics are the usual IR ones over a ranked list of record sources with binary relevance:
Recall@k (the share of queries with a relevant record in the top k, "success@k"),
MRR@10 and nDCG@10 (Jarvelin and Kekalainen, 2002).
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from a2a.query.params import QueryDecisionsParams, RetrievalMode
from a2a.query.service import QueryService

MODES: tuple[str, ...] = get_args(RetrievalMode)
CUTOFF = 10


@dataclass(frozen=True, slots=True)
class LabelledQuery:
    """One line of a queries file: the text, relevant sources (the first is the target)."""

    query: str
    relevant: tuple[str, ...]
    filters: dict[str, Any] | None = None


def load_queries(path: Path) -> list[LabelledQuery]:
    """JSONL `{"query", "relevant": [...], "filters"?}` lines; raises ValueError naming the line."""
    queries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            queries.append(
                LabelledQuery(item["query"], tuple(item["relevant"]), item.get("filters"))
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: not a labelled query ({exc})") from None
    return queries


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


@dataclass
class ModeReport:
    """Mean metrics of one retrieval mode and its per-query latency (milliseconds)."""

    mode: str
    recall1: float = 0.0
    recall5: float = 0.0
    recall10: float = 0.0
    mrr10: float = 0.0
    ndcg10: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.latencies_ms) if self.latencies_ms else 0.0

    def as_dict(self) -> dict[str, float | str]:
        """The numbers, rounded, for JSON output."""
        return {
            "mode": self.mode,
            "recall@1": round(self.recall1, 3),
            "recall@5": round(self.recall5, 3),
            "recall@10": round(self.recall10, 3),
            "mrr@10": round(self.mrr10, 3),
            "ndcg@10": round(self.ndcg10, 3),
            "p50_ms": round(self.p50_ms, 2),
        }


async def evaluate(
    service: QueryService, queries: Sequence[LabelledQuery], modes: Sequence[str] = MODES
) -> list[ModeReport]:
    """Every query through `service` in every mode (limit 10, filters as labelled)."""
    reports = []
    for mode in modes:
        report = ModeReport(mode)
        for item in queries:
            params = QueryDecisionsParams.model_validate(
                {
                    "query": item.query,
                    "limit": CUTOFF,
                    "retrievalMode": mode,
                    "filters": item.filters,
                }
            )
            started = time.perf_counter()
            result = await service.query_decisions(params)
            report.latencies_ms.append((time.perf_counter() - started) * 1000)
            ranked = [d.source or "" for d in result.decisions]
            report.recall1 += recall_at(ranked, item.relevant, 1)
            report.recall5 += recall_at(ranked, item.relevant, 5)
            report.recall10 += recall_at(ranked, item.relevant, 10)
            report.mrr10 += reciprocal_rank(ranked, item.relevant)
            report.ndcg10 += ndcg(ranked, item.relevant)
        count = max(len(queries), 1)
        for name in ("recall1", "recall5", "recall10", "mrr10", "ndcg10"):
            setattr(report, name, getattr(report, name) / count)
        reports.append(report)
    return reports


def format_table(reports: Sequence[ModeReport]) -> str:
    """The reports as an aligned plain-text table, one mode a row."""
    header = f"{'mode':<10}{'R@1':>7}{'R@5':>7}{'R@10':>7}{'MRR@10':>8}{'nDCG@10':>9}{'p50 ms':>9}"
    rows = [header, "-" * len(header)]
    for r in reports:
        rows.append(
            f"{r.mode:<10}{r.recall1:>7.3f}{r.recall5:>7.3f}{r.recall10:>7.3f}"
            f"{r.mrr10:>8.3f}{r.ndcg10:>9.3f}{r.p50_ms:>9.2f}"
        )
    return "\n".join(rows)
