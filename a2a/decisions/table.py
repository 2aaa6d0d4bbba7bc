"""The columns listDecisions and getCalibration read, and where they come from."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from a2a.decisions.calibration import outcome_scores
from a2a.decisions.paging import IdsOf, Rows
from a2a.records.filters import QueryFilters
from a2a.records.summary import DecisionMetadata
from a2a.store.metadata import to_where

if TYPE_CHECKING:
    from a2a.store.async_store import AsyncStore


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
    #: `coded(name)` for `category`, `status`, `outcome`, `recorded_by`: one code per row
    #: (-1 when absent) and the value of each code (cstp.getStats counts codes, not strings).
    coded: Callable[[str], Coded] = lambda name: Coded(np.zeros(0, np.int64), [])

    #: For a call whose Chroma read failed: the summaries of the ids asked for, from the
    #: index (the call marked stale), or None when it may not be answered stale.
    stale_decisions: Callable[[list[str]], dict[str, DecisionMetadata] | None] | None = None

    def labels(self, name: str, rows: Rows) -> list[str | None]:
        """The value of coded column `name` at each of `rows` (None where absent)."""
        column = self.coded(name)
        return [None if c < 0 else column.values[c] for c in column.codes[rows].tolist()]


@dataclass(frozen=True, slots=True)
class Coded:
    """A string column as codes: `codes[row]` indexes `values`, -1 for absent."""

    codes: npt.NDArray[np.signedinteger[Any]]
    values: list[str | None]

    @classmethod
    def of(cls, strings: Sequence[str | None]) -> Coded:
        """The codes of `strings` (values in order of first appearance)."""
        index: dict[str, int] = {}
        codes = [-1 if s is None else index.setdefault(s, len(index)) for s in strings]
        return cls(np.array(codes, dtype=np.int64), list(index))


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
        columns = {
            name: Coded.of([getattr(d, name) for d in decisions])
            for name in ("category", "status", "outcome", "recorded_by")
        }
        return DecisionTable(
            ids=np.array([d.id for d in decisions], dtype=np.str_),
            date_epoch=np.array([_number(d.date_epoch) for d in decisions], dtype=np.float64),
            confidence=np.array([_number(d.confidence) for d in decisions], dtype=np.float64),
            score=outcome_scores([d.outcome for d in decisions]),
            categories_of=lambda wanted: [categories[r] for r in wanted.tolist()],
            mask=np.ones(len(rows), dtype=bool),
            coded=columns.__getitem__,
        )


def _number(value: float | None) -> float:
    return float("nan") if value is None else float(value)
