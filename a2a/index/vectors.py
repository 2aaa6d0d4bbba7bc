"""The vector matrix of the search index and exact top-k by inner product under a mask."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from a2a.index.stored_fields import load_array

BoolArray = npt.NDArray[np.bool_]
VectorDtype = Literal["float32", "float16"]

#: Below this fraction of rows passing the mask, only those rows are gathered and scored;
#: above it one matmul scores every row and the mask is applied after. Measured with
#: bench/scale_bench.py --planner (100k x 256 float32 on the 2-core CI machine).
GATHER_BELOW = 0.15
#: Rows gathered and scored per block when only the passing rows are read: 1,024 rows of
#: 256-d (1 MiB) stay in cache between the gather and the product. Measured at 1M rows
#: (one thread): 9% passing 26.7 ms against 46.2 ms for one gather of them all, then one
#: product; 0.9% 3.6 against 4.4 ms (4,096 rows: 28.7 and 3.9 ms; 16,384: 36.2 and 4.2).
GATHER_BLOCK = 1024
#: Rows scored per block when the stored dtype must be widened to float32 first (numpy has
#: no float16 BLAS), so the widened copy stays small.
BLOCK_ROWS = 16384
_INITIAL_CAPACITY = 1024


class VectorMatrix:
    """One L2-normalised vector per row, stored as `dtype`, searched exactly.

    Vector rows belong to index rows through `owner` (today the identity: one vector per
    record; passage embeddings could later add several rows per record, and `search`
    keeps each owner's best row). float16 halves memory; its scores are within ~1e-3 of
    float32, so callers that need exact distances re-score the candidates (see
    SearchIndex.semantic).
    """

    def __init__(self, dim: int | None = None, dtype: VectorDtype = "float32") -> None:
        self.dtype = np.dtype(dtype)
        self.dim = dim
        self._size = 0
        self._matrix: npt.NDArray[np.floating] | None = None
        self._owner = np.zeros(_INITIAL_CAPACITY, dtype=np.int64)
        # True while vector row i belongs to index row i (one vector per record, in
        # order): the common case, where masks need no translation through `owner`.
        self._identity = True

    def __len__(self) -> int:
        return self._size

    @property
    def matrix(self) -> npt.NDArray[np.floating]:
        """The stored vectors, shape (len(self), dim), in `dtype` (a view: do not write)."""
        if self._matrix is None:
            return np.zeros((0, self.dim or 0), dtype=self.dtype)
        return self._matrix[: self._size]

    @property
    def owner(self) -> npt.NDArray[np.int64]:
        """The index row each vector row belongs to."""
        return self._owner[: self._size]

    def append(self, vectors: npt.ArrayLike, owners: npt.NDArray[np.int64]) -> None:
        """Append `vectors` (n x dim, any float dtype), vector i owned by `owners[i]`.

        Raises ValueError when the dimension differs from the vectors already held.
        """
        block = np.asarray(vectors, dtype=np.float32)
        if block.ndim != 2:
            raise ValueError(f"vectors must be 2-dimensional, got shape {block.shape}")
        if self.dim is None:
            self.dim = block.shape[1]
        if block.shape[1] != self.dim:
            raise ValueError(f"vectors have dimension {block.shape[1]}, the index {self.dim}")
        self._reserve(self._size + len(block))
        assert self._matrix is not None
        self._matrix[self._size : self._size + len(block)] = block
        self._owner[self._size : self._size + len(block)] = owners
        expected = np.arange(self._size, self._size + len(block))
        self._identity = self._identity and bool(np.array_equal(owners, expected))
        self._size += len(block)

    def take(self, rows: npt.NDArray[np.int64], new_owner: npt.NDArray[np.int64]) -> VectorMatrix:
        """A new matrix of only the vector rows `rows`, owned by `new_owner` (compaction)."""
        taken = VectorMatrix(self.dim, self.dtype.name)  # type: ignore[arg-type]
        if len(rows):
            taken.append(self.matrix[rows], new_owner)
        return taken

    @property
    def nbytes(self) -> int:
        """Bytes of the matrix and the owner column, spare capacity included (mapped from
        a snapshot or not)."""
        matrix = 0 if self._matrix is None else self._matrix.nbytes
        return matrix + self._owner.nbytes

    def save(self, path: Path) -> dict[str, Any]:
        """Write the matrix with its spare capacity to `path` (.npy) and the owner column
        beside it (`<stem>.owner.npy`); returns the rest of its state (JSON, for `load`).
        The spare rows let a copy-on-write mapping take appends."""
        np.save(path, self._matrix if self._matrix is not None else np.zeros((0, 0), self.dtype))
        np.save(path.with_suffix(".owner.npy"), self._owner)
        return {
            "dim": self.dim,
            "dtype": self.dtype.name,
            "size": self._size,
            "identity": self._identity,
        }

    @classmethod
    def load(cls, path: Path, state: dict[str, Any]) -> VectorMatrix:
        """The matrix `save` wrote, mapped copy-on-write (pages read on first touch; writes
        stay in this process), and its owner column, mapped the same way."""
        loaded = cls(state["dim"], state["dtype"])
        if state["size"]:
            loaded._matrix = np.load(path, mmap_mode="c")
        loaded._size, loaded._owner = state["size"], load_array(path.with_suffix(".owner.npy"))
        loaded._identity = state["identity"]
        if loaded._matrix is not None and len(loaded._matrix) != len(loaded._owner):
            raise ValueError("the vector matrix and its owner column differ in capacity")
        return loaded

    @staticmethod
    def files(path: Path) -> list[Path]:
        """The files `save(path)` writes."""
        return [path, path.with_suffix(".owner.npy")]

    def scores(
        self,
        query: npt.NDArray[np.float32],
        mask: BoolArray,
        owners_passing: npt.NDArray[np.int64] | None = None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Inner products of `query` with every vector whose owner passes `mask`.

        Returns (owner rows, scores), one entry per passing owner (its best vector), in
        no particular order. The planner gathers the passing rows when few pass
        (fraction < GATHER_BELOW) and otherwise scores all rows with one matmul.
        `owners_passing` (`mask`'s true rows ascending), when given, spares two passes
        over the mask while each owner has its own row (no update since compaction).
        """
        if self._size == 0 or self._matrix is None:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        q = np.asarray(query, dtype=np.float32)
        if (
            owners_passing is not None
            and self._identity
            and len(mask) == self._size
            and len(owners_passing) < GATHER_BELOW * self._size
        ):
            return owners_passing, self._gathered_dot(owners_passing, q)
        passing = mask[: self._size] if self._identity else mask[self.owner]
        count = int(np.count_nonzero(passing))
        if count == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        if count < GATHER_BELOW * self._size:
            rows = np.flatnonzero(passing)
            scores = self._gathered_dot(rows, q)
        else:
            scores = self._dot(self.matrix, q)
            rows = np.flatnonzero(passing)
            scores = scores[rows]
        if self._identity:
            return rows.astype(np.int64), scores
        owners = self.owner[rows]
        if not self._one_per_owner(owners):
            return _best_per_owner(owners, scores)
        return owners, scores

    def work(self, passing: int) -> int:
        """Multiply-adds `scores` spends when `passing` rows pass: those rows gathered, or
        every row in one matmul (GATHER_BELOW), times the dimension."""
        rows = passing if passing < GATHER_BELOW * self._size else self._size
        return rows * (self.dim or 0)

    def vectors(self, owner_rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The float32 vector of each owner row (its first vector row)."""
        if self._identity:
            return np.asarray(self.matrix[owner_rows], dtype=np.float32)
        where = np.searchsorted(self.owner, owner_rows) if self._sorted_owner() else None
        if where is None:
            lookup = {int(o): i for i, o in enumerate(self.owner)}
            where = np.asarray([lookup[int(r)] for r in owner_rows], dtype=np.int64)
        return np.asarray(self.matrix[where], dtype=np.float32)

    def _gathered_dot(
        self, rows: npt.NDArray[np.int64], q: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32]:
        """Inner products of `q` with the vector rows `rows`, gathered GATHER_BLOCK rows at a
        time: each block is scored while it is still in the CPU's cache, and no copy of every
        passing row is made (90 MB for 9% of 1M rows, written to memory and read back)."""
        assert self._matrix is not None
        matrix = self._matrix
        return _blocked_dot(len(rows), lambda a, b: matrix[rows[a:b]], GATHER_BLOCK, q)

    def _dot(
        self, matrix: npt.NDArray[np.floating], q: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32]:
        if matrix.dtype == np.float32:
            return np.asarray(matrix @ q, dtype=np.float32)
        return _blocked_dot(len(matrix), lambda a, b: matrix[a:b], BLOCK_ROWS, q)

    def _one_per_owner(self, owners: npt.NDArray[np.int64]) -> bool:
        # Owners are appended in increasing row order, one vector each, so strictly
        # increasing owners mean no duplicates.
        return len(owners) < 2 or bool(np.all(owners[1:] > owners[:-1]))

    def _sorted_owner(self) -> bool:
        return self._one_per_owner(self.owner)

    def _reserve(self, size: int) -> None:
        capacity = len(self._owner)
        if self._matrix is not None and size <= capacity:
            return
        while capacity < size:
            capacity *= 2
        matrix = np.zeros((capacity, self.dim or 0), dtype=self.dtype)
        owner = np.zeros(capacity, dtype=np.int64)
        if self._matrix is not None:
            matrix[: self._size] = self._matrix[: self._size]
        owner[: self._size] = self._owner[: self._size]
        self._matrix, self._owner = matrix, owner


def _blocked_dot(
    count: int,
    block: Callable[[int, int], npt.NDArray[np.floating]],
    step: int,
    q: npt.NDArray[np.float32],
) -> npt.NDArray[np.float32]:
    """Inner products of `q` with `count` vectors, read `step` at a time as `block(start,
    stop)` (any float dtype: widened to float32 per block, as numpy has no float16 BLAS)."""
    out = np.empty(count, dtype=np.float32)
    for start in range(0, count, step):
        vectors = block(start, start + step)
        if vectors.dtype != np.float32:
            vectors = vectors.astype(np.float32)
        np.dot(vectors, q, out=out[start : start + len(vectors)])
    return out


def _best_per_owner(
    owners: npt.NDArray[np.int64], scores: npt.NDArray[np.float32]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    order = np.lexsort((-scores, owners))
    owners, scores = owners[order], scores[order]
    first = np.ones(len(owners), dtype=bool)
    first[1:] = owners[1:] != owners[:-1]
    return owners[first], scores[first]
