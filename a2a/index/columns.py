"""The filter columns of the search index: one numpy array per filterable field."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from a2a.index.stored_fields import load_part, padded, save_arrays
from a2a.records import DecisionRecord
from a2a.records.filters import QueryFilters

BoolArray = npt.NDArray[np.bool_]

#: Code of an absent value in a coded column.
NULL = -1
#: Below this fraction of rows passing the coded conditions, range conditions are tested
#: on the passing rows only (bench/scale_bench.py's ~0.1% filter).
RANGE_ON_ROWS_BELOW = 1 / 16
#: Code dtypes, smallest first: a column widens when its vocabulary outgrows one.
_CODE_DTYPES = (np.int8, np.int16, np.int32)
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

    def values(self, codes: Iterable[int]) -> list[str | None]:
        """The string of each of `codes`, None for NULL."""
        names = self._values
        return [None if code == NULL else names[code] for code in codes]

    def strings(self) -> list[str]:
        """Every value, by code (what a snapshot keeps)."""
        return list(self._values)

    @classmethod
    def of(cls, strings: Sequence[str]) -> Vocabulary:
        """The vocabulary whose code i is `strings[i]` (from `strings()`)."""
        vocabulary = cls()
        for value in strings:
            vocabulary.encode(value)
        return vocabulary


class FilterColumns:
    """The filterable fields of every index row, as growable numpy columns.

    Columns (length `len(self)`, one entry per row, rows never move until compaction):
    - `category`, `stakes`, `status`, `outcome`, `recorded_by`: signed int codes into the
      column's `Vocabulary` (`self.vocabularies[name]`), NULL (-1) when absent; int8
      while the vocabulary fits, then int16, then int32 (a filter streams one byte per
      row, not four);
    - `confidence`: float64, NaN when absent (float64 as Chroma keeps it: 0.7 must not
      become 0.699999988);
    - `date_epoch`: float64 UTC epoch seconds, NaN when absent (exact: every epoch second of
      the years 1-9999 is below 2**53; NaN also sorts last, as listDecisions wants);
    - `alive`: False for a tombstoned row (removed or replaced).
    Not thread-safe by itself: the SearchIndex holds the lock.
    """

    CODED = ("category", "stakes", "status", "outcome", "recorded_by")

    def __init__(self, range_on_rows_below: float = RANGE_ON_ROWS_BELOW) -> None:
        """`range_on_rows_below`: the fraction of rows passing the coded conditions below
        which range conditions are tested on those rows only (`mask`)."""
        self.range_on_rows_below = range_on_rows_below
        self.vocabularies = {name: Vocabulary() for name in self.CODED}
        self._size = 0
        self._coded = {name: np.full(_INITIAL_CAPACITY, NULL, np.int8) for name in self.CODED}
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

    def codes(self, name: str) -> npt.NDArray[np.signedinteger[Any]]:
        """The codes of coded column `name` (one of CODED): int8, int16 or int32."""
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

    def values(self, name: str, rows: npt.NDArray[np.int64]) -> list[str | None]:
        """The strings in coded column `name` at each of `rows`, None where absent."""
        return self.vocabularies[name].values(self._coded[name][rows].tolist())

    @property
    def nbytes(self) -> int:
        """Bytes of the columns' buffers, spare capacity included."""
        coded = sum(array.nbytes for array in self._coded.values())
        return coded + self._confidence.nbytes + self._date_epoch.nbytes + self._alive.nbytes

    # -- snapshots (a2a.index.snapshot) ----------------------------------------------------

    def save(self, folder: Path) -> tuple[list[Path], dict[str, list[str]]]:
        """Write one `column.<name>.npy` per column into `folder`, with spare capacity
        (a2a.index.stored_fields.spare_rows); returns the files and the vocabularies
        (name -> strings by code) for the caller's state file."""
        rows = self._size
        arrays = {name: padded(self.codes(name), rows, NULL) for name in self.CODED}
        arrays["confidence"] = padded(self.confidence, rows, np.nan)
        arrays["date_epoch"] = padded(self.date_epoch, rows, np.nan)
        arrays["alive"] = padded(self.alive, rows, False)
        paths = save_arrays(folder, "column", **arrays)
        return paths, {name: v.strings() for name, v in self.vocabularies.items()}

    @classmethod
    def load(cls, folder: Path, vocabularies: dict[str, list[str]], rows: int) -> FilterColumns:
        """The columns of `rows` rows `save` wrote, memory-mapped copy-on-write (a tombstone
        or an append writes to this process's copy of the page). Raises ValueError when a
        file holds fewer rows or the columns differ in capacity."""
        loaded = cls()
        loaded.vocabularies = {name: Vocabulary.of(vocabularies[name]) for name in cls.CODED}
        loaded._coded = {name: load_part(folder, "column", name) for name in cls.CODED}
        loaded._confidence = load_part(folder, "column", "confidence")
        loaded._date_epoch = load_part(folder, "column", "date_epoch")
        loaded._alive = load_part(folder, "column", "alive")
        loaded._size = rows
        sizes = {len(array) for array in loaded._coded.values()}
        sizes |= {len(loaded._confidence), len(loaded._date_epoch), len(loaded._alive)}
        if len(sizes) != 1 or min(sizes) < rows:
            raise ValueError(f"filter columns of capacities {sorted(sizes)} for {rows} rows")
        loaded._alive_count = int(np.count_nonzero(loaded.alive))
        return loaded

    # -- writes ---------------------------------------------------------------------------

    def append(self, decisions: Sequence[DecisionRecord]) -> int:
        """Append one row per record; returns the first new row number."""
        first, count = self._size, len(decisions)
        self._reserve(first + count)
        rows = slice(first, first + count)
        for name, vocabulary in self.vocabularies.items():
            codes = [vocabulary.encode(getattr(d, name)) for d in decisions]
            self._fit_codes(name)
            self._coded[name][rows] = codes
        self._confidence[rows] = [_number(d.confidence) for d in decisions]
        self._date_epoch[rows] = [_number(d.date_epoch) for d in decisions]
        self._alive[rows] = True
        self._size += count
        self._alive_count += count
        return first

    def _fit_codes(self, name: str) -> None:
        """Widen column `name` when its vocabulary's codes no longer fit its dtype."""
        column = self._coded[name]
        largest = len(self.vocabularies[name]) - 1
        if largest <= np.iinfo(column.dtype).max:
            return
        dtype = next(d for d in _CODE_DTYPES if largest <= np.iinfo(d).max)
        self._coded[name] = column.astype(dtype)

    def kill(self, rows: npt.ArrayLike) -> None:
        """Tombstone `rows` (already dead rows are left as they are)."""
        index = np.asarray(rows, dtype=np.int64)
        self._alive_count -= int(np.count_nonzero(self._alive[index]))
        self._alive[index] = False

    def take(self, rows: npt.NDArray[np.int64]) -> FilterColumns:
        """A new FilterColumns holding only `rows`, in that order (for compaction)."""
        taken = FilterColumns(self.range_on_rows_below)
        taken.vocabularies = self.vocabularies
        taken._reserve(len(rows))
        for name in self.CODED:
            taken._coded[name] = taken._coded[name].astype(self._coded[name].dtype)
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

        Exactly `a2a.store.metadata.to_where`'s semantics, so the index and Chroma agree
        (tests/index/test_filter_crosscheck.py runs both): both bounds inclusive; dates
        compare as integer epoch seconds, the lower bound rounded up and the upper one
        down; a row whose field is absent never matches a filter on that field
        (NaN compares False; NULL equals no wanted code); categories match exactly.

        Plan: the coded conditions first (one byte or two per row), then the numeric
        ranges, over every row when many rows are left and only over the rows left
        when fewer than `range_on_rows_below` of them pass (gathering them is cheaper
        than streaming the float64 columns past the CPU).
        """
        out = self.alive.copy()
        if filters is None:
            return out
        if filters.category is not None:
            self._keep_codes(out, "category", [filters.category])
        for name, wanted in (("stakes", filters.stakes), ("status", filters.status)):
            if wanted is not None:
                self._keep_codes(out, name, wanted)
        ranges = self._ranges(filters)
        if not ranges:
            return out
        if np.count_nonzero(out) < self.range_on_rows_below * len(out):
            rows = np.flatnonzero(out)
            keep = np.ones(len(rows), dtype=bool)
            for column, low, high in ranges:
                values = column[rows]
                if low is not None:
                    keep &= values >= low
                if high is not None:
                    keep &= values <= high
            out[rows[~keep]] = False
            return out
        for column, low, high in ranges:
            if low is not None:
                out &= column >= low
            if high is not None:
                out &= column <= high
        return out

    def _keep_codes(self, out: BoolArray, name: str, wanted: Iterable[str]) -> None:
        """`out &=` (row's code is one of `wanted`'s) for coded column `name`.

        One comparison per wanted value (stakes and status lists hold at most their
        enum's few values): a table lookup per row would cost ~30 comparisons.
        """
        vocabulary = self.vocabularies[name]
        codes = sorted({c for c in (vocabulary.find(v) for v in wanted) if c != NULL})
        if not codes:
            out[:] = False
            return
        column = self.codes(name)
        hit = column == codes[0]
        for code in codes[1:]:
            hit |= column == code
        out &= hit

    def _ranges(
        self, filters: QueryFilters
    ) -> list[tuple[npt.NDArray[np.float64], float | None, float | None]]:
        """(column, inclusive low or None, inclusive high or None) per range condition."""
        ranges: list[tuple[npt.NDArray[np.float64], float | None, float | None]] = []
        low, high = filters.min_confidence, filters.max_confidence
        if low is not None or high is not None:
            ranges.append(
                (
                    self.confidence,
                    None if low is None else float(low),
                    None if high is None else float(high),
                )
            )
        after, before = filters.after, filters.before
        if after is not None or before is not None:
            ranges.append(
                (
                    self.date_epoch,
                    None if after is None else float(math.ceil(after.timestamp())),
                    None if before is None else float(math.floor(before.timestamp())),
                )
            )
        return ranges

    def _reserve(self, size: int) -> None:
        capacity = len(self._alive)
        if size <= capacity:
            return
        capacity = max(capacity, _INITIAL_CAPACITY)
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
