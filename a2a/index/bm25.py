"""An incremental BM25 inverted index, scored in numpy (Lucene's variant, as bm25s does)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from a2a.index.stored_fields import load_part, padded, save_arrays
from a2a.index.topk import REACH

BoolArray = npt.NDArray[np.bool_]
_Weighted = tuple[npt.NDArray[np.signedinteger[Any]], npt.NDArray[np.float64]]

#: bm25s' defaults (BM25(method="lucene", k1=1.5, b=0.75), bm25s 0.3).
K1 = 1.5
B = 0.75
_INITIAL_CAPACITY = 1024
#: Cost of looking one passing row up in one term's postings (a binary search), in units of
#: adding one posting into the dense array; measured at 100k rows (bench/keyword_scale.py).
_SEARCH_COST = 16
#: What `work` counts, in multiply-adds of the semantic scan (~1 ns each here): adding one
#: posting into the dense array or passing one row costs ~3.4 ns, computing one posting's
#: weight (a term's first query since a write) ~11 ns (measured at 100k rows).
_ENTRY_WORK = 3
_WEIGHT_WORK = 11
_TINY = float(np.finfo(np.float64).tiny)  # below every BM25 score: Lucene's idf is > 0
_NOTHING: _Weighted = (np.zeros(0, np.int64), np.zeros(0, np.float64))


class _Postings:
    """Rows holding one term (int32, ascending) and the term's frequency in each
    (float32), in growable arrays: 8 bytes a posting."""

    __slots__ = ("rows", "size", "tfs")

    def __init__(
        self,
        rows: npt.NDArray[np.int32] | None = None,
        tfs: npt.NDArray[np.float32] | None = None,
    ) -> None:
        self.rows = np.zeros(4, dtype=np.int32) if rows is None else rows
        self.tfs = np.zeros(4, dtype=np.float32) if tfs is None else tfs
        self.size = 0 if rows is None else len(rows)

    def extend(self, rows: npt.NDArray[np.int64], tfs: npt.NDArray[np.float32]) -> None:
        end = self.size + len(rows)
        if end > len(self.rows):
            capacity = max(end, 2 * len(self.rows))
            self.rows = _resized(self.rows, capacity)
            self.tfs = _resized(self.tfs, capacity)
        self.rows[self.size : end] = rows
        self.tfs[self.size : end] = tfs
        self.size = end


class _Snapshot:
    """The statistics of one state of the rows and the term weights computed under them.

    Replaced whole, never updated in place except by adding a term's weights (the same
    values whichever reader computes them), so concurrent readers need no lock: a reader
    holding an older snapshot still sees numbers consistent with each other.
    """

    __slots__ = ("avgdl", "every_alive", "generation", "n_alive", "norm", "weights")

    def __init__(
        self,
        generation: int | None,
        n_alive: int,
        avgdl: float,
        every_alive: bool,
        norm: npt.NDArray[np.float64],
    ) -> None:
        self.generation, self.n_alive, self.avgdl = generation, n_alive, avgdl
        self.every_alive = every_alive  # no tombstone: a term's df is its postings' length
        self.norm = norm  # k1 * (1 - b + b * |d| / avgdl) per row
        # term -> (rows ascending, idf * tf / (tf + norm) per row), None if no live row
        self.weights: dict[str, _Weighted | None] = {}


class BM25Index:
    """BM25 over rows of already-analysed terms; rows are added, never rewritten.

    score(d, q) = sum over query terms t (repeats counted, as bm25s does) of
    idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl)), with Lucene's
    idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)) (Kamphuis et al., ECIR 2020; bm25s'
    `method="lucene"`). N, df and avgdl count only the rows `alive` marks, so a
    tombstoned row leaves the statistics at the next query without rewriting postings;
    rows with no terms still count in N and avgdl, as in bm25s.

    Each term's postings are its rows in ascending order with their term frequencies.
    A query either adds every posting of its terms into a dense per-row array (as bm25s
    does) and then applies the mask, or, when few rows pass the mask, looks those rows up
    in each term's postings by binary search, whichever touches fewer entries.
    """

    def __init__(self, k1: float = K1, b: float = B) -> None:
        self.k1, self.b = k1, b
        self._terms: dict[str, _Postings] = {}
        self._length = np.zeros(_INITIAL_CAPACITY, dtype=np.float32)
        self._size = 0
        self._snapshot: _Snapshot | None = None

    def __len__(self) -> int:
        return self._size

    def __getstate__(self) -> dict[str, object]:
        """What a snapshot keeps (a2a.index.snapshot): the postings and lengths, not the
        statistics computed for the current rows (recomputed at the first query)."""
        state = self.__dict__.copy()
        state["_snapshot"] = None
        return state

    @property
    def nbytes(self) -> int:
        """Bytes held: postings (spare capacity included), lengths, ~200 per term, and the
        statistics and term weights cached for the current rows."""
        postings = sum(p.rows.nbytes + p.tfs.nbytes + 200 + len(t) for t, p in self._terms.items())
        cached = 0
        snapshot = self._snapshot
        if snapshot is not None:
            cached = snapshot.norm.nbytes + sum(
                w[0].nbytes + w[1].nbytes for w in list(snapshot.weights.values()) if w is not None
            )
        return postings + self._length.nbytes + cached

    def save(self, folder: Path) -> tuple[list[Path], list[str]]:
        """Write bm25.rows.npy and bm25.tfs.npy (every term's postings, one term after
        another), bm25.offsets.npy and bm25.lengths.npy into `folder`; returns the files and
        the terms in that order."""
        terms = list(self._terms)
        offsets = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum([self._terms[term].size for term in terms], out=offsets[1:])
        rows = np.zeros(int(offsets[-1]), dtype=np.int32)
        tfs = np.zeros(int(offsets[-1]), dtype=np.float32)
        for term, start in zip(terms, offsets[:-1].tolist(), strict=True):
            postings = self._terms[term]
            rows[start : start + postings.size] = postings.rows[: postings.size]
            tfs[start : start + postings.size] = postings.tfs[: postings.size]
        lengths = padded(self.lengths, self._size)
        paths = save_arrays(folder, "bm25", rows=rows, tfs=tfs, offsets=offsets, lengths=lengths)
        return paths, terms

    @classmethod
    def load(
        cls, folder: Path, terms: Sequence[str], count: int, k1: float = K1, b: float = B
    ) -> BM25Index:
        """The index of `count` rows `save` wrote with its `terms`, arrays mapped
        copy-on-write (each term's postings views; a term written to after the load is
        copied into memory first). Raises ValueError when the files do not fit."""
        loaded = cls(k1, b)
        rows = load_part(folder, "bm25", "rows")
        tfs = load_part(folder, "bm25", "tfs")
        offsets: list[int] = load_part(folder, "bm25", "offsets").tolist()
        if len(offsets) != len(terms) + 1 or len(rows) != len(tfs) or offsets[-1] != len(rows):
            raise ValueError(f"BM25 postings do not fit their {len(terms)} terms")
        loaded._terms = {
            term: _Postings(rows[start:end], tfs[start:end])
            for term, start, end in zip(terms, offsets[:-1], offsets[1:], strict=True)
        }
        loaded._length = load_part(folder, "bm25", "lengths", count)
        loaded._size = count
        return loaded

    @property
    def lengths(self) -> npt.NDArray[np.float32]:
        """Terms per row (document length |d|)."""
        return self._length[: self._size]

    def add(self, documents: Sequence[Sequence[str]]) -> None:
        """Append one row per document (its analysed terms), numbered from len(self)."""
        first, count = self._size, len(documents)
        end = first + count
        if end > len(self._length):
            self._length = _resized(self._length, max(end, 2 * len(self._length), 1024))
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
        found = self._score(terms, mask, alive, generation)
        if isinstance(found, tuple):
            return found
        rows = _passing_matches(found.dense, mask)
        return rows, found.dense[rows]

    def best(
        self,
        terms: Sequence[str],
        mask: BoolArray,
        alive: BoolArray,
        k: int,
        generation: int | None = None,
        passing: npt.NDArray[np.int64] | None = None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """What `scores` returns, cut to what `top_k(..., k)` can pick from it.

        The rows whose score is within a2a.index.topk's rounding reach of the k-th best
        score or above it (at least the k best rows, when that many score > 0), so the
        caller's top_k gives the same answer as over every score, without a pass over
        every matching row. `passing`, when given, is `mask`'s true rows ascending (it
        spares two passes over the mask). Returns (rows, scores > 0), rows ascending;
        empty when k < 1.
        """
        if k < 1:
            return _NOTHING
        found = self._score(terms, mask, alive, generation, passing)
        if isinstance(found, tuple):
            return found
        dense = found.dense
        bound = _kth_lower_bound(dense, found.terms, mask, k)
        if bound is None:  # no term alone has k passing rows: take every passing match
            rows = _passing_matches(dense, mask)
        else:  # one pass over every row, then only the rows at or above the bound
            rows = np.flatnonzero(dense >= max(bound - REACH, _TINY))
            rows = rows[mask[rows]]
        scores = dense[rows]
        if k < len(rows):
            # Negated, so the k best come first (numpy's introselect is fast for a small kth).
            kth = -float(np.partition(-scores, k - 1)[k - 1])
            keep = scores >= max(kth - REACH, _TINY)
            rows, scores = rows[keep], scores[keep]
        return rows, scores

    def work(self, terms: Sequence[str], generation: int) -> int | None:
        """An upper bound on the work of `best(terms, ..., generation)`, in multiply-adds
        of the semantic scan (~1 ns each): its terms' postings and one pass over every
        row, plus the weights of terms not yet queried since the last write. None when the
        statistics of `generation` are not computed yet: that is a pass over every row
        first, and the weights of each term over all its postings."""
        snapshot = self._snapshot
        if snapshot is None or snapshot.generation != generation:
            return None
        work = _ENTRY_WORK * self._size
        for term in set(terms):
            postings = self._terms.get(term)
            if postings is not None:
                weighed = term in snapshot.weights
                work += postings.size * (_ENTRY_WORK if weighed else _ENTRY_WORK + _WEIGHT_WORK)
        return work

    def prepare(self, alive: BoolArray, generation: int) -> None:
        """Compute the statistics of `generation` (N, avgdl, every row's length norm) now,
        so its first query does not: a pass over every row (~1-3 ms at 100k)."""
        self._current(alive, generation)

    def _score(
        self,
        terms: Sequence[str],
        mask: BoolArray,
        alive: BoolArray,
        generation: int | None,
        passing: npt.NDArray[np.int64] | None = None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]] | _Dense:
        """(rows, scores > 0) of the passing rows, or every row's score, masked or not."""
        if not terms:
            return _NOTHING
        snapshot = self._current(alive, generation)
        if snapshot.n_alive == 0 or snapshot.avgdl == 0.0:  # no row has a term: no match
            return _NOTHING
        counts = Counter(terms)
        found: list[_Weighted] = []
        for term in sorted(counts):
            weighted = self._weights(term, alive, snapshot)
            if weighted is not None:
                rows, weights = weighted
                found.append((rows, weights if counts[term] == 1 else counts[term] * weights))
        if not found:
            return _NOTHING
        postings = sum(len(rows) for rows, _ in found)
        count = int(np.count_nonzero(mask)) if passing is None else len(passing)
        if count * len(found) * _SEARCH_COST < postings + self._size:
            return _lookup(found, np.flatnonzero(mask) if passing is None else passing)
        dense = np.zeros(self._size, dtype=np.float64)
        for rows, weights in found:
            # numpy 2's add.at has a fast path for this (2x `dense[rows] += weights` here).
            np.add.at(dense, rows, weights)
        return _Dense(dense, found)

    def _current(self, alive: BoolArray, generation: int | None) -> _Snapshot:
        snapshot = self._snapshot
        if generation is not None and snapshot is not None and snapshot.generation == generation:
            return snapshot
        n_alive = int(np.count_nonzero(alive))
        total = float(np.sum(self.lengths, dtype=np.float64, where=alive))
        avgdl = total / n_alive if n_alive else 0.0
        norm = np.zeros(0)
        if avgdl:  # k1 * (1 - b + b * |d| / avgdl) per row, in that order of operations
            norm = self.lengths.astype(np.float64)
            norm *= self.b
            norm /= avgdl
            norm += 1 - self.b
            norm *= self.k1
        snapshot = _Snapshot(generation, n_alive, avgdl, n_alive == self._size, norm)
        if generation is not None:
            self._snapshot = snapshot  # one assignment: readers see the old or the new whole
        return snapshot

    def _weights(self, term: str, alive: BoolArray, snapshot: _Snapshot) -> _Weighted | None:
        """(rows, idf * tf / (tf + norm)) over the term's postings, None if no live row."""
        if term in snapshot.weights:
            return snapshot.weights[term]
        weighted: _Weighted | None = None
        postings = self._terms.get(term)
        if postings is not None:
            rows = postings.rows[: postings.size]
            df = len(rows) if snapshot.every_alive else int(np.count_nonzero(alive[rows]))
            if df:
                n_alive = snapshot.n_alive
                tfs = postings.tfs[: postings.size]
                idf = math.log(1 + (n_alive - df + 0.5) / (df + 0.5))
                denominator = snapshot.norm[rows]
                denominator += tfs
                weights = np.multiply(tfs, idf, dtype=np.float64)
                weights /= denominator
                weighted = (rows, weights)
        if snapshot.generation is not None:
            snapshot.weights[term] = weighted
        return weighted

    def take(self, rows: npt.NDArray[np.int64]) -> BM25Index:
        """A new index of only `rows`, renumbered 0.. in that order (compaction).

        Raises ValueError unless `rows` ascend (postings must stay in row order).
        """
        if len(rows) > 1 and not bool(np.all(np.diff(rows) > 0)):
            raise ValueError("take() needs strictly ascending rows")
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


@dataclass(frozen=True, slots=True)
class _Dense:
    """Every row's score, rows failing the mask included, and the terms' weighted postings."""

    dense: npt.NDArray[np.float64]
    terms: list[_Weighted]


def _passing_matches(dense: npt.NDArray[np.float64], mask: BoolArray) -> npt.NDArray[np.int64]:
    """Rows ascending that pass `mask` and score > 0 in `dense`."""
    positive = dense > 0
    positive &= mask
    return np.flatnonzero(positive)


def _kth_lower_bound(
    dense: npt.NDArray[np.float64], terms: list[_Weighted], mask: BoolArray, k: int
) -> float | None:
    """A score at or below the k-th best passing score, or None when none is cheap to find.

    The k-th best score among the passing rows of the rarest term with k of them: a
    subset's k-th best never beats the whole's. Rows at or above it are few, so the cut
    reads them alone, not a partition of every row (Lucene's top-k collectors skip hits
    below the k-th best so far for the same reason).
    """
    for rows, _ in sorted(terms, key=lambda term: len(term[0])):
        passing = rows[mask[rows]]
        if len(passing) >= k:
            scores = dense[passing]
            return -float(np.partition(-scores, k - 1)[k - 1])
    return None


def _lookup(
    found: list[_Weighted], passing: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Scores of the `passing` rows (ascending), each looked up in every term's postings."""
    sums = np.zeros(len(passing), dtype=np.float64)
    # The postings' dtype (int32): searchsorted would otherwise copy them to int64.
    wanted = passing.astype(np.int32)
    for rows, weights in found:
        at = np.searchsorted(rows, wanted)
        np.minimum(at, len(rows) - 1, out=at)
        hit = rows[at] == wanted
        sums[hit] += weights[at[hit]]
    keep = sums > 0
    return passing[keep], sums[keep]


def _resized(array: npt.NDArray[Any], capacity: int) -> npt.NDArray[Any]:
    """A copy of `array` in `capacity` entries (zeros past it): never in place, so a
    memory-mapped array of a snapshot is copied, and readers holding the old one keep it."""
    grown = np.zeros(capacity, dtype=array.dtype)
    grown[: len(array)] = array
    return grown
