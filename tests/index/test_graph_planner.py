"""The planner's approximate path (HNSW graph + exact re-scoring) against exact search."""

from __future__ import annotations

import itertools

import pytest

from a2a.index import IndexedRecord, SearchIndex
from a2a.index.breadth_table import BREADTHS
from a2a.index.search_index import (
    GRAPH_MAX_BREADTH,
    GRAPH_MIN_ROWS,
    MIN_COMPACT,
    ORG_GRAPH_MIN_ROWS,
    graph_candidates,
    walk_breadth,
)
from a2a.records import DecisionRecord
from a2a.records.filters import QueryFilters
from tests.index.helpers import clustered, graph_records

SIZE = 6000


def _forced() -> SearchIndex:
    """An index whose every non-exact semantic search walks the graph (the knob)."""
    return SearchIndex(graph_min_rows=0, graph_min_fraction=0.0)


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    built = _forced()
    records = graph_records(SIZE)
    for start in range(0, SIZE, 1000):  # in batches, as a load does: the graph grows
        built.upsert(records[start : start + 1000])
    return built


def _recall(index: SearchIndex, filters: QueryFilters | None, k: int = 10) -> float:
    queries = clustered(100, seed=9)
    found = 0
    with index.reading():
        mask, passing = index.selection(filters)
        assert index.plan(mask, passing) is not None, "the graph path must be taken"
        for query in queries:
            exact = index.semantic(query, mask, k, passing, exact=True)
            approximate = index.semantic(query, mask, k, passing)
            found += len({m.id for m in exact} & {m.id for m in approximate})
            # Re-scored exactly: a row in both has the distance exact search gives it.
            exact_distance = {m.id: m.distance for m in exact}
            for match in approximate:
                if match.id in exact_distance:
                    assert match.distance == exact_distance[match.id]
                assert mask[match.row]
    return found / (k * len(queries))


@pytest.mark.parametrize(
    "filters",
    [None, QueryFilters(minConfidence=0.5), QueryFilters(category="security")],
    ids=["no filter", "50%", "20%"],
)
def test_recall_at_10_is_at_least_0_99_with_the_graph_forced_on(
    index: SearchIndex, filters: QueryFilters | None
) -> None:
    assert _recall(index, filters) >= 0.99


def test_the_planner_scans_below_its_thresholds() -> None:
    index = SearchIndex(graph_min_rows=1000, graph_min_fraction=0.2)
    index.upsert(graph_records(999))
    assert index.graph is None  # below graph_min_rows: not even built
    index.upsert(graph_records(2, seed=2, prefix="s"))
    assert index.graph is not None and len(index.graph) == 1001
    with index.reading():
        assert index.plan(index.mask(None)) == 1001
        narrow = index.mask(QueryFilters(category="security", minConfidence=0.9))
        assert index.plan(narrow) is None  # ~2% pass: exact scan


def test_writes_keep_the_graph_in_step_without_a_rebuild() -> None:
    index = _forced()
    records = graph_records(3000)
    index.upsert(records)
    graph = index.graph
    assert graph is not None
    far = -records[0].embedding  # type: ignore[operator]
    # update: r00001 moves next to `far`; delete: r00002; insert: n00000 at `far` itself
    index.upsert([IndexedRecord("r00001", records[1].decision, far * 0.999 + 0.001, "")])
    index.remove(["r00002"])
    index.upsert([IndexedRecord("n00000", DecisionRecord(id="n00000", title="n00000"), far, "")])
    assert index.graph is graph and len(graph) == 3002  # nodes added, none rebuilt
    with index.reading():
        mask = index.mask(None)
        found = [m.id for m in index.semantic(far, mask, 2)]
        near_old = [m.id for m in index.semantic(records[2].embedding, mask, 10)]
    assert found == ["n00000", "r00001"]
    assert "r00002" not in near_old


def test_compaction_renumbers_the_graph_and_recall_holds() -> None:
    index = _forced()
    records = graph_records(4 * MIN_COMPACT)
    index.upsert(records)
    graph = index.graph
    index.remove([r.id for r in records[::2]])  # half: compacts (renumbers rows)
    assert len(index) == 2 * MIN_COMPACT and index.graph is graph and not graph.identity
    queries = clustered(50, seed=4)
    found = 0
    with index.reading():
        mask = index.mask(None)
        for query in queries:
            exact = {m.id for m in index.semantic(query, mask, 10, exact=True)}
            approximate = index.semantic(query, mask, 10)
            assert all(int(m.id[1:]) % 2 == 1 for m in approximate)
            found += len(exact & {m.id for m in approximate})
    assert found / (10 * len(queries)) >= 0.99


def test_exact_true_never_walks_the_graph() -> None:
    """A graph with a poisoned node order cannot change an exact answer: exact scans."""
    index = _forced()
    index.upsert(graph_records(2000))
    queries = clustered(20, seed=5)
    plain = SearchIndex(graph_min_rows=None)
    plain.upsert(graph_records(2000))
    with index.reading(), plain.reading():
        for query in queries:
            got = index.semantic(query, index.mask(None), 10, exact=True)
            assert got == plain.semantic(query, plain.mask(None), 10)


