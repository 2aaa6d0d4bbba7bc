"""The replica's union graphs (a2a.app.union_graphs): built in the background past their
rows, one per set of tenants, dropped with an evicted tenant, never past the budget."""

from __future__ import annotations

from a2a.app.union_graphs import UnionGraphs
from a2a.index import SearchIndex
from tests.index.helpers import graph_records


def _indexes(count: int, size: int = 600) -> list[SearchIndex]:
    records = graph_records(count * size)
    indexes = []
    for n in range(count):
        index = SearchIndex(graph_min_rows=None)
        index.upsert(records[n * size : (n + 1) * size])
        indexes.append(index)
    return indexes


async def test_a_set_gets_its_graph_in_the_background_past_min_rows() -> None:
    unions = UnionGraphs(min_rows=1800, build_share=1.0)
    indexes = _indexes(3)
    assert unions.get(("a", "b"), indexes[:2]) is None  # 1,200 rows: none wanted
    await unions.settled()
    assert unions.get(("a", "b"), indexes[:2]) is None and unions.nbytes == 0
    assert unions.get(("a", "b", "c"), indexes) is None  # its build starts
    await unions.settled()
    graph = unions.get(("a", "b", "c"), indexes)
    assert graph is not None and graph.covers(indexes) and unions.nbytes == graph.nbytes > 0
    # Another set of tenants (another grant) is another graph: none of theirs is shared.
    assert unions.get(("a", "c", "b"), [indexes[0], indexes[2], indexes[1]]) is None
    await unions.settled()
    assert unions.get(("a", "c", "b"), [indexes[0], indexes[2], indexes[1]]) is not graph


async def test_an_evicted_tenants_graphs_are_dropped_and_built_again_on_its_reload() -> None:
    unions = UnionGraphs(min_rows=0, build_share=1.0)
    indexes = _indexes(2)
    unions.get(("a", "b"), indexes)
    await unions.settled()
    held = unions.nbytes
    assert held > 0 and unions.drop("c") == 0
    assert unions.drop("b") == held and unions.nbytes == 0
    reloaded = [indexes[0], _indexes(2)[1]]
    assert unions.get(("a", "b"), reloaded) is None
    await unions.settled()
    graph = unions.get(("a", "b"), reloaded)
    assert graph is not None and not graph.covers(indexes)


async def test_a_graph_that_would_not_fit_the_budget_is_never_built() -> None:
    indexes = _indexes(2)
    beside = sum(index.memory_bytes() for index in indexes)
    tight = UnionGraphs(min_rows=0, memory_budget=beside + 1024, build_share=1.0)
    assert tight.get(("a", "b"), indexes) is None
    await tight.settled()
    assert tight.get(("a", "b"), indexes) is None and tight.nbytes == 0
    roomy = UnionGraphs(min_rows=0, memory_budget=beside + 64 * 2**20, build_share=1.0)
    roomy.get(("a", "b"), indexes)
    await roomy.settled()
    assert roomy.get(("a", "b"), indexes) is not None


async def test_many_rows_written_since_the_build_start_a_new_one() -> None:
    unions = UnionGraphs(min_rows=0, build_share=1.0)
    indexes = _indexes(2)
    unions.get(("a", "b"), indexes)
    await unions.settled()
    first = unions.get(("a", "b"), indexes)
    indexes[1].upsert(graph_records(2100, seed=5, prefix="late-"))  # past TAIL_REBUILD_MIN
    assert unions.get(("a", "b"), indexes) is first  # still used (its tail scored) meanwhile
    await unions.settled()
    second = unions.get(("a", "b"), indexes)
    assert second is not None and second is not first and second.tail(indexes) == 0


async def test_builds_take_at_most_their_share_of_a_core() -> None:
    # Reported: under a budget the tenants in use did not fit, a graph was dropped with an
    # evicted tenant right after each build, and built again at once: a core kept busy.
    now = [0.0]

    def clock() -> float:
        now[0] += 2.0  # each reading two seconds later: a build of 2 s
        return now[0]

    unions = UnionGraphs(min_rows=0, build_share=0.25, clock=clock)
    indexes = _indexes(2)
    unions.get(("a", "b"), indexes)  # clock 2: starts
    await unions.settled()  # from 4 to 6: 2 s, so the next no sooner than 4 + 2 / 0.25 = 12
    assert unions.drop("a") > 0
    assert unions.get(("a", "b"), indexes) is None  # clock 8: none started
    await unions.settled()
    assert unions.nbytes == 0 and now[0] == 8.0
    now[0] = 10.0
    assert unions.get(("a", "b"), indexes) is None  # clock 12: started
    await unions.settled()
    assert unions.get(("a", "b"), indexes) is not None
