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
        # Cached under the caller's generation: (generation, N, avgdl) and term -> weights.
        self._stats: tuple[int, int, float] | None = None
        self._cache: dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = {}

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
        self,
        terms: Sequence[str],
        mask: BoolArray,
        alive: BoolArray,
        generation: int | None = None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """BM25 of every row passing `mask` that holds at least one of `terms`.

        `alive` (len(self)) marks the current rows, for N, df and avgdl; `mask` must
        imply `alive`. `generation`, when given, names the state of `alive` and of the
        rows: the statistics and each term's per-posting weights are cached under it, so
        repeated queries on an unchanged index only gather and sum (the caller changes it
        on every write). Returns (rows, scores > 0), rows ascending.
        """
        if not terms:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        n_alive, avgdl = self._statistics(alive, generation)
        if n_alive == 0 or avgdl == 0.0:  # empty, or no row has a term: nothing matches
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        found_rows: list[npt.NDArray[np.int64]] = []
        found_scores: list[npt.NDArray[np.float64]] = []
        for term in sorted(set(terms)):
            weighted = self._weights(term, alive, n_alive, avgdl, generation)
            if weighted is None:
                continue
            rows, weights = weighted
            keep = mask[rows]
            found_rows.append(rows[keep])
            found_scores.append(terms.count(term) * weights[keep])
        return _sum_by_row(found_rows, found_scores, self._size)

    def _statistics(self, alive: BoolArray, generation: int | None) -> tuple[int, float]:
        cached = self._stats
        if generation is not None and cached is not None and cached[0] == generation:
            return cached[1], cached[2]
        n_alive = int(np.count_nonzero(alive))
        total = float(self.lengths[alive].sum(dtype=np.float64))
        avgdl = total / n_alive if n_alive else 0.0
        if generation is not None:
            self._stats = (generation, n_alive, avgdl)
            self._cache = {}
        return n_alive, avgdl

    def _weights(
        self, term: str, alive: BoolArray, n_alive: int, avgdl: float, generation: int | None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]] | None:
        """(rows, idf * tf / (tf + k1 * norm)) over the term's postings, None if no live row."""
        if generation is not None and (hit := self._cache.get(term)) is not None:
            return hit
        postings = self._terms.get(term)
        if postings is None:
            return None
        rows = postings.rows[: postings.size]
        df = int(np.count_nonzero(alive[rows]))
        if df == 0:
            return None
        tfs = postings.tfs[: postings.size].astype(np.float64)
        idf = math.log(1 + (n_alive - df + 0.5) / (df + 0.5))
        norm = self.k1 * (1 - self.b + self.b * self.lengths[rows].astype(np.float64) / avgdl)
        weighted = (rows, idf * tfs / (tfs + norm))
        if generation is not None:
            self._cache[term] = weighted
        return weighted

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