def test_a_deferred_graph_is_built_later_with_the_rows_written_meanwhile() -> None:
    index = SearchIndex(graph_min_rows=0, graph_min_fraction=0.0, graph_inline=False)
    index.upsert(graph_records(2000))
    assert index.graph is None and index.wants_graph()
    with index.reading():  # no graph yet: the planner scans
        assert index.plan(index.mask(None)) is None
    index.build_graph()
    index.upsert(graph_records(10, seed=3, prefix="n"))
    graph = index.graph
    assert graph is not None and len(graph) == 2010 and not index.wants_graph()
    queries = clustered(30, seed=6)
    with index.reading():
        mask = index.mask(None)
        assert index.plan(mask) == 2010
        for query in queries:
            exact = {m.id for m in index.semantic(query, mask, 10, exact=True)}
            assert len(exact & {m.id for m in index.semantic(query, mask, 10)}) >= 9


def test_a_store_gets_its_graph_at_org_graph_min_rows_and_walks_it_alone_at_graph_min_rows() -> (
    None
):
    # Org-level search walks many stores of this size per call (docs/scaling.md, Small
    # stores); a store searched alone keeps scanning below GRAPH_MIN_ROWS.
    assert (ORG_GRAPH_MIN_ROWS, GRAPH_MIN_ROWS) == (5000, 50_000)
    index = SearchIndex()
    index.upsert(graph_records(ORG_GRAPH_MIN_ROWS - 1))
    assert index.graph is None
    index.upsert(graph_records(1, seed=2, prefix="s"))
    assert index.graph is not None and len(index.graph) == ORG_GRAPH_MIN_ROWS
    with index.reading():
        mask = index.mask(None)
        assert index.plan(mask) is None
        assert index.plan(mask, org=True) == ORG_GRAPH_MIN_ROWS
        narrow = index.mask(QueryFilters(category="security", minConfidence=0.9))
        assert index.plan(narrow, org=True) is None  # ~2% pass: exact scan
        query = clustered(1, seed=8)[0]
        alone = index.semantic(query, mask, 10)
        assert alone == index.semantic(query, mask, 10, exact=True)
        walked = index.semantic(query, mask, 10, org=True)
        assert len({m.id for m in walked} & {m.id for m in alone}) >= 9


def test_the_walk_is_as_wide_as_the_measured_table_says_and_never_narrower_between() -> None:
    # a2a.index.breadth_table: measured by bench/walk_bench.py --calibrate.
    sizes = sorted(BREADTHS)
    for size in sizes:
        for share, breadth in BREADTHS[size].items():
            assert walk_breadth(size, round(share * size)) == breadth
    # Between measured sizes and shares: the next size up and the next share down.
    for smaller, larger in itertools.pairwise(sizes):
        shares = sorted(BREADTHS[larger])
        for lower, upper in itertools.pairwise(shares):
            between = walk_breadth(smaller + 1, round((lower + upper) / 2 * (smaller + 1)))
            assert between == BREADTHS[larger][lower]
    # Wider for more rows and for fewer passing, up to the largest size and past it.
    rows = sorted({1_000, *sizes, 2 * sizes[-1], 1_000_000, 10_000_000})
    for share in (1.0, 0.6, 0.5, 0.3, 0.2, 0.05):
        widths = [walk_breadth(n, round(share * n)) for n in rows]
        assert widths == sorted(widths), (share, widths)
    for n in rows:
        widths = [walk_breadth(n, round(share * n)) for share in (1.0, 0.6, 0.5, 0.3, 0.2, 0.05)]
        assert widths == sorted(widths), (n, widths)
    assert walk_breadth(10_000_000, 10_000) == GRAPH_MAX_BREADTH


def _needed(index: SearchIndex, filters: QueryFilters | None, queries: int = 100) -> int:
    """The smallest efSearch at which the index's walk (its candidates scored exactly, as
    `semantic` does) reaches recall@10 >= 0.99 on `queries` queries: what the sample needs."""
    graph = index.graph
    assert graph is not None
    sample = clustered(queries, seed=21)
    with index.reading():
        mask, passing = index.selection(filters)
        every = filters is None
        truths = [{m.row for m in index.semantic(q, mask, 10, passing, exact=True)} for q in sample]
        for breadth in (10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256, 384):
            found = 0
            for q, truth in zip(sample, truths, strict=True):
                rows = graph.search(q, None if every else mask, graph_candidates(10), breadth)
                best = {m.row for m in index.semantic(q, mask, 10, proposed=rows)}
                found += len(best & truth)
            if found >= 0.99 * 10 * len(sample):
                return breadth
    return 10**6


@pytest.mark.parametrize(
    "filters",
    [None, QueryFilters(minConfidence=0.5), QueryFilters(category="security")],
    ids=["no filter", "50%", "20%"],
)
def test_the_breadth_chosen_is_never_below_what_a_measured_sample_needs(
    index: SearchIndex, filters: QueryFilters | None
) -> None:
    with index.reading():
        count = int(index.mask(filters).sum())
    assert walk_breadth(index.alive_count, count) >= _needed(index, filters)
