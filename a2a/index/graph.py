"""The approximate side of the search index: a faiss HNSW graph over the index's vectors.

The graph only proposes candidates; the search index scores them again exactly
(SearchIndex.semantic), so a distance shown is never the graph's. Filters apply during the
graph's walk (a faiss IDSelectorBitmap over the passing rows), as Qdrant's filterable HNSW
does; deleted and replaced rows are simply never passing, so a write never rebuilds it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import faiss as _faiss
import numpy as np
import numpy.typing as npt

from a2a.index.vectors import VectorMatrix

BoolArray = npt.NDArray[np.bool_]
#: faiss's SWIG classes, untyped (its stubs miss SearchParametersHNSW and the SQ enums).
faiss: Any = _faiss

#: Neighbours per node (HNSW's M) and the breadth of the search while building it
#: (efConstruction). M=32 keeps recall@10 >= 0.99 at ef 64 on 256-d MiniLM-like vectors
#: (bench/graph_bench.py); the graph costs 2 * M * 4 bytes a row at its base layer.
NEIGHBOURS = 32
BUILD_BREADTH = 128


def limit_graph_threads() -> None:
    """faiss on one OpenMP thread in this process (process-wide: call from an entry point).
    A lone query's walk is sequential; with 2 threads on 2 shared cores it ran 4x slower."""
    faiss.omp_set_num_threads(1)


