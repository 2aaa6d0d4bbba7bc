"""Stored fields of the search index as columns: no Python object per row.

Arrow's layouts, in growable numpy arrays:
- `StringColumn`: one string (or None) per row, UTF-8 bytes in one buffer, row i at
  `data[offsets[i]:offsets[i + 1]]`, and a null flag per row;
- `ListColumn`: a tuple of strings per row, as codes into a vocabulary in one int32
  buffer, row i at `codes[offsets[i]:offsets[i + 1]]` (an empty tuple and None alike).
A row's Python value is built only when it is read (the rows a result shows), so a
million rows cost a few buffers, not millions of objects for the collector to walk and the
allocator to fragment. All save to `.npy` files with spare capacity (`spare_rows`) and
load them memory-mapped copy-on-write (a2a.index.snapshot): pages are read when a row is,
and the appends after a start write into the spare rows' pages (copied into this process
one page at a time), not a copy of the whole column; the row count is the caller's to keep.
Not thread-safe by themselves: the SearchIndex holds the lock; readers holding a column
across a write see the rows they had (a growth copies, then swaps the arrays in).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Self, cast

import numpy as np
import numpy.typing as npt

_INITIAL_ROWS = 1024
_INITIAL_BYTES = 16 * 1024


class StringColumn:
    """str or None per row, in one UTF-8 buffer with int64 offsets (Arrow's string array).

    `column[row]` is the row's str (None when absent); `values(rows)` reads many at once.
    About `len(utf-8) + 9` bytes a row.
    """

    __slots__ = ("_data", "_null", "_offsets", "_size")

    def __init__(self) -> None:
        self._data = np.zeros(_INITIAL_BYTES, dtype=np.uint8)
        self._offsets = np.zeros(_INITIAL_ROWS + 1, dtype=np.int64)
        self._null = np.zeros(_INITIAL_ROWS, dtype=bool)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, row: int) -> str | None:
        if not -self._size <= row < self._size:
            raise IndexError(row)
        row %= self._size
        if self._null[row]:
            return None
        offsets = self._offsets
        return self._data[offsets[row] : offsets[row + 1]].tobytes().decode()

    def __iter__(self) -> Iterator[str | None]:
        return iter(self.values(range(self._size)))

    @property
    def nbytes(self) -> int:
        """Bytes of the column's buffers, spare capacity included."""
        return self._data.nbytes + self._offsets.nbytes + self._null.nbytes

    @property
    def text_bytes(self) -> int:
        """Bytes of UTF-8 the rows hold (no offsets, no spare capacity)."""
        return int(self._offsets[self._size])

    def values(self, rows: Iterable[int]) -> list[str | None]:
        """The value of each of `rows` (ints in range), in order."""
        at = np.fromiter(rows, dtype=np.int64) if not isinstance(rows, np.ndarray) else rows
        starts: list[int] = self._offsets[at].tolist()
        ends: list[int] = self._offsets[at + 1].tolist()
        nulls: list[bool] = self._null[at].tolist()
        data = memoryview(self._data)  # type: ignore[arg-type]
        return [
            None if null else str(data[start:end], "utf-8")
            for start, end, null in zip(starts, ends, nulls, strict=True)
        ]

    def append(self, values: Sequence[str | None]) -> None:
        """Append one row per value."""
        encoded = [b"" if value is None else value.encode() for value in values]
        count = len(encoded)
        lengths = np.fromiter((len(e) for e in encoded), dtype=np.int64, count=count)
        used = int(self._offsets[self._size])
        total = used + int(lengths.sum())
        self._reserve(self._size + count, total)
        self._data[used:total] = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        self._offsets[self._size + 1 : self._size + 1 + count] = used + np.cumsum(lengths)
        self._null[self._size : self._size + count] = [value is None for value in values]
        self._size += count

    def take(self, rows: npt.NDArray[np.int64]) -> Self:
        """A new column of only `rows`, in that order (compaction)."""
        taken = type(self)()
        positions, taken._offsets = _gather(self._offsets, rows)
        taken._data = self._data[positions]
        taken._null = self._null[rows].copy()
        taken._size = len(rows)
        return taken

    def save(self, folder: Path, name: str) -> list[Path]:
        """Write `<name>.data.npy`, `<name>.offsets.npy`, `<name>.null.npy`, with spare
        capacity; return them."""
        rows, used = self._size, int(self._offsets[self._size])
        spare = spare_rows(rows)
        return save_arrays(
            folder,
            name,
            data=_resized(self._data[:used], used + _spare_items(used, rows, _INITIAL_BYTES)),
            offsets=_resized(self._offsets[: rows + 1], rows + 1 + spare),
            null=_resized(self._null[:rows], rows + spare),
        )

    @classmethod
    def load(cls, folder: Path, name: str, rows: int) -> Self:
        """The column of `rows` rows `save` wrote, its arrays memory-mapped copy-on-write.
        Raises ValueError when the files hold fewer rows."""
        loaded = cls()
        loaded._data = load_part(folder, name, "data")
        loaded._offsets = load_part(folder, name, "offsets")
        loaded._null = load_part(folder, name, "null")
        loaded._size = rows
        if len(loaded._offsets) != len(loaded._null) + 1 or len(loaded._null) < rows:
            raise ValueError(f"{name}: {len(loaded._null)} rows' room for {rows} rows")
        if int(loaded._offsets[rows]) > len(loaded._data):
            raise ValueError(f"{name}: offsets past the data")
        return loaded

    def _reserve(self, rows: int, data: int) -> None:
        if rows > len(self._null):
            capacity = _grown_capacity(len(self._null), rows)
            self._offsets = _resized(self._offsets, capacity + 1)
            self._null = _resized(self._null, capacity)
        if data > len(self._data):
            self._data = _resized(self._data, _grown_capacity(len(self._data), data))


class IdColumn(StringColumn):
    """A StringColumn of values never None (record ids): `column[row]` is a str."""

    __slots__ = ()

    def __getitem__(self, row: int) -> str:
        value = super().__getitem__(row)
        assert value is not None, "an id column holds no None"
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids(range(len(self))))

    def ids(self, rows: Iterable[int]) -> list[str]:
        """The id of each of `rows`, in order."""
        return cast(list[str], self.values(rows))


