"""Counts of decisions by month x outcome, category, status and agent (cstp.getStats).

Pure functions over the columns of a DecisionTable: a few numpy passes over the passing
rows, whatever the store's size (CONTRACT.md, "Lifecycle of a decision": getStats).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from a2a.decisions.calibration import month_label, month_numbers
from a2a.decisions.results import MonthCountResult, StatsResult
from a2a.decisions.table import Coded, DecisionTable

#: The key of decisions without an outcome in `byMonth[].outcomes`.
NO_OUTCOME: Final = "none"


@dataclass(frozen=True, slots=True)
class Count:
    """How many decisions have `value` (None: the field is absent)."""

    value: str | None
    decisions: int


@dataclass(frozen=True, slots=True)
class Month:
    """Decisions dated in one UTC month (`YYYY-MM`), per outcome (`none`: without one)."""

    month: str
    outcomes: dict[str, int]


@dataclass(frozen=True, slots=True)
class Stats:
    """Decisions passing the filters; undated ones; months ascending; the rest by count
    descending, then by value (absent last)."""

    decisions: int
    undated: int
    by_month: list[Month]
    by_category: list[Count]
    by_status: list[Count]
    by_agent: list[Count]

    def result(self) -> StatsResult:
        """These counts as the cstp.getStats result."""
        found = self

        def keyed(key: str, counts: list[Count]) -> list[dict[str, Any]]:
            return [{key: c.value, "decisions": c.decisions} for c in counts]

        return StatsResult(
            decisions=found.decisions,
            undated=found.undated,
            by_month=[MonthCountResult(month=m.month, outcomes=m.outcomes) for m in found.by_month],
            by_category=keyed("category", found.by_category),
            by_status=keyed("status", found.by_status),
            by_agent=keyed("agent", found.by_agent),
        )


def stats(table: DecisionTable) -> Stats:
    """The counts of the table's masked rows."""
    rows = np.flatnonzero(table.mask)
    dates = table.date_epoch[rows]
    dated = ~np.isnan(dates)
    return Stats(
        decisions=len(rows),
        undated=int(np.count_nonzero(~dated)),
        by_month=_by_month(dates[dated], _at(table.coded("outcome"), rows[dated])),
        by_category=counts(_at(table.coded("category"), rows)),
        by_status=counts(_at(table.coded("status"), rows)),
        by_agent=counts(_at(table.coded("recorded_by"), rows)),
    )


def counts(column: Coded) -> list[Count]:
    """Rows per value of `column`, by count descending then value (absent last)."""
    tally = np.bincount(column.codes + 1, minlength=len(column.values) + 1)
    found = [
        Count(None if code < 0 else column.values[code], int(tally[code + 1]))
        for code in range(-1, len(column.values))
        if tally[code + 1]
    ]
    return sorted(found, key=lambda c: (-c.decisions, c.value is None, c.value or ""))


def _at(column: Coded, rows: npt.NDArray[np.int64]) -> Coded:
    return Coded(column.codes[rows].astype(np.int64), column.values)


def _by_month(dates: npt.NDArray[np.float64], outcome: Coded) -> list[Month]:
    width = len(outcome.values) + 1
    keys = month_numbers(dates) * width + (outcome.codes + 1)
    found, tally = np.unique(keys, return_counts=True)
    months: dict[int, dict[str, int]] = {}
    for key, n in zip(found.tolist(), tally.tolist(), strict=True):
        month, code = divmod(key, width)
        name = NO_OUTCOME if code == 0 else outcome.values[code - 1] or NO_OUTCOME
        bucket = months.setdefault(month, {})
        bucket[name] = bucket.get(name, 0) + n
    return [Month(month_label(m), months[m]) for m in sorted(months)]
