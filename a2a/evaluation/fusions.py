"""Fusion methods compared on labelled queries under cross-validation, with the winner named.

Each family is a fusion method with a small grid of parameters; the family's score is its
cross-validated MRR@10 (the parameter chosen on the other folds, never on the scored
queries). Semantic and keyword alone are scored on the same candidate rankings, so every
row of the table reads the same data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from a2a.evaluation.crossval import RepeatedCrossValidation, choose, repeated_cross_validation
from a2a.evaluation.metrics import CUTOFF, mean_by_kind, reciprocal_rank
from a2a.evaluation.modes import Candidates
from a2a.evaluation.queries import LabelledQuery
from a2a.query.fusion import FusionConfig, FusionMethod, fuse

#: The semantic share of the score-based grids: weights (share, 1 - share).
SHARES: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
RRF_KS: tuple[int, ...] = (5, 10, 20, 40, 60, 100)
RRF_SHARES: tuple[float, ...] = (0.3, 0.4, 0.5, 0.6, 0.7)


def _convex(method: FusionMethod, share: float) -> FusionConfig:
    return FusionConfig(method, 60, share, round(1 - share, 2))


@dataclass(frozen=True, slots=True)
class FusionFamily:
    """A named fusion method and the parameter settings cross-validation chooses among."""

    name: str
    grid: tuple[FusionConfig, ...]


def default_families() -> tuple[FusionFamily, ...]:
    """The compared families: two fixed references, then each method with its grid.

    `rrf k=60` is the fusion before this comparison (Cormack et al.'s constant, equal
    weights); `minmax 0.7/0.3` the origin system's. RRF's grid crosses k with the semantic
    share; the score-based methods' grids are the semantic share alone.
    """
    return (
        FusionFamily("rrf k=60 (before)", (FusionConfig("rrf", 60, 1.0, 1.0),)),
        FusionFamily("minmax 0.7/0.3 (origin)", (_convex("minmax", 0.7),)),
        FusionFamily(
            "rrf",
            tuple(
                FusionConfig("rrf", k, share, round(1 - share, 2))
                for share in RRF_SHARES
                for k in RRF_KS
            ),
        ),
        FusionFamily("minmax", tuple(_convex("minmax", s) for s in SHARES)),
        FusionFamily("dbsf", tuple(_convex("dbsf", s) for s in SHARES)),
        FusionFamily("tmm", tuple(_convex("tmm", s) for s in SHARES)),
    )


def fused_sources(candidates: Candidates, config: FusionConfig) -> list[str]:
    """The top CUTOFF sources of one query's rankings fused by `config`."""
    fused = fuse(candidates.semantic, candidates.keyword, config, CUTOFF)
    return [candidates.sources[hit.id] for hit in fused]


@dataclass(frozen=True, slots=True)
class FamilyResult:
    """One row of the comparison.

    `cv`: the repeated cross-validation; `cv_by_kind`: its held-out MRR@10 per query kind;
    `chosen`: the setting the selection picks on all queries (what would ship);
    `in_sample`: that setting's MRR@10 on all queries (optimistic: reported, not compared).
    """

    name: str
    cv: RepeatedCrossValidation
    cv_by_kind: dict[str, float]
    chosen: FusionConfig | None
    in_sample: float


def compare_fusions(
    candidates: Sequence[Candidates],
    queries: Sequence[LabelledQuery],
    families: Sequence[FusionFamily] | None = None,
    *,
    folds: int = 5,
    repeats: int = 5,
    seed: int = 0,
) -> list[FamilyResult]:
    """Semantic, keyword and every fusion family, each by repeated k-fold CV MRR@10.

    Folds are stratified by query kind. Raises ValueError when `folds` is out of range.
    """
    strata = [item.kind or "unlabelled" for item in queries]

    def row(
        name: str, scores: dict[str, list[float]], configs: dict[str, FusionConfig]
    ) -> FamilyResult:
        cv = repeated_cross_validation(scores, strata, folds, repeats, seed)
        chosen = choose(scores, range(len(queries)))
        in_sample = sum(scores[chosen]) / len(queries)
        return FamilyResult(
            name, cv, mean_by_kind(cv.held_out, queries), configs.get(chosen), in_sample
        )

    rows = []
    for mode in ("semantic", "keyword"):
        ranks = [
            reciprocal_rank(_single(c, mode), item.relevant)
            for c, item in zip(candidates, queries, strict=True)
        ]
        rows.append(row(mode, {mode: ranks}, {}))
    for family in families if families is not None else default_families():
        configs = {config.describe(): config for config in family.grid}
        scores = {
            label: [
                reciprocal_rank(fused_sources(c, config), item.relevant)
                for c, item in zip(candidates, queries, strict=True)
            ]
            for label, config in configs.items()
        }
        rows.append(row(family.name, scores, configs))
    return rows


def _single(candidates: Candidates, mode: str) -> list[str]:
    hits = candidates.semantic if mode == "semantic" else candidates.keyword
    return [candidates.sources[hit.id] for hit in hits[:CUTOFF]]


def winner(results: Sequence[FamilyResult]) -> FamilyResult:
    """The fusion family with the best CV MRR@10 (ties: the earlier row)."""
    fusions = [r for r in results if r.chosen is not None]
    return max(fusions, key=lambda r: r.cv.mean)


def format_fusion_table(results: Sequence[FamilyResult]) -> str:
    """The comparison as an aligned plain-text table, one family a row."""
    kinds = sorted({kind for r in results for kind in r.cv_by_kind})
    header = f"{'method':<26}{'CV MRR@10':>10}{'fold min':>9}{'median':>8}{'max':>7}" + "".join(
        f"{kind[:11]:>12}" for kind in kinds
    )
    header += "  chosen on all queries (times chosen in CV folds)"
    lines = [header, "-" * len(header)]
    for r in results:
        common = r.cv.choices.most_common(1)
        detail = ""
        if r.chosen is not None:
            times = sum(r.cv.choices.values())
            detail = f"  {r.chosen.describe()} ({r.cv.choices[r.chosen.describe()]}/{times})"
            if common and common[0][0] != r.chosen.describe():
                detail += f", most often {common[0][0]}"
        lines.append(
            f"{r.name:<26}{r.cv.mean:>10.3f}{r.cv.low:>9.3f}{r.cv.median:>8.3f}{r.cv.high:>7.3f}"
            + "".join(f"{r.cv_by_kind.get(kind, 0.0):>12.3f}" for kind in kinds)
            + detail
        )
    return "\n".join(lines)