class GraphIndex:
    """A faiss HNSW graph (inner product) whose nodes are index rows.

    Graph nodes are numbered in the order they were added (faiss labels 0, 1, ...); each
    node belongs to one index row through `node_row` (-1 once its row is gone in a
    compaction). While no compaction happened a node's number is its row (`identity`),
    and a mask over rows is the filter over nodes as it is.

    Entry points (called by SearchIndex under its write lock):
    - `add(vectors, rows)`: new nodes for rows just appended (an insert, or the new row of
      an update: the old row stops passing every mask, as its tombstone does for a delete);
    - `renumber(renumber)`: rows moved by a compaction (old row -> new row or -1);
    - `search(query, mask, k, breadth)`: candidate rows passing `mask`, best first.
    Vectors are held as float16 (a scalar quantizer): the graph only ranks candidates.
    """

    def __init__(
        self, dim: int, neighbours: int = NEIGHBOURS, build_breadth: int = BUILD_BREADTH
    ) -> None:
        self.dim = dim
        self._index: Any = faiss.IndexHNSWSQ(
            dim, faiss.ScalarQuantizer.QT_fp16, neighbours, faiss.METRIC_INNER_PRODUCT
        )
        self._index.hnsw.efConstruction = build_breadth
        self._node_row = np.zeros(0, dtype=np.int64)
        self._size = 0
        self.identity = True

    @classmethod
    def build(cls, vectors: VectorMatrix, rows: int | None = None) -> GraphIndex:
        """A graph of the first `rows` vector rows of `vectors` (default all), each node
        owned by its row's owner."""
        graph = cls(vectors.dim or 0)
        graph.add_matrix(vectors, len(vectors) if rows is None else rows)
        return graph

    def add_matrix(self, vectors: VectorMatrix, count: int, offset: int = 0) -> None:
        """One node per vector row of the first `count` of `vectors`, each owned by its
        row's owner + `offset` (a2a.index.union_graph numbers several indexes' rows in
        one graph)."""
        for start in range(0, count, 16384):
            self.add_rows(vectors, start, min(start + 16384, count), offset)

    def add_rows(self, vectors: VectorMatrix, start: int, end: int, offset: int = 0) -> None:
        """One node per vector row `start` to `end` (excluded) of `vectors`, each owned by
        its row's owner + `offset`: a build in steps (SearchIndex.build_graph), which a
        stop may end between two of them."""
        part = np.arange(start, end, dtype=np.int64)
        self.add(np.asarray(vectors.matrix[part], np.float32), vectors.owner[part] + offset)

    def __len__(self) -> int:
        """Nodes, those of removed rows included."""
        return self._size

    @property
    def nbytes(self) -> int:
        """Bytes the graph holds: its float16 codes, its links (int32 per neighbour slot),
        each node's level and offset, and the node -> row column."""
        hnsw = self._index.hnsw
        codes = int(self._index.ntotal) * int(faiss.downcast_index(self._index.storage).code_size)
        links = 4 * int(hnsw.neighbors.size()) + 4 * int(hnsw.levels.size())
        offsets = 8 * int(hnsw.offsets.size())
        return codes + links + offsets + int(self._node_row.nbytes)

    @property
    def node_row(self) -> npt.NDArray[np.int64]:
        """The index row of each node, -1 when its row was compacted away."""
        return self._node_row[: self._size]

    def add(self, vectors: npt.NDArray[np.float32], rows: npt.NDArray[np.int64]) -> None:
        """One node per vector (n x dim, L2-normalised float32) for index rows `rows`."""
        if len(vectors) == 0:
            return
        block = np.ascontiguousarray(vectors, dtype=np.float32)
        if not self._index.is_trained:
            self._index.train(block)  # fp16 needs no statistics; faiss still asks
        self._index.add(block)
        end = self._size + len(rows)
        if end > len(self._node_row):
            self._node_row = np.resize(self._node_row, max(end, 2 * len(self._node_row), 1024))
        self._node_row[self._size : end] = rows
        self.identity = self.identity and bool(
            np.array_equal(rows, np.arange(self._size, end, dtype=np.int64))
        )
        self._size = end

    def renumber(self, renumber: npt.NDArray[np.int64]) -> None:
        """Rows moved: node of old row r now belongs to `renumber[r]` (-1: gone)."""
        nodes = self.node_row
        alive = nodes >= 0
        nodes[alive] = renumber[nodes[alive]]
        self.identity = self.identity and bool(
            np.array_equal(nodes, np.arange(self._size, dtype=np.int64))
        )

    def search(
        self,
        query: npt.NDArray[np.float32],
        mask: BoolArray | None,
        k: int,
        breadth: int,
    ) -> npt.NDArray[np.int64]:
        """Up to `k` rows passing `mask` (None: every node's row) near `query`, best
        first by the graph's (float16) inner product. `breadth` is HNSW's efSearch."""
        if self._size == 0:
            return np.zeros(0, dtype=np.int64)
        keep: Any = None
        params = faiss.SearchParametersHNSW()
        params.efSearch = max(breadth, k)
        if mask is not None:
            bitmap = np.packbits(self._node_mask(mask), bitorder="little")
            keep = faiss.IDSelectorBitmap(self._size, faiss.swig_ptr(bitmap))
            params.sel = keep
        else:
            # HNSW's classic walk (one candidate heap, as hnswlib searches): the same recall
            # per efSearch, 14-23% faster at 1M (docs/scaling-measurements-graph.md). faiss
            # takes that path only without an ID selector, so a filtered walk keeps the
            # bounded queue.
            params.bounded_queue = False
        _, labels = self._index.search(query.reshape(1, -1).astype(np.float32), k, params=params)
        found = labels[0][labels[0] >= 0]
        rows: npt.NDArray[np.int64] = self.node_row[found]
        return rows[rows >= 0]

    def _node_mask(self, mask: BoolArray) -> BoolArray:
        """`mask` over rows as a mask over nodes."""
        if self.identity and len(mask) >= self._size:
            return mask[: self._size]
        nodes = self.node_row
        out = np.zeros(self._size, dtype=bool)
        present = nodes >= 0
        out[present] = mask[nodes[present]]
        return out

    # -- persistence (a2a.index.snapshot) ------------------------------------------------------

    def save(self, folder: Path, name: str = "graph") -> list[Path]:
        """Write the graph into `folder` (`<name>.faiss`, `<name>_rows.npy`); returns the
        files."""
        graph, rows = folder / f"{name}.faiss", folder / f"{name}_rows.npy"
        faiss.write_index(self._index, str(graph))
        np.save(rows, self.node_row)
        return [graph, rows]

    @classmethod
    def load(cls, folder: Path, name: str = "graph") -> GraphIndex:
        """The graph `save` wrote into `folder` under `name` (read whole: faiss keeps it
        in memory)."""
        loaded = cls.__new__(cls)
        loaded._index = faiss.read_index(str(folder / f"{name}.faiss"))
        loaded.dim = loaded._index.d
        loaded._node_row = np.load(folder / f"{name}_rows.npy")
        loaded._size = len(loaded._node_row)
        loaded.identity = bool(
            np.array_equal(loaded._node_row, np.arange(loaded._size, dtype=np.int64))
        )
        return loaded
