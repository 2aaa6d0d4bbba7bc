"""The columns listDecisions and getCalibration read, and where they come from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from a2a.decisions.calibration import outcome_scores
from a2a.decisions.paging import IdsOf, Rows
from a2a.query.filters import to_where
from a2a.query.params import QueryFilters
from a2a.store import AsyncStore
from a2a.store.stored import StoredDecision


@dataclass(frozen=True, slots=True)
class DecisionTable:
    """One entry per row: id, date (UTC epoch seconds, NaN when absent), confidence (NaN
    when absent), outcome score (a2a.decisions.calibration.OUTCOME_SCORES, NaN when the
    outcome is not scored); `mask` marks the rows that pass the filters asked for.

    `ids` is the id column, or gives the ids of the rows asked for (see
    a2a.decisions.paging.page); `categories_of(rows)` gives the categories of those rows
    (None when absent): both are read for a few rows only.
    """

    ids: npt.NDArray[np.str_] | IdsOf
    date_epoch: npt.NDArray[np.float64]
    confidence: npt.NDArray[np.float64]
    score: npt.NDArray[np.float64]
    categories_of: Callable[[Rows], list[str | None]]
    mask: npt.NDArray[np.bool_]
    #: For a call whose Chroma read failed: the decisions of the ids asked for, from the
    #: index (the call marked stale), or None when it may not be answered stale.
    stale_decisions: Callable[[list[str]], dict[str, StoredDecision] | None] | None = None


class DecisionTableSource(Protocol):
    """Gives the table of every stored decision with `filters` applied as its mask."""

    async def table(self, filters: QueryFilters | None) -> DecisionTable:
        """The table; raises StoreUnavailable when the store cannot answer."""
        ...


class StoreTable:
    """A DecisionTableSource that reads the matching rows from Chroma on every call.

    Correct on any store but linear in its size per call; the in-process search index
    (a2a.index) is the source to serve from.
    """

    def __init__(self, store: AsyncStore) -> None:
        self._store = store

    async def table(self, filters: QueryFilters | None) -> DecisionTable:
        """The rows passing `filters` (mask all true)."""
        rows = await self._store.get(where=to_where(filters))
        decisions = [row.decision for row in rows]
        categories = [d.category for d in decisions]
        return DecisionTable(
            ids=np.array([d.id for d in decisions], dtype=np.str_),
            date_epoch=np.array([_number(d.date_epoch) for d in decisions], dtype=np.float64),
            confidence=np.array([_number(d.confidence) for d in decisions], dtype=np.float64),
            score=outcome_scores([d.outcome for d in decisions]),
            categories_of=lambda wanted: [categories[r] for r in wanted.tolist()],
            mask=np.ones(len(rows), dtype=bool),
        )


def _number(value: float | None) -> float:
    return float("nan") if value is None else float(value)