class ListColumn:
    """A tuple of strings per row, as int32 codes into a vocabulary (Arrow's list array
    of a dictionary-encoded string), with int64 offsets. About `4 x items + 8` bytes a row;
    each distinct string is held once (tags and reason types repeat across rows)."""

    __slots__ = ("_codes", "_index", "_offsets", "_size", "_vocabulary")

    def __init__(self) -> None:
        self._vocabulary: list[str] = []
        self._index: dict[str, int] = {}
        self._codes = np.zeros(_INITIAL_ROWS, dtype=np.int32)
        self._offsets = np.zeros(_INITIAL_ROWS + 1, dtype=np.int64)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, row: int) -> tuple[str, ...]:
        return self.values([row])[0]

    @property
    def nbytes(self) -> int:
        """Bytes of the column's buffers (spare capacity included) and its vocabulary."""
        vocabulary = sum(49 + len(value) for value in self._vocabulary) * 2
        return self._codes.nbytes + self._offsets.nbytes + vocabulary

    def values(self, rows: Iterable[int]) -> list[tuple[str, ...]]:
        """The tuple of each of `rows`, in order (`()` when the row has none)."""
        at = np.fromiter(rows, dtype=np.int64) if not isinstance(rows, np.ndarray) else rows
        starts: list[int] = self._offsets[at].tolist()
        ends: list[int] = self._offsets[at + 1].tolist()
        codes, names = self._codes, self._vocabulary
        return [
            tuple(names[code] for code in codes[start:end].tolist()) if end > start else ()
            for start, end in zip(starts, ends, strict=True)
        ]

    def append(self, values: Sequence[Sequence[str] | None]) -> None:
        """Append one row per tuple (None: no items)."""
        index, names = self._index, self._vocabulary
        flat: list[int] = []
        lengths = np.zeros(len(values), dtype=np.int64)
        for n, items in enumerate(values):
            for item in items or ():
                code = index.get(item)
                if code is None:
                    code = index[item] = len(names)
                    names.append(item)
                flat.append(code)
            lengths[n] = len(items or ())
        used = int(self._offsets[self._size])
        self._reserve(self._size + len(values), used + len(flat))
        self._codes[used : used + len(flat)] = flat
        self._offsets[self._size + 1 : self._size + 1 + len(values)] = used + np.cumsum(lengths)
        self._size += len(values)

    def take(self, rows: npt.NDArray[np.int64]) -> ListColumn:
        """A new column of only `rows`, in that order (compaction); the same vocabulary."""
        taken = ListColumn()
        taken._vocabulary, taken._index = self._vocabulary, self._index
        positions, taken._offsets = _gather(self._offsets, rows)
        taken._codes = self._codes[positions]
        taken._size = len(rows)
        return taken

    def vocabulary(self) -> list[str]:
        """The distinct strings, by code (for a snapshot's state file)."""
        return list(self._vocabulary)

    def save(self, folder: Path, name: str) -> list[Path]:
        """Write `<name>.codes.npy` and `<name>.offsets.npy`, with spare capacity (the
        vocabulary is the caller's to keep: `vocabulary()`); return them."""
        rows, used = self._size, int(self._offsets[self._size])
        return save_arrays(
            folder,
            name,
            codes=_resized(self._codes[:used], used + _spare_items(used, rows, _INITIAL_ROWS)),
            offsets=_resized(self._offsets[: rows + 1], rows + 1 + spare_rows(rows)),
        )

    @classmethod
    def load(cls, folder: Path, name: str, vocabulary: Sequence[str], rows: int) -> ListColumn:
        """The column of `rows` rows `save` wrote with its `vocabulary`, arrays mapped
        copy-on-write. Raises ValueError when the files hold fewer rows."""
        loaded = cls()
        loaded._vocabulary = list(vocabulary)
        loaded._index = {value: code for code, value in enumerate(loaded._vocabulary)}
        loaded._codes = load_part(folder, name, "codes")
        loaded._offsets = load_part(folder, name, "offsets")
        loaded._size = rows
        if len(loaded._offsets) < rows + 1 or int(loaded._offsets[rows]) > len(loaded._codes):
            raise ValueError(f"{name}: no room for {rows} rows")
        return loaded

    def _reserve(self, rows: int, items: int) -> None:
        if rows + 1 > len(self._offsets):
            self._offsets = _resized(self._offsets, _grown_capacity(len(self._offsets), rows + 1))
        if items > len(self._codes):
            self._codes = _resized(self._codes, _grown_capacity(len(self._codes), items))


