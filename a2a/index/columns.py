"""The filter columns of the search index: one numpy array per filterable field."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from a2a.query.params import QueryFilters
from a2a.store.stored import StoredDecision

BoolArray = npt.NDArray[np.bool_]

#: Code of an absent value in a coded column.
NULL = -1
_INITIAL_CAPACITY = 1024


class Vocabulary:
    """Distinct strings of one column <-> dense int codes (0, 1, ...), in first-seen order.

    Codes are never reused, so a code stays valid for the index's lifetime. `value(code)`
    returns the one shared str object per value, so rows share their strings.
    """

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}
        self._values: list[str] = []

    def __len__(self) -> int:
        return len(self._values)

    def encode(self, value: Any) -> int:
        """The code of `value`, added when new; NULL for anything but a str."""
        if not isinstance(value, str):
            return NULL
        code = self._codes.get(value)
        if code is None:
            code = self._codes[value] = len(self._values)
            self._values.append(value)
        return code

    def find(self, value: str) -> int:
        """The code of `value`, or NULL when no row ever had it (nothing can match)."""
        return self._codes.get(value, NULL)

    def value(self, code: int) -> str | None:
        """The string of `code`, None for NULL."""
        return None if code == NULL else self._values[code]

    def lookup(self, values: Iterable[str]) -> BoolArray:
        """A table `t` of len+1 with t[code + 1] True for the codes of `values` (NULL False)."""
        table = np.zeros(len(self._values) + 1, dtype=bool)
        for value in values:
            code = self._codes.get(value)
            if code is not None:
                table[code + 1] = True
        return table


class FilterColumns:
    """The filterable fields of every index row, as growable numpy columns.

    Columns (length `len(self)`, one entry per row, rows never move until compaction):
    - `category`, `stakes`, `status`, `outcome`, `recorded_by`: int32 codes into the
      column's `Vocabulary` (`self.vocabularies[name]`), NULL (-1) when absent;
    - `confidence`: float64, NaN when absent (float64 as Chroma keeps it: 0.7 must not
      become 0.699999988);
    - `date_epoch`: float64 UTC epoch seconds, NaN when absent (exact: every epoch second of
      the years 1-9999 is below 2**53; NaN also sorts last, as listDecisions wants);
    - `alive`: False for a tombstoned row (removed or replaced).
    Not thread-safe by itself: the SearchIndex holds the lock.
    """

    CODED = ("category", "stakes", "status", "outcome", "recorded_by")

    def __init__(self) -> None:
        self.vocabularies = {name: Vocabulary() for name in self.CODED}
        self._size = 0
        self._coded = {name: np.full(_INITIAL_CAPACITY, NULL, np.int32) for name in self.CODED}
        self._confidence = np.full(_INITIAL_CAPACITY, np.nan, np.float64)
        self._date_epoch = np.full(_INITIAL_CAPACITY, np.nan, np.float64)
        self._alive = np.zeros(_INITIAL_CAPACITY, dtype=bool)
        self._alive_count = 0

    def __len__(self) -> int:
        return self._size

    @property
    def alive_count(self) -> int:
        """Rows not tombstoned."""
        return self._alive_count

    # -- columns (views over the used rows; do not write to them) ------------------------

    def codes(self, name: str) -> npt.NDArray[np.int32]:
        """The int32 codes of coded column `name` (one of CODED)."""
        return self._coded[name][: self._size]

    @property
    def confidence(self) -> npt.NDArray[np.float64]:
        """Confidence in [0, 1] per row, NaN when absent."""
        return self._confidence[: self._size]

    @property
    def date_epoch(self) -> npt.NDArray[np.float64]:
        """Decision date as UTC epoch seconds per row, NaN when absent."""
        return self._date_epoch[: self._size]

    @property
    def alive(self) -> BoolArray:
        """True for rows that are current (not removed, not replaced)."""
        return self._alive[: self._size]

    def value(self, name: str, row: int) -> str | None:
        """The string in coded column `name` at `row`, None when absent."""
        return self.vocabularies[name].value(int(self._coded[name][row]))

    # -- writes ---------------------------------------------------------------------------

    def append(self, decisions: Sequence[StoredDecision]) -> int:
        """Append one row per stored decision; returns the first new row number."""
        first, count = self._size, len(decisions)
        self._reserve(first + count)
        rows = slice(first, first + count)
        for name, vocabulary in self.vocabularies.items():
            self._coded[name][rows] = [vocabulary.encode(getattr(d, name)) for d in decisions]
        self._confidence[rows] = [_number(d.confidence) for d in decisions]
        self._date_epoch[rows] = [_number(d.date_epoch) for d in decisions]
        self._alive[rows] = True
        self._size += count
        self._alive_count += count
        return first

    def kill(self, rows: npt.ArrayLike) -> None:
        """Tombstone `rows` (already dead rows are left as they are)."""
        index = np.asarray(rows, dtype=np.int64)
        self._alive_count -= int(np.count_nonzero(self._alive[index]))
        self._alive[index] = False

    def take(self, rows: npt.NDArray[np.int64]) -> FilterColumns:
        """A new FilterColumns holding only `rows`, in that order (for compaction)."""
        taken = FilterColumns()
        taken.vocabularies = self.vocabularies
        taken._reserve(len(rows))
        for name in self.CODED:
            taken._coded[name][: len(rows)] = self._coded[name][rows]
        taken._confidence[: len(rows)] = self._confidence[rows]
        taken._date_epoch[: len(rows)] = self._date_epoch[rows]
        taken._alive[: len(rows)] = self._alive[rows]
        taken._size = len(rows)
        taken._alive_count = int(np.count_nonzero(taken._alive[: len(rows)]))
        return taken

    # -- filtering -------------------------------------------------------------------------

    def mask(self, filters: QueryFilters | None) -> BoolArray:
        """True for each alive row passing `filters` (a new array of len(self)).

        Exactly `a2a.query.filters.to_where`'s semantics, so the index and Chroma agree
        (tests/index/test_filter_crosscheck.py runs both): both bounds inclusive; dates
        compare as integer epoch seconds, the lower bound rounded up and the upper one
        down; a row whose field is absent never matches a filter on that field
        (NaN compares False; NULL is not in any lookup table); categories match exactly.
        """
        out = self.alive.copy()
        if filters is None:
            return out
        if filters.category is not None:
            code = self.vocabularies["category"].find(filters.category)
            out &= self.codes("category") == code if code != NULL else False
        if filters.min_confidence is not None:
            out &= self.confidence >= float(filters.min_confidence)
        if filters.max_confidence is not None:
            out &= self.confidence <= float(filters.max_confidence)
        if (after := filters.after) is not None:
            out &= self.date_epoch >= math.ceil(after.timestamp())
        if (before := filters.before) is not None:
            out &= self.date_epoch <= math.floor(before.timestamp())
        for name, wanted in (("stakes", filters.stakes), ("status", filters.status)):
            if wanted is not None:
                table = self.vocabularies[name].lookup(wanted)
                out &= table[self.codes(name) + 1]
        return out

    def _reserve(self, size: int) -> None:
        capacity = len(self._alive)
        if size <= capacity:
            return
        while capacity < size:
            capacity *= 2
        for name in self.CODED:
            self._coded[name] = _grown(self._coded[name], capacity, NULL)
        self._confidence = _grown(self._confidence, capacity, np.nan)
        self._date_epoch = _grown(self._date_epoch, capacity, np.nan)
        self._alive = _grown(self._alive, capacity, False)


def _number(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _grown(array: npt.NDArray[Any], capacity: int, fill: Any) -> npt.NDArray[Any]:
    grown = np.full(capacity, fill, dtype=array.dtype)
    grown[: len(array)] = array
    return grown
