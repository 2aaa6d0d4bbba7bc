"""Tag postings of the search index, for findSimilarDecisions' tag Jaccard."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

BoolArray = npt.NDArray[np.bool_]


class TagIndex:
    """Normalised tag -> rows holding it, and each row's number of distinct tags."""

    def __init__(self) -> None:
        self._rows: dict[str, list[int]] = {}
        self._counts = np.zeros(1024, dtype=np.int64)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def add(self, tag_sets: Sequence[frozenset[str]]) -> None:
        """Append one row per tag set (already normalised), numbered from len(self)."""
        first, end = self._size, self._size + len(tag_sets)
        if end > len(self._counts):
            self._counts = np.resize(self._counts, max(end, 2 * len(self._counts)))
        for offset, tags in enumerate(tag_sets):
            for tag in tags:
                self._rows.setdefault(tag, []).append(first + offset)
        self._counts[first:end] = [len(tags) for tags in tag_sets]
        self._size = end

    def jaccard(
        self, probe: frozenset[str], mask: BoolArray
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """|probe & tags| / |probe | tags| for each row passing `mask` sharing a tag.

        Returns (rows ascending, Jaccard in (0, 1]).
        """
        hits = [np.asarray(self._rows[t], dtype=np.int64) for t in probe if t in self._rows]
        if not hits:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        every = np.concatenate(hits)
        every = every[every < len(mask)]
        every = every[mask[every]]
        rows, shared = np.unique(every, return_counts=True)
        counts = self._counts[rows]
        return rows, shared / (len(probe) + counts - shared)

    @staticmethod
    def of(tag_sets: Iterable[frozenset[str]]) -> TagIndex:
        """A new index of `tag_sets`, rows numbered 0.. in order (for compaction)."""
        taken = TagIndex()
        taken.add(list(tag_sets))
        return taken