class IntColumn:
    """An int64 or None per row (None stored as the int64 minimum), growable."""

    NULL = int(np.iinfo(np.int64).min)
    __slots__ = ("_size", "_values")

    def __init__(self) -> None:
        self._values = np.full(_INITIAL_ROWS, self.NULL, dtype=np.int64)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, row: int) -> int | None:
        value = int(self._values[: self._size][row])
        return None if value == self.NULL else value

    @property
    def nbytes(self) -> int:
        """Bytes of the column's buffer, spare capacity included."""
        return self._values.nbytes

    def values(self, rows: Iterable[int]) -> list[int | None]:
        """The value of each of `rows`, in order."""
        at = np.fromiter(rows, dtype=np.int64) if not isinstance(rows, np.ndarray) else rows
        null = self.NULL
        return [None if v == null else v for v in self._values[at].tolist()]

    def append(self, values: Sequence[int | None]) -> None:
        """Append one row per value."""
        end = self._size + len(values)
        if end > len(self._values):
            capacity = _grown_capacity(len(self._values), end)
            self._values = _resized(self._values, capacity, fill=self.NULL)
        self._values[self._size : end] = [self.NULL if v is None else v for v in values]
        self._size = end

    def take(self, rows: npt.NDArray[np.int64]) -> IntColumn:
        """A new column of only `rows`, in that order (compaction)."""
        taken = IntColumn()
        taken._values = self._values[rows]
        taken._size = len(rows)
        return taken

    def save(self, folder: Path, name: str) -> list[Path]:
        """Write `<name>.values.npy`, with spare capacity; return it."""
        rows = self._size
        values = _resized(self._values[:rows], rows + spare_rows(rows), fill=self.NULL)
        return save_arrays(folder, name, values=values)

    @classmethod
    def load(cls, folder: Path, name: str, rows: int) -> IntColumn:
        """The column of `rows` rows `save` wrote, mapped copy-on-write. Raises ValueError
        when the file holds fewer rows."""
        loaded = cls()
        loaded._values = load_part(folder, name, "values", rows)
        loaded._size = rows
        return loaded


