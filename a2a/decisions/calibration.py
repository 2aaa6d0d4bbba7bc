"""Calibration of recorded confidence against outcomes: Brier score, reliability bins with
Wilson intervals, Murphy's decomposition, and the score per category, agent and month.

Pure functions over numpy columns, tested by tables (tests/decisions/test_calibration.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from a2a.decisions import results as r

#: What an outcome counts as when scoring a confidence (CONTRACT.md, cstp.getCalibration);
#: any other outcome, or none, leaves the decision out.
OUTCOME_SCORES: Final = {"success": 1.0, "partial": 0.5, "failure": 0.0}
#: The two-sided 95% normal quantile, Phi^-1(0.975), of the Wilson interval.
Z95: Final = 1.959963984540054


@dataclass(frozen=True, slots=True)
class Bin:
    """One reliability bin [low, high) (the last one closed): count and mean values.

    `mean_confidence` and `success_rate` (mean outcome score) are None for an empty bin;
    so are `success_low` / `success_high`, the 95% Wilson score interval of the rate.
    """

    low: float
    high: float
    count: int
    mean_confidence: float | None
    success_rate: float | None
    success_low: float | None = None
    success_high: float | None = None


@dataclass(frozen=True, slots=True)
class CategoryScore:
    """Scored decisions of one category (None: decisions without one) and their Brier score."""

    category: str | None
    decisions: int
    brier_score: float


@dataclass(frozen=True, slots=True)
class GroupScore:
    """Scored decisions of one group (an agent, a month; None: without one) and their Brier."""

    group: str | None
    decisions: int
    brier_score: float


@dataclass(frozen=True, slots=True)
class Murphy:
    """Murphy's (1973) decomposition of the binned Brier score:
    `brier_binned == reliability - resolution + uncertainty` (exact up to rounding)."""

    brier_binned: float
    reliability: float
    resolution: float
    uncertainty: float


@dataclass(frozen=True, slots=True)
class Calibration:
    """Scored decisions, their Brier score (None when there are none), bins, per category;
    Murphy's decomposition (None when none scored), per agent and per month."""

    decisions: int
    brier_score: float | None
    bins: list[Bin]
    by_category: list[CategoryScore]
    murphy: Murphy | None = None
    by_agent: list[GroupScore] = field(default_factory=list)
    by_month: list[GroupScore] = field(default_factory=list)

    def result(self) -> r.CalibrationResult:
        """This calibration as the cstp.getCalibration result."""
        calibration, murphy = self, self.murphy
        return r.CalibrationResult(
            decisions=calibration.decisions,
            brier_score=calibration.brier_score,
            brier_score_binned=None if murphy is None else murphy.brier_binned,
            reliability=None if murphy is None else murphy.reliability,
            resolution=None if murphy is None else murphy.resolution,
            uncertainty=None if murphy is None else murphy.uncertainty,
            bins=[
                r.BinResult.model_validate(
                    {
                        "from": b.low,
                        "to": b.high,
                        "count": b.count,
                        "meanConfidence": b.mean_confidence,
                        "successRate": b.success_rate,
                        "successRateLow": b.success_low,
                        "successRateHigh": b.success_high,
                    }
                )
                for b in calibration.bins
            ],
            by_category=[
                r.CategoryResult(
                    category=c.category, decisions=c.decisions, brier_score=c.brier_score
                )
                for c in calibration.by_category
            ],
            by_agent=[
                r.AgentResult(agent=g.group, decisions=g.decisions, brier_score=g.brier_score)
                for g in calibration.by_agent
            ],
            by_month=[
                r.MonthResult(month=g.group or "", decisions=g.decisions, brier_score=g.brier_score)
                for g in calibration.by_month
            ],
        )


def outcome_scores(outcomes: Sequence[str | None]) -> npt.NDArray[np.float64]:
    """Each outcome's score per OUTCOME_SCORES, NaN for one that is not scored."""
    return np.array([OUTCOME_SCORES.get(o or "", np.nan) for o in outcomes], dtype=np.float64)


