"""Tag postings of the search index, for findSimilarDecisions' tag Jaccard."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from a2a.index.stored_fields import load_part, padded, save_arrays

BoolArray = npt.NDArray[np.bool_]
_INITIAL_CAPACITY = 1024


class _Rows:
    """The rows holding one tag, ascending, in a growable int32 array."""

    __slots__ = ("rows", "size")

    def __init__(self, rows: npt.NDArray[np.int32] | None = None) -> None:
        self.rows = np.zeros(4, dtype=np.int32) if rows is None else rows
        self.size = 0 if rows is None else len(rows)

    def extend(self, rows: Sequence[int]) -> None:
        end = self.size + len(rows)
        if end > len(self.rows):
            grown = np.zeros(max(end, 2 * len(self.rows)), dtype=np.int32)
            grown[: self.size] = self.rows[: self.size]
            self.rows = grown
        self.rows[self.size : end] = rows
        self.size = end


class TagIndex:
    """Normalised tag -> rows holding it (int32 arrays), and each row's number of
    distinct tags (int32). A few bytes per posting: no Python object per row."""

    def __init__(self) -> None:
        self._rows: dict[str, _Rows] = {}
        self._counts = np.zeros(_INITIAL_CAPACITY, dtype=np.int32)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    @property
    def nbytes(self) -> int:
        """Bytes held: the postings (spare capacity included), the counts, ~150 per tag."""
        postings = sum(rows.rows.nbytes + 150 + len(tag) for tag, rows in self._rows.items())
        return postings + self._counts.nbytes

    def add(self, tag_sets: Sequence[frozenset[str]]) -> None:
        """Append one row per tag set (already normalised), numbered from len(self)."""
        first, end = self._size, self._size + len(tag_sets)
        if end > len(self._counts):
            grown = np.zeros(max(end, 2 * len(self._counts)), dtype=np.int32)
            grown[: self._size] = self._counts[: self._size]
            self._counts = grown
        by_tag: dict[str, list[int]] = {}
        for offset, tags in enumerate(tag_sets):
            for tag in tags:
                by_tag.setdefault(tag, []).append(first + offset)
        for tag, rows in by_tag.items():
            postings = self._rows.get(tag)
            if postings is None:
                postings = self._rows[tag] = _Rows()
            postings.extend(rows)
        self._counts[first:end] = [len(tags) for tags in tag_sets]
        self._size = end

    def jaccard(
        self, probe: frozenset[str], mask: BoolArray
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """|probe & tags| / |probe | tags| for each row passing `mask` sharing a tag.

        Returns (rows ascending, Jaccard in (0, 1]).
        """
        hits = [
            self._rows[t].rows[: self._rows[t].size].astype(np.int64)
            for t in probe
            if t in self._rows
        ]
        if not hits:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        every = np.concatenate(hits)
        every = every[every < len(mask)]
        every = every[mask[every]]
        rows, shared = np.unique(every, return_counts=True)
        counts = self._counts[rows].astype(np.int64)
        return rows, shared / (len(probe) + counts - shared)

    @staticmethod
    def of(tag_sets: Iterable[frozenset[str]]) -> TagIndex:
        """A new index of `tag_sets`, rows numbered 0.. in order (for compaction)."""
        taken = TagIndex()
        taken.add(list(tag_sets))
        return taken

    # -- snapshots (a2a.index.snapshot) ----------------------------------------------------

    def save(self, folder: Path) -> tuple[list[Path], list[str]]:
        """Write tags.rows.npy (every tag's rows, one after another), tags.offsets.npy and
        tags.counts.npy into `folder`; returns the files and the tags in that order."""
        tags = list(self._rows)
        lengths = [self._rows[tag].size for tag in tags]
        offsets = np.zeros(len(tags) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        rows = np.zeros(int(offsets[-1]), dtype=np.int32)
        for tag, start in zip(tags, offsets[:-1].tolist(), strict=True):
            postings = self._rows[tag]
            rows[start : start + postings.size] = postings.rows[: postings.size]
        counts = padded(self._counts, self._size)
        return save_arrays(folder, "tags", rows=rows, offsets=offsets, counts=counts), tags

    @classmethod
    def load(cls, folder: Path, tags: Sequence[str], count: int) -> TagIndex:
        """The index of `count` rows `save` wrote with its `tags`, arrays mapped
        copy-on-write (each tag's rows a view; a tag written to after the load is copied
        into memory first). Raises ValueError when the files do not fit."""
        loaded = cls()
        rows = load_part(folder, "tags", "rows")
        offsets: list[int] = load_part(folder, "tags", "offsets").tolist()
        if len(offsets) != len(tags) + 1:
            raise ValueError(f"{len(offsets)} tag offsets for {len(tags)} tags")
        loaded._rows = {
            tag: _Rows(rows[start:end])
            for tag, start, end in zip(tags, offsets[:-1], offsets[1:], strict=True)
        }
        loaded._counts = load_part(folder, "tags", "counts", count)
        loaded._size = count
        return loaded