def spare_rows(rows: int) -> int:
    """Rows of spare capacity a snapshot's column of `rows` rows is saved with: an eighth,
    at least 1,024 (the writes of a while after a start land in them)."""
    return max(_INITIAL_ROWS, rows // 8)


def padded(array: npt.NDArray[Any], rows: int, fill: Any = 0) -> npt.NDArray[Any]:
    """The first `rows` entries of `array` with `spare_rows(rows)` of `fill` after them."""
    return _resized(array[:rows], rows + spare_rows(rows), fill)


def _spare_items(used: int, rows: int, least: int) -> int:
    """Spare room in a buffer of `used` items over `rows` rows: `spare_rows(rows)` rows of
    the average size, at least `least`."""
    return max(least, used * spare_rows(rows) // max(rows, 1))


def _grown_capacity(capacity: int, needed: int) -> int:
    """Half as much again (not twice: a column of a million rows would hold a spare
    million), at least `needed`."""
    return max(needed, capacity + capacity // 2, _INITIAL_ROWS)


def _resized(array: npt.NDArray[Any], capacity: int, fill: Any = 0) -> npt.NDArray[Any]:
    grown = np.full(capacity, fill, dtype=array.dtype)
    grown[: min(len(array), capacity)] = array[:capacity]
    return grown


def save_arrays(folder: Path, name: str, **arrays: npt.NDArray[Any]) -> list[Path]:
    """Each of `arrays` to `folder/<name>.<part>.npy`, contiguous; the paths written."""
    paths = []
    for part, array in arrays.items():
        path = folder / f"{name}.{part}.npy"
        np.save(path, np.ascontiguousarray(array))
        paths.append(path)
    return paths


def load_part(folder: Path, name: str, part: str, rows: int = 0) -> npt.NDArray[Any]:
    """The array `save_arrays` wrote as `name.part` (load_array); raises ValueError when it
    holds fewer than `rows` entries."""
    array = load_array(folder / f"{name}.{part}.npy")
    if len(array) < rows:
        raise ValueError(f"{len(array)} entries in {name}.{part} for {rows} rows")
    return array


def load_array(path: Path) -> npt.NDArray[Any]:
    """The array `np.save` wrote at `path`, memory-mapped copy-on-write (writes stay in
    this process); read whole when empty (nothing to map). Raises ValueError or OSError
    when the file is not a readable .npy."""
    try:
        mapped = np.load(path, mmap_mode="c", allow_pickle=False)
    except ValueError:
        array: npt.NDArray[Any] = np.load(path, allow_pickle=False)
        if array.size:
            raise
        return array
    # A plain ndarray over the mapping: np.memmap's Python-level hooks run on every slice
    # and fancy index of it (~2 us each; reading ten rows' summaries took 6x longer).
    array = mapped.view(np.ndarray)
    return array


def _gather(
    offsets: npt.NDArray[np.int64], rows: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """For variable-length items stored back to back (item n at offsets[n]:offsets[n + 1]):
    the positions of `rows`' items, in that order, and the offsets of the packed result."""
    starts = offsets[rows]
    lengths = offsets[rows + 1] - starts
    packed = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=packed[1:])
    positions = np.arange(int(packed[-1]), dtype=np.int64)
    positions += np.repeat(starts - packed[:-1], lengths)
    return positions, packed
