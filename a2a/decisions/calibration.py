"""Calibration of recorded confidence against outcomes: Brier score and reliability bins.

Pure functions over numpy columns, tested by tables (tests/decisions/test_calibration.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

#: What an outcome counts as when scoring a confidence (CONTRACT.md, cstp.getCalibration);
#: any other outcome, or none, leaves the decision out.
OUTCOME_SCORES: Final = {"success": 1.0, "partial": 0.5, "failure": 0.0}


@dataclass(frozen=True, slots=True)
class Bin:
    """One reliability bin [low, high) (the last one closed): count and mean values.

    `mean_confidence` and `success_rate` (mean outcome score) are None for an empty bin.
    """

    low: float
    high: float
    count: int
    mean_confidence: float | None
    success_rate: float | None


@dataclass(frozen=True, slots=True)
class CategoryScore:
    """Scored decisions of one category (None: decisions without one) and their Brier score."""

    category: str | None
    decisions: int
    brier_score: float


@dataclass(frozen=True, slots=True)
class Calibration:
    """Scored decisions, their Brier score (None when there are none), bins, per category."""

    decisions: int
    brier_score: float | None
    bins: list[Bin]
    by_category: list[CategoryScore]


def outcome_scores(outcomes: Sequence[str | None]) -> npt.NDArray[np.float64]:
    """Each outcome's score per OUTCOME_SCORES, NaN for one that is not scored."""
    return np.array([OUTCOME_SCORES.get(o or "", np.nan) for o in outcomes], dtype=np.float64)


def calibrate(
    confidence: npt.NDArray[np.float64],
    score: npt.NDArray[np.float64],
    categories: Sequence[str | None],
    bins: int,
) -> Calibration:
    """Calibration of the rows with both a confidence and a score (NaN marks neither).

    Brier score: mean of (confidence - score)^2, in [0, 1], lower is better. Bins split
    [0, 1] into `bins` (>= 1) equal widths; a confidence falls in bin floor(c * bins),
    1.0 in the last. `byCategory` is sorted by category, decisions without one last.
    """
    scored = ~np.isnan(confidence) & ~np.isnan(score)
    conf, outcome = confidence[scored], score[scored]
    cats = [c for c, keep in zip(categories, scored.tolist(), strict=True) if keep]
    squared = (conf - outcome) ** 2
    slot = np.minimum((conf * bins).astype(np.int64), bins - 1)
    reliability = []
    for b in range(bins):
        inside = slot == b
        count = int(np.count_nonzero(inside))
        reliability.append(
            Bin(
                low=b / bins,
                high=(b + 1) / bins,
                count=count,
                mean_confidence=float(conf[inside].mean()) if count else None,
                success_rate=float(outcome[inside].mean()) if count else None,
            )
        )
    return Calibration(
        decisions=len(conf),
        brier_score=float(squared.mean()) if len(conf) else None,
        bins=reliability,
        by_category=_by_category(cats, squared),
    )


def _by_category(
    categories: list[str | None], squared: npt.NDArray[np.float64]
) -> list[CategoryScore]:
    groups: dict[str | None, list[float]] = {}
    for category, value in zip(categories, squared.tolist(), strict=True):
        groups.setdefault(category, []).append(value)
    names = sorted(groups, key=lambda c: (c is None, c or ""))
    return [
        CategoryScore(category=c, decisions=len(groups[c]), brier_score=float(np.mean(groups[c])))
        for c in names
    ]
