"""An incremental BM25 inverted index, scored in numpy (Lucene's variant, as bm25s does)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

BoolArray = npt.NDArray[np.bool_]

#: bm25s' defaults (BM25(method="lucene", k1=1.5, b=0.75), bm25s 0.3).
K1 = 1.5
B = 0.75
_INITIAL_CAPACITY = 1024


class _Postings:
    """Rows holding one term and the term's frequency in each, in growable arrays."""

    __slots__ = ("rows", "size", "tfs")

    def __init__(self) -> None:
        self.rows = np.zeros(4, dtype=np.int64)
        self.tfs = np.zeros(4, dtype=np.float32)
        self.size = 0

    def extend(self, rows: npt.NDArray[np.int64], tfs: npt.NDArray[np.float32]) -> None:
        end = self.size + len(rows)
        if end > len(self.rows):
            capacity = max(end, 2 * len(self.rows))
            self.rows = np.resize(self.rows, capacity)
            self.tfs = np.resize(self.tfs, capacity)
        self.rows[self.size : end] = rows
        self.tfs[self.size : end] = tfs
        self.size = end


class BM25Index:
    """BM25 over rows of already-analysed terms; rows are added, never rewritten.

    score(d, q) = sum over query terms t (repeats counted, as bm25s does) of
    idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl)), with Lucene's
    idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)) (Kamphuis et al., ECIR 2020; bm25s'
    `method="lucene"`). N, df and avgdl count only the rows `alive` marks, so a
    tombstoned row leaves the statistics at the next query without rewriting postings;
    rows with no terms still count in N and avgdl, as in bm25s.
    """

    def __init__(self, k1: float = K1, b: float = B) -> None:
        self.k1, self.b = k1, b
        self._terms: dict[str, _Postings] = {}
        self._length = np.zeros(_INITIAL_CAPACITY, dtype=np.float32)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    @property
    def lengths(self) -> npt.NDArray[np.float32]:
        """Terms per row (document length |d|)."""
        return self._length[: self._size]

    def add(self, documents: Sequence[Sequence[str]]) -> None:
        """Append one row per document (its analysed terms), numbered from len(self)."""
        first, count = self._size, len(documents)
        end = first + count
        if end > len(self._length):
            self._length = np.resize(self._length, max(end, 2 * len(self._length)))
        self._length[first:end] = [len(terms) for terms in documents]
        self._size = end
        by_term: dict[str, list[int]] = {}
        for offset, terms in enumerate(documents):
            row = first + offset
            for term in terms:
                by_term.setdefault(term, []).append(row)
        for term, rows in by_term.items():
            # Rows arrive in order, so equal rows are adjacent: run lengths are the tfs.
            values, counts = np.unique(np.asarray(rows, dtype=np.int64), return_counts=True)
            postings = self._terms.get(term)
            if postings is None:
                postings = self._terms[term] = _Postings()
            postings.extend(values, counts.astype(np.float32))

    def scores(
        self, terms: Sequence[str], mask: BoolArray, alive: BoolArray
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """BM25 of every row passing `mask` that holds at least one of `terms`.

        `alive` (len(self)) marks the current rows, for N, df and avgdl; `mask` must
        imply `alive`. Returns (rows, scores > 0), rows ascending.
        """
        n_alive = int(np.count_nonzero(alive))
        if n_alive == 0 or not terms:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        lengths = self.lengths
        avgdl = float(lengths[alive].sum(dtype=np.float64)) / n_alive
        if avgdl == 0.0:  # no row has a term: nothing can match
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        found_rows: list[npt.NDArray[np.int64]] = []
        found_scores: list[npt.NDArray[np.float64]] = []
        for term in sorted(set(terms)):
            postings = self._terms.get(term)
            if postings is None:
                continue
            rows = postings.rows[: postings.size]
            df = int(np.count_nonzero(alive[rows]))
            if df == 0:
                continue
            keep = mask[rows]
            rows, tfs = rows[keep], postings.tfs[: postings.size][keep].astype(np.float64)
            idf = math.log(1 + (n_alive - df + 0.5) / (df + 0.5))
            norm = self.k1 * (1 - self.b + self.b * lengths[rows].astype(np.float64) / avgdl)
            found_rows.append(rows)
            found_scores.append(terms.count(term) * idf * tfs / (tfs + norm))
        return _sum_by_row(found_rows, found_scores, self._size)

    def take(self, rows: npt.NDArray[np.int64]) -> BM25Index:
        """A new index of only `rows`, renumbered 0.. in that order (compaction)."""
        renumber = np.full(self._size, -1, dtype=np.int64)
        renumber[rows] = np.arange(len(rows))
        taken = BM25Index(self.k1, self.b)
        taken._length = self.lengths[rows].copy()
        taken._size = len(rows)
        for term, postings in self._terms.items():
            new_rows = renumber[postings.rows[: postings.size]]
            keep = new_rows >= 0
            if keep.any():
                moved = _Postings()
                moved.extend(new_rows[keep], postings.tfs[: postings.size][keep])
                taken._terms[term] = moved
        return taken


def _sum_by_row(
    rows: list[npt.NDArray[np.int64]], scores: list[npt.NDArray[np.float64]], size: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Per-row sums of the per-term contributions; rows ascending."""
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    if len(rows) == 1:
        return rows[0], scores[0]
    postings = sum(len(r) for r in rows)
    if postings * 16 > size:
        # Many postings: a dense accumulator (each term's rows are distinct, so += is exact).
        dense = np.zeros(size, dtype=np.float64)
        touched = np.zeros(size, dtype=bool)
        for r, s in zip(rows, scores, strict=True):
            dense[r] += s
            touched[r] = True
        found = np.flatnonzero(touched)
        return found, dense[found]
    every = np.concatenate(rows)
    unique, inverse = np.unique(every, return_inverse=True)
    sums = np.bincount(inverse, weights=np.concatenate(scores), minlength=len(unique))
    return unique.astype(np.int64), sums.astype(np.float64)
