"""Calibration drift: recent Brier score against a baseline, per category or agent.

The rule is the origin service's (CONTRACT.md, "Lifecycle of a decision": checkDrift): a
group has drifted when both windows hold at least MIN_SCORED scored decisions and the
recent Brier score exceeds the baseline by at least 20% and by at least 0.03.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

MIN_SCORED: Final = 5
MIN_RATIO: Final = 1.2
MIN_DIFFERENCE: Final = 0.03
DAY_SECONDS: Final = 86_400
#: Slack on the rule's bounds, so a score exactly on one counts as on it despite rounding.
_SLACK: Final = 1e-12


@dataclass(frozen=True, slots=True)
class DriftGroup:
    """One group's scored decisions and Brier score in each window (None when none)."""

    group: str | None
    recent_brier: float | None
    baseline_brier: float | None
    recent_decisions: int
    baseline_decisions: int
    drifted: bool


def drift(
    date_epoch: npt.NDArray[np.float64],
    squared: npt.NDArray[np.float64],
    groups: Sequence[str | None],
    now_epoch: float,
    recent_days: int,
    baseline_days: int,
) -> list[DriftGroup]:
    """Per group of scored rows (`squared`: (confidence - outcome)^2 each; undated rows
    are never in a window): recent = dated at or after `recent_days` before `now_epoch`,
    baseline = the `baseline_days` before that. Groups with a decision in either window,
    sorted by name (None last)."""
    recent_from = now_epoch - recent_days * DAY_SECONDS
    baseline_from = recent_from - baseline_days * DAY_SECONDS
    dated = ~np.isnan(date_epoch)
    recent = dated & (date_epoch >= recent_from)
    baseline = dated & (date_epoch >= baseline_from) & (date_epoch < recent_from)
    names = sorted(
        {g for g, r, b in zip(groups, recent.tolist(), baseline.tolist(), strict=True) if r or b},
        key=lambda g: (g is None, g or ""),
    )
    result = []
    for name in names:
        mine = np.array([g == name for g in groups], dtype=bool)
        r, b = squared[mine & recent], squared[mine & baseline]
        result.append(_group(name, r, b))
    return result


def _group(
    name: str | None, recent: npt.NDArray[np.float64], baseline: npt.NDArray[np.float64]
) -> DriftGroup:
    r = float(recent.mean()) if len(recent) else None
    b = float(baseline.mean()) if len(baseline) else None
    drifted = (
        r is not None
        and b is not None
        and len(recent) >= MIN_SCORED
        and len(baseline) >= MIN_SCORED
        and r >= b * MIN_RATIO - _SLACK
        and r - b >= MIN_DIFFERENCE - _SLACK
    )
    return DriftGroup(name, r, b, len(recent), len(baseline), drifted)