def calibrate(
    confidence: npt.NDArray[np.float64],
    score: npt.NDArray[np.float64],
    categories: Sequence[str | None],
    bins: int,
    *,
    agents: Sequence[str | None] | None = None,
    date_epoch: npt.NDArray[np.float64] | None = None,
) -> Calibration:
    """Calibration of the rows with both a confidence and a score (NaN marks neither).

    Brier score: mean of (confidence - score)^2, in [0, 1], lower is better. Bins split
    [0, 1] into `bins` (>= 1) equal widths; a confidence falls in bin floor(c * bins),
    1.0 in the last. `byCategory` is sorted by category, decisions without one last;
    `by_agent` likewise by agent (`agents`, one per row); `by_month` by the UTC month of
    `date_epoch` (one per row, NaN: undated, left out), ascending.
    """
    scored = ~np.isnan(confidence) & ~np.isnan(score)
    keep = scored.tolist()
    conf, outcome = confidence[scored], score[scored]
    cats = [c for c, k in zip(categories, keep, strict=True) if k]
    squared = (conf - outcome) ** 2
    slot = np.minimum((conf * bins).astype(np.int64), bins - 1)
    reliability = []
    for b in range(bins):
        inside = slot == b
        count = int(np.count_nonzero(inside))
        rate = float(outcome[inside].mean()) if count else None
        low, high = wilson(rate, count) if rate is not None else (None, None)
        reliability.append(
            Bin(
                low=b / bins,
                high=(b + 1) / bins,
                count=count,
                mean_confidence=float(conf[inside].mean()) if count else None,
                success_rate=rate,
                success_low=low,
                success_high=high,
            )
        )
    by_agent: list[GroupScore] = []
    if agents is not None:
        chosen = [a for a, k in zip(agents, keep, strict=True) if k]
        by_agent = [
            GroupScore(c.category, c.decisions, c.brier_score)
            for c in _by_category(chosen, squared)
        ]
    return Calibration(
        decisions=len(conf),
        brier_score=float(squared.mean()) if len(conf) else None,
        bins=reliability,
        by_category=_by_category(cats, squared),
        murphy=murphy(conf, outcome, slot, bins) if len(conf) else None,
        by_agent=by_agent,
        by_month=[] if date_epoch is None else by_month(date_epoch[scored], squared),
    )


def wilson(rate: float, count: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval (Wilson 1927) of a success rate over `count` trials, at
    the normal quantile `z` (95% by default), clipped to [0, 1]. A partial outcome
    counts as half a success, so the rate need not be a whole number of successes."""
    z2n = z * z / count
    centre = (rate + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * np.sqrt(rate * (1 - rate) / count + z2n / (4 * count))
    return max(0.0, float(centre - half)), min(1.0, float(centre + half))


def murphy(
    conf: npt.NDArray[np.float64],
    outcome: npt.NDArray[np.float64],
    slot: npt.NDArray[np.int64],
    bins: int,
) -> Murphy:
    """Murphy's decomposition over the bins of the scored rows (none empty overall).

    With n_k rows in bin k, f_k their mean confidence, o_k their mean outcome and o the
    mean outcome overall: reliability = sum n_k (f_k - o_k)^2 / N, resolution = sum
    n_k (o_k - o)^2 / N, uncertainty = the (population) variance of the outcomes, which
    is o(1 - o) when every outcome is 0 or 1. The identity with the Brier score of each
    row's bin mean confidence holds by the law of total variance.
    """
    total = len(conf)
    counts = np.bincount(slot, minlength=bins).astype(np.float64)
    filled = counts > 0
    f = np.bincount(slot, weights=conf, minlength=bins)[filled] / counts[filled]
    o = np.bincount(slot, weights=outcome, minlength=bins)[filled] / counts[filled]
    n = counts[filled]
    mean = float(outcome.mean())
    forecast = np.zeros(bins)
    forecast[filled] = f
    return Murphy(
        brier_binned=float(((forecast[slot] - outcome) ** 2).mean()),
        reliability=float((n * (f - o) ** 2).sum() / total),
        resolution=float((n * (o - mean) ** 2).sum() / total),
        uncertainty=float(((outcome - mean) ** 2).mean()),
    )


def by_month(
    date_epoch: npt.NDArray[np.float64], squared: npt.NDArray[np.float64]
) -> list[GroupScore]:
    """Brier score per UTC month (`YYYY-MM`) of the dated rows, months ascending."""
    dated = ~np.isnan(date_epoch)
    months = month_numbers(date_epoch[dated])
    values = squared[dated]
    found, where = np.unique(months, return_inverse=True)
    counts = np.bincount(where, minlength=len(found))
    sums = np.bincount(where, weights=values, minlength=len(found))
    return [
        GroupScore(month_label(int(m)), int(c), float(s / c))
        for m, c, s in zip(found.tolist(), counts.tolist(), sums.tolist(), strict=True)
    ]


def month_numbers(date_epoch: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """Months since 1970-01 (UTC) of each epoch-seconds date (none NaN)."""
    seconds = date_epoch.astype(np.int64).astype("datetime64[s]")
    return seconds.astype("datetime64[M]").astype(np.int64)


def month_label(month: int) -> str:
    """`YYYY-MM` of a month number from `month_numbers`."""
    year, index = divmod(month, 12)
    return f"{1970 + year:04d}-{index + 1:02d}"


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
