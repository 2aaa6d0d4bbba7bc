"""getStats counts and checkDrift's rule, as tables of hand-computed values."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from a2a.decisions.drift import DAY_SECONDS, drift
from a2a.decisions.stats import Count, Month, stats
from a2a.decisions.table import Coded, DecisionTable

NAN = float("nan")


def epoch(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def table(rows: list[dict[str, object]]) -> DecisionTable:
    columns = {
        name: Coded.of([row.get(name) for row in rows])  # type: ignore[misc]
        for name in ("category", "status", "outcome", "recorded_by")
    }
    return DecisionTable(
        ids=np.array([str(n) for n in range(len(rows))]),
        date_epoch=np.array([row.get("date", NAN) for row in rows], dtype=np.float64),
        confidence=np.full(len(rows), NAN),
        score=np.full(len(rows), NAN),
        categories_of=lambda wanted: [columns["category"].values[0]] * len(wanted),
        mask=np.array([row.get("keep", True) for row in rows], dtype=bool),
        coded=columns.__getitem__,
    )


def test_stats_count_months_by_outcome_and_the_rest_by_count_then_name() -> None:
    rows: list[dict[str, object]] = [
        {
            "date": epoch("2026-01-31T23:59:59"),
            "outcome": "success",
            "category": "b",
            "status": "decided",
            "recorded_by": "ann",
        },
        {
            "date": epoch("2026-01-01T00:00:00"),
            "outcome": None,
            "category": "a",
            "status": "decided",
            "recorded_by": "ann",
        },
        {
            "date": epoch("2026-01-15T00:00:00"),
            "outcome": "success",
            "category": "b",
            "status": "reviewed",
        },
        {
            "date": epoch("2025-11-02T00:00:00"),
            "outcome": "failure",
            "category": None,
            "status": "decided",
            "recorded_by": "bob",
        },
        {"outcome": "success", "category": "a", "status": "reviewed", "recorded_by": "bob"},
        {
            "date": epoch("2026-02-01T00:00:00"),
            "outcome": "success",
            "category": "z",
            "keep": False,
        },
    ]
    found = stats(table(rows))
    assert (found.decisions, found.undated) == (5, 1)
    assert found.by_month == [
        Month("2025-11", {"failure": 1}),
        Month("2026-01", {"success": 2, "none": 1}),
    ]
    assert found.by_category == [Count("a", 2), Count("b", 2), Count(None, 1)]
    assert found.by_status == [Count("decided", 3), Count("reviewed", 2)]
    assert found.by_agent == [Count("ann", 2), Count("bob", 2), Count(None, 1)]


def test_stats_of_nothing_are_zero_and_empty() -> None:
    found = stats(table([]))
    assert (found.decisions, found.undated, found.by_month, found.by_agent) == (0, 0, [], [])


NOW = epoch("2026-06-30T00:00:00")


def windows(recent: list[float], baseline: list[float]) -> tuple[np.ndarray, np.ndarray]:
    dates = [NOW - 2 * DAY_SECONDS] * len(recent) + [NOW - 40 * DAY_SECONDS] * len(baseline)
    return np.array(dates), np.array(recent + baseline)


@pytest.mark.parametrize(
    ("recent", "baseline", "drifted"),
    [
        ([0.30] * 5, [0.20] * 5, True),  # +50%, +0.10
        ([0.12] * 5, [0.10] * 5, False),  # +20% but only +0.02
        ([0.23] * 5, [0.20] * 5, False),  # +0.03 but only +15%
        ([0.30] * 4, [0.20] * 5, False),  # four recent scored decisions
        ([0.30] * 5, [0.20] * 4, False),  # four in the baseline
        ([0.10] * 5, [0.30] * 5, False),  # better, not worse
        ([0.24] * 5, [0.20] * 5, True),  # on both bounds: +20% and +0.04
    ],
    ids=["worse", "small-step", "small-ratio", "few-recent", "few-baseline", "better", "bounds"],
)
def test_drift_needs_five_each_side_and_20_percent_and_003_worse(
    recent: list[float], baseline: list[float], drifted: bool
) -> None:
    dates, squared = windows(recent, baseline)
    [group] = drift(dates, squared, ["arch"] * len(dates), NOW, 30, 180)
    assert (group.recent_decisions, group.baseline_decisions) == (len(recent), len(baseline))
    assert group.recent_brier == pytest.approx(np.mean(recent))
    assert group.baseline_brier == pytest.approx(np.mean(baseline))
    assert group.drifted is drifted


def test_drift_windows_leave_out_older_and_undated_decisions_and_sort_groups() -> None:
    dates = np.array([NOW - DAY_SECONDS, NOW - 300 * DAY_SECONDS, NAN, NOW - 31 * DAY_SECONDS])
    squared = np.array([0.1, 0.9, 0.9, 0.2])
    found = drift(dates, squared, ["b", "a", "c", None], NOW, 30, 180)
    assert [(g.group, g.recent_decisions, g.baseline_decisions) for g in found] == [
        ("b", 1, 0),
        (None, 0, 1),
    ]
    assert found[0].baseline_brier is None and found[1].recent_brier is None
