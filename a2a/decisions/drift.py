"""Calibration drift: recent Brier score against a baseline, per category or agent.

The rule is the origin service's (CONTRACT.md, "Lifecycle of a decision": checkDrift): a
group has drifted when both windows hold at least MIN_SCORED scored decisions and the
recent Brier score exceeds the baseline by at least 20% and by at least 0.03.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from a2a.decisions.results import DriftGroup

MIN_SCORED: Final = 5
MIN_RATIO: Final = 1.2
MIN_DIFFERENCE: Final = 0.03
DAY_SECONDS: Final = 86_400
#: Slack on the rule's bounds, so a score exactly on one counts as on it despite rounding.
_SLACK: Final = 1e-12


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
    index: dict[str | None, int] = {}
    codes = np.array([index.setdefault(g, len(index)) for g in groups], dtype=np.int64)
    names = list(index)
    in_window = np.zeros(len(names), dtype=bool)
    in_window[codes[recent | baseline]] = True
    chosen = sorted(
        (n for n, name in enumerate(names) if in_window[n]),
        key=lambda n: (names[n] is None, names[n] or ""),
    )
    return [
        _group(names[n], squared[(codes == n) & recent], squared[(codes == n) & baseline])
        for n in chosen
    ]


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
