"""One graph over several indexes (a2a.index.union_graph): what org-level search walks once
instead of a walk per tenant. Every answer is checked against exact search of each index."""

from __future__ import annotations

import gc
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from a2a.index import IndexedRecord, SearchIndex
from a2a.index.search_index import MIN_COMPACT
from a2a.index.union_graph import UnionGraph
from a2a.records import DecisionRecord
from a2a.records.filters import QueryFilters
from tests.index.helpers import clustered, graph_records

SIZES = (1500, 800, 1200)


def _members() -> list[SearchIndex]:
    """Three indexes of SIZES records, ids r00000.. across them all, around shared
    centres (the nearest rows of a query are spread over the members)."""
    records = graph_records(sum(SIZES))
    indexes, start = [], 0
    for size in SIZES:
        index = SearchIndex(graph_min_rows=None)  # no graph of its own: only the union's
        index.upsert(records[start : start + size])
        indexes.append(index)
        start += size
    return indexes


def _union_top(
    union: UnionGraph,
    indexes: Sequence[SearchIndex],
    query: npt.NDArray[np.float32],
    k: int,
    filters: QueryFilters | None = None,
) -> list[tuple[float, str]] | None:
    """The k best (distance, id) of all `indexes` from one walk of `union`."""
    masks = [index.mask(filters) for index in indexes]
    proposed = union.candidates(query, indexes, masks, k)
    if proposed is None:
        return None
    found = []
    for index, mask, rows in zip(indexes, masks, proposed, strict=True):
        found += [(m.distance, m.id) for m in index.semantic(query, mask, k, proposed=rows)]
    return sorted(found)[:k]


def _exact_top(
    indexes: Sequence[SearchIndex],
    query: npt.NDArray[np.float32],
    k: int,
    filters: QueryFilters | None = None,
) -> list[tuple[float, str]]:
    found = []
    for index in indexes:
        mask = index.mask(filters)
        found += [(m.distance, m.id) for m in index.semantic(query, mask, k, exact=True)]
    return sorted(found)[:k]


def _recall(
    union: UnionGraph, indexes: Sequence[SearchIndex], filters: QueryFilters | None = None
) -> float:
    hits = 0
    for query in clustered(60, seed=9):
        got = _union_top(union, indexes, query, 10, filters)
        assert got is not None, "the union graph must be walked"
        exact = _exact_top(indexes, query, 10, filters)
        # Re-scored exactly: a row in both shows the distance exact search gives it.
        exact_distance = {i: d for d, i in exact}
        both = [(d, i) for d, i in got if i in exact_distance]
        assert all(d == exact_distance[i] for d, i in both)
        hits += len(both)
    return hits / (60 * 10)


def test_one_walk_over_the_members_finds_their_exact_top_10() -> None:
    indexes = _members()
    union = UnionGraph.build(indexes)
    assert union.covers(indexes) and union.tail(indexes) == 0
    assert _recall(union, indexes) >= 0.99
    # A filter is each member's mask over its own rows.
    assert _recall(union, indexes, QueryFilters(minConfidence=0.5)) >= 0.99
    found = _union_top(union, indexes, clustered(1, seed=3)[0], 10)
    assert found is not None
    assert sum(any(index.row_of(i) is not None for _, i in found) for index in indexes) > 1


def test_rows_written_after_the_build_are_found_and_removed_ones_never_are() -> None:
    indexes = _members()
    union = UnionGraph.build(indexes)
    query = clustered(1, seed=4)[0]
    best = _exact_top(indexes, query, 3)
    # An update (its new row is past the graph), a delete, and an insert right on the query.
    first, second = best[0][1], best[1][1]
    owner = next(i for i in indexes if i.row_of(first) is not None)
    owner.upsert([IndexedRecord(first, DecisionRecord(id=first, title=first), -query, "")])
    next(i for i in indexes if i.row_of(second) is not None).remove([second])
    indexes[2].upsert([IndexedRecord("new", DecisionRecord(id="new", title="new"), query, "")])
    assert union.covers(indexes) and union.tail(indexes) == 2
    got = _union_top(union, indexes, query, 10)
    assert got == _exact_top(indexes, query, 10)
    assert got[0] == (0.0, "new") and second not in {i for _, i in got}
    assert first not in {i for _, i in got}  # its new vector points away


def test_a_compaction_or_a_reloaded_member_is_no_longer_covered() -> None:
    indexes = _members()
    union = UnionGraph.build(indexes)
    assert not union.covers(indexes[:2]) and not union.covers([indexes[1], indexes[0], indexes[2]])
    indexes[0].remove([f"r{i:05d}" for i in range(MIN_COMPACT)])  # past the compaction
    assert not union.covers(indexes)
    reloaded = _members()
    assert not union.covers(reloaded)


def test_it_never_keeps_an_evicted_member_in_memory() -> None:
    indexes = _members()
    union = UnionGraph.build(indexes)
    evicted = indexes.pop()
    gone = evicted.vectors
    del evicted
    gc.collect()
    assert sum(o is gone for o in gc.get_referrers(gone)) == 0
    assert not union.covers([*indexes, SearchIndex()])


def test_a_filter_passing_few_rows_is_left_to_each_members_scan() -> None:
    indexes = _members()
    union = UnionGraph.build(indexes)
    few = QueryFilters(maxConfidence=0.0)  # 10% pass: below GRAPH_MIN_FRACTION
    query = clustered(1, seed=5)[0]
    assert _union_top(union, indexes, query, 10, few) is None


def test_members_of_different_dimensions_are_refused() -> None:
    other = SearchIndex()
    other.upsert(
        [IndexedRecord("x", DecisionRecord(id="x", title="x"), np.ones(8, np.float32) / 8**0.5, "")]
    )
    with pytest.raises(ValueError, match="one dimension"):
        UnionGraph.build([*_members(), other])


def test_a_member_that_never_held_a_record_has_no_nodes_until_it_does() -> None:
    # A tenant whose collection exists but whose every decision was deleted before this
    # replica loaded it: its index has no dimension yet.
    indexes = [*_members(), SearchIndex(graph_min_rows=None)]
    union = UnionGraph.build(indexes)
    query = clustered(1, seed=6)[0]
    assert _union_top(union, indexes, query, 10) == _exact_top(indexes, query, 10)
    indexes[3].upsert([IndexedRecord("late", DecisionRecord(id="late", title="late"), query, "")])
    found = _union_top(union, indexes, query, 10)
    assert found is not None and found[0] == (0.0, "late")
    with pytest.raises(ValueError, match="one dimension"):
        UnionGraph.build([SearchIndex(), SearchIndex()])
