"""Org-level search's one walk: an HNSW graph over the rows of several search indexes.

Org-level search (`tenant: "*"`) over ten 10k tenants walked ten graphs: ~5x the CPU of
one walk over a 100k store (docs/scaling.md, Org-level search). A UnionGraph is one graph
over the rows its members held when it was built, each member's rows numbered after the
previous member's (node = the member's offset + row), so a call walks once, each member's
filter mask its part of the node mask, as the planner filters a single index's walk. It
only proposes rows: each member scores its own exactly (SearchIndex.semantic's
`proposed`), so a distance shown is never the graph's.

A member's rows appended since the build (inserts, and the new row of an update) are not
nodes: `candidates` adds those passing the filter as they are, to be scored exactly (the
"tail"); removed and replaced rows never pass a mask. A compaction renumbers a member's
rows: the graph then no longer `covers` it. Members are held weakly: a union graph never
keeps an evicted index in memory.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from a2a.index.columns import BoolArray
from a2a.index.graph import GraphIndex
from a2a.index.search_index import (
    GRAPH_MIN_FRACTION,
    SearchIndex,
    graph_candidates,
    walk_breadth,
    walk_work,
)


@dataclass(frozen=True, slots=True)
class _Member:
    """One member index: its rows below `rows` are nodes `offset` to `offset + rows`,
    numbered as they were at `compactions`."""

    index: weakref.ref[SearchIndex]
    compactions: int
    rows: int
    offset: int


class UnionGraph:
    """One HNSW graph (a2a.index.graph) over the rows of several search indexes.

    - `build(indexes)`: the graph of every row they hold now (blocking: ~15 s per 100k
      rows of 256-d here; call from a worker thread);
    - `covers(indexes)`: whether it still numbers their rows (the same index objects, no
      compaction since);
    - `tail(indexes)`: rows appended to them since the build;
    - `candidates(vector, masks, k)`: per member, the rows to score for the `k` nearest
      passing rows of all the members together. Call under every member's read lock.
    """

    def __init__(self, graph: GraphIndex, members: Sequence[_Member]) -> None:
        self._graph = graph
        self._members = tuple(members)
        self._offsets = np.asarray([m.offset for m in members], dtype=np.int64)

    @classmethod
    def build(cls, indexes: Sequence[SearchIndex]) -> UnionGraph:
        """The graph of every row `indexes` hold now, built outside their locks (rows below
        an index's length never change until a compaction, which `covers` then sees).
        A member that never held a record (no dimension yet) has no nodes. Raises ValueError
        when the others' vectors' dimensions differ, or none has any."""
        dimensions = {index.dimension for index in indexes} - {None}
        if len(dimensions) != 1:
            raise ValueError(f"members of one union graph need one dimension, got {dimensions}")
        graph = GraphIndex(dimensions.pop() or 0)
        members, offset = [], 0
        for index in indexes:
            with index.reading():
                vectors, rows, compactions = index.vectors, len(index), index.compactions
            graph.add_matrix(vectors, rows, offset)
            members.append(_Member(weakref.ref(index), compactions, rows, offset))
            offset += rows
        return cls(graph, members)

    @property
    def nbytes(self) -> int:
        """Bytes the graph holds (GraphIndex.nbytes)."""
        return self._graph.nbytes

    def work(self, indexes: Sequence[SearchIndex]) -> int:
        """Multiply-adds of a walk with no filter and its candidates' scoring
        (SearchIndex.semantic_work's unit: what decides where a query runs)."""
        alive = sum(index.alive_count for index in indexes)
        return walk_work(walk_breadth(max(len(self._graph), alive), alive), self._graph.dim)

    def covers(self, indexes: Sequence[SearchIndex]) -> bool:
        """Whether this graph numbers the rows of `indexes`, in this order."""
        return len(indexes) == len(self._members) and all(
            m.index() is index and index.compactions == m.compactions
            for m, index in zip(self._members, indexes, strict=True)
        )

    def tail(self, indexes: Sequence[SearchIndex]) -> int:
        """Rows appended to `indexes` (which it `covers`) since the build."""
        return sum(len(index) - m.rows for m, index in zip(self._members, indexes, strict=True))

    def candidates(
        self,
        vector: npt.NDArray[np.float32],
        indexes: Sequence[SearchIndex],
        masks: Sequence[BoolArray],
        k: int,
    ) -> list[npt.NDArray[np.int64]] | None:
        """Per member of `indexes` (which it `covers`; `masks`: the rows passing the call's
        filters in each), the rows to score exactly for the `k` passing rows nearest
        `vector` among them all: the walk's proposals and the member's tail. None where
        the planner scans instead (SearchIndex.plan's rule over the members together: too
        few rows passing; or a walk that found fewer than `k`)."""
        covered = zip(masks, self._members, strict=True)
        node_mask = np.concatenate([mask[: m.rows] for mask, m in covered])
        passing = int(np.count_nonzero(node_mask))
        alive = sum(index.alive_count for index in indexes)
        if passing == 0 or passing < GRAPH_MIN_FRACTION * alive:
            return None
        every = passing == len(node_mask) and self._graph.identity
        nodes = self._graph.search(
            vector,
            None if every else node_mask,
            graph_candidates(k),
            walk_breadth(max(len(self._graph), passing), passing),
        )
        if len(nodes) < min(k, passing):
            return None
        member_of = np.searchsorted(self._offsets, nodes, side="right") - 1
        found = []
        for n, (mask, m) in enumerate(zip(masks, self._members, strict=True)):
            rows = nodes[member_of == n] - m.offset
            tail = np.flatnonzero(mask[m.rows :]).astype(np.int64) + m.rows
            found.append(np.concatenate([rows, tail]) if len(tail) else rows)
        return found
