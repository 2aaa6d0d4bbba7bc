"""One `cstp eval` run: every mode, the fusion comparison, the distance threshold; text or JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from a2a.evaluation.fusions import FamilyResult, compare_fusions, format_fusion_table, winner
from a2a.evaluation.modes import (
    MODES,
    Candidates,
    ModeReport,
    collect_candidates,
    evaluate,
    format_table,
)
from a2a.evaluation.queries import LabelledQuery
from a2a.evaluation.threshold import DistanceThreshold, choose_threshold
from a2a.query.params import QueryDecisionsParams
from a2a.query.service import QueryService


@dataclass(frozen=True, slots=True)
class EvalOptions:
    """What to run: the modes, the fusion comparison's CV (off when `folds` is 0), and
    the off-topic queries of the threshold measurement (none: not measured)."""

    modes: Sequence[str] = MODES
    folds: int = 5
    repeats: int = 5
    seed: int = 0
    off_topic: Sequence[str] = ()


@dataclass
class EvalReport:
    """Everything one run measured; `header` holds the model, record and query counts."""

    header: dict[str, Any]
    modes: list[ModeReport]
    fusions: list[FamilyResult] = field(default_factory=list)
    threshold: DistanceThreshold | None = None


async def _best_distance(service: QueryService, query: str) -> float | None:
    params = QueryDecisionsParams.model_validate(
        {"query": query, "limit": 1, "retrievalMode": "semantic"}
    )
    found = (await service.query_decisions(params)).decisions
    return found[0].distance if found else None


async def measure_threshold(
    service: QueryService,
    queries: Sequence[LabelledQuery],
    candidates: Sequence[Candidates],
    off_topic: Sequence[str],
) -> DistanceThreshold:
    """Best-hit distances of answered labelled queries against those of `off_topic`."""
    answered = [
        c.semantic[0].distance
        for c, item in zip(candidates, queries, strict=True)
        if c.semantic and c.sources[c.semantic[0].id] in item.relevant
    ]
    noise = [d for q in off_topic if (d := await _best_distance(service, q)) is not None]
    return choose_threshold(answered, noise)


async def run_evaluation(
    service: QueryService,
    queries: Sequence[LabelledQuery],
    options: EvalOptions,
    header: dict[str, Any],
) -> EvalReport:
    """Score every mode through `service`; then, as asked, compare fusions and measure the cut."""
    report = EvalReport(dict(header), await evaluate(service, queries, options.modes))
    if options.folds == 0 and not options.off_topic:
        return report
    candidates = await collect_candidates(service, queries)
    if options.folds:
        report.fusions = compare_fusions(
            candidates, queries, folds=options.folds, repeats=options.repeats, seed=options.seed
        )
    if options.off_topic:
        report.threshold = await measure_threshold(service, queries, candidates, options.off_topic)
    return report


def report_text(report: EvalReport, options: EvalOptions) -> str:
    """The run as plain text: modes table, fusion table with the winner, threshold."""
    h = report.header
    parts = [
        *([f"== {h['set']} =="] if "set" in h else []),
        f"model {h['model']}: {h['records']} records indexed in {h['index_seconds']:.1f} s; "
        f"{h['queries']} queries" + (f"; hybrid mode: {h['hybrid']}" if "hybrid" in h else ""),
        format_table(report.modes),
    ]
    if report.fusions:
        best = winner(report.fusions)
        assert best.chosen is not None
        parts += [
            "",
            f"fusion by {options.folds}-fold cross-validation over the queries "
            f"({options.repeats} shuffles, stratified by kind), MRR@10 of held-out queries"
            " (mean, and the spread of fold means: min / median / max):",
            format_fusion_table(report.fusions),
            f"winner: {best.name}, {best.chosen.describe()} -> CSTP_FUSION_METHOD="
            f"{best.chosen.method} CSTP_HYBRID_RRF_K={best.chosen.rrf_k} "
            f"CSTP_HYBRID_SEMANTIC_WEIGHT={best.chosen.semantic_weight:g} "
            f"CSTP_HYBRID_KEYWORD_WEIGHT={best.chosen.keyword_weight:g}",
        ]
    if (t := report.threshold) is not None:
        parts += [
            "",
            f"distance threshold {t.threshold:.2f} ("
            + ("midpoint of the gap" if t.separated else "max Youden's J")
            + f"): answered best hits {min(t.answered):.3f}-{max(t.answered):.3f} "
            f"(n={len(t.answered)}, {t.answered_kept:.0%} within), off-topic best hits "
            f"{min(t.off_topic):.3f}-{max(t.off_topic):.3f} "
            f"(n={len(t.off_topic)}, {t.off_topic_kept:.0%} within)",
        ]
    return "\n".join(parts)


def report_json(report: EvalReport) -> dict[str, Any]:
    """The run as a JSON-ready dict (for CI history)."""
    data: dict[str, Any] = {**report.header, "modes": [r.as_dict() for r in report.modes]}
    if report.fusions:
        data["fusion"] = {
            "winner": winner(report.fusions).name,
            "methods": [
                {
                    "method": r.name,
                    "cv_mrr@10": round(r.cv.mean, 4),
                    "cv_fold_sd": round(r.cv.std, 4),
                    "cv_fold_min": round(r.cv.low, 4),
                    "cv_fold_median": round(r.cv.median, 4),
                    "cv_fold_max": round(r.cv.high, 4),
                    "cv_mrr@10_by_kind": {k: round(v, 4) for k, v in r.cv_by_kind.items()},
                    "chosen": None if r.chosen is None else r.chosen.describe(),
                    "in_sample_mrr@10": round(r.in_sample, 4),
                    "chosen_in_folds": dict(r.cv.choices),
                }
                for r in report.fusions
            ],
        }
    if (t := report.threshold) is not None:
        data["distance_threshold"] = {
            "threshold": t.threshold,
            "separated": t.separated,
            "answered_kept": round(t.answered_kept, 4),
            "off_topic_kept": round(t.off_topic_kept, 4),
            "answered": [round(d, 4) for d in t.answered],
            "off_topic": [round(d, 4) for d in t.off_topic],
        }
    return data
