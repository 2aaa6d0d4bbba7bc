"""The union graphs of org-level search: one per set of tenants searched together, built in
the background when such a call first finds none (a2a.index.union_graph).

Until a set's graph is built, and whenever it no longer covers its tenants' indexes (one
was evicted and loaded again, or compacted), org-level calls walk each tenant's own graph
as before: slower, never different in what they may return. A graph over a set holds only
that set's rows, so no walk ever passes another tenant's data (CONTRACT.md, Tenants).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable

from a2a.concurrency import Lane
from a2a.index import SearchIndex
from a2a.index.graph import NEIGHBOURS
from a2a.index.search_index import GRAPH_MIN_ROWS
from a2a.index.union_graph import UnionGraph

log = logging.getLogger(__name__)

#: Union graphs a replica keeps (least recently used dropped past it): one per grant an
#: org-level token holds, in practice one or two.
KEEP = 2
#: A graph is built again once this share of its tenants' rows was appended since (the
#: tail each call scores exactly; at least TAIL_REBUILD_MIN rows).
TAIL_REBUILD = 0.1
TAIL_REBUILD_MIN = 2048
#: Share of one core the builds may take over time: after a build of B seconds, the next
#: starts no sooner than B x (1 / BUILD_SHARE - 1) later. Where the tenants in use do not
#: fit the budget together, or more grants are in use than graphs are kept, a graph can be
#: dropped soon after it is built (reported: one 23-30 s build of 100k rows every ~25 s,
#: 2 of 1,250 org-level queries walking it); then each tenant is searched on its own.
BUILD_SHARE = 0.1


class UnionGraphs:
    """Tenant names (sorted) -> the union graph of their indexes.

    `get(names, indexes)` answers the graph when one covers `indexes`, else None, and
    starts its build (one at a time, on `lane`: the service's background lane; default, a
    lane of its own) when the tenants hold `min_rows`
    rows together (GRAPH_MIN_ROWS, as one store walks its graph from), it fits
    `memory_budget` (bytes) beside them, and the builds so far leave it its share of a core
    (`build_share`, BUILD_SHARE; `clock`: seconds). `drop(name)` forgets the graphs of an
    evicted tenant; `nbytes` is what they hold (counted in CSTP_INDEX_MEMORY_MIB).
    """

    def __init__(
        self,
        min_rows: int = GRAPH_MIN_ROWS,
        keep: int = KEEP,
        memory_budget: int | None = None,
        build_share: float = BUILD_SHARE,
        clock: Callable[[], float] = time.monotonic,
        lane: Lane | None = None,
    ) -> None:
        self._lane = lane or Lane(1, name="cstp-union")
        #: Rows the tenants of a set hold together before it gets a graph.
        self.min_rows = min_rows
        self._keep = keep
        self._budget = memory_budget
        self._build_share = build_share
        self._clock = clock
        #: When the next build may start (`clock` seconds).
        self._next_build = -math.inf
        self._graphs: OrderedDict[tuple[str, ...], UnionGraph] = OrderedDict()
        self._building: asyncio.Task[None] | None = None
        #: The tenants of the build under way, and whether one was evicted meanwhile.
        self._build_names: tuple[str, ...] = ()
        self._build_dropped = False

    def get(self, names: tuple[str, ...], indexes: list[SearchIndex]) -> UnionGraph | None:
        """The graph of the tenants `names` (their loaded `indexes`, in that order) when it
        covers them, else None (a build started when worth one, see the class)."""
        graph = self._graphs.get(names)
        if graph is not None and graph.covers(indexes):
            self._graphs.move_to_end(names)
            tail = graph.tail(indexes)
            if tail > max(TAIL_REBUILD_MIN, TAIL_REBUILD * sum(len(i) for i in indexes)):
                self._start(names, indexes)
            return graph
        if len(indexes) > 1 and sum(len(i) for i in indexes) >= self.min_rows:
            self._start(names, indexes)
        return None

    def drop(self, name: str) -> int:
        """Forget every graph over tenant `name`; the bytes they held."""
        freed = 0
        self._build_dropped = self._build_dropped or name in self._build_names
        for names in [names for names in self._graphs if name in names]:
            freed += self._graphs.pop(names).nbytes
        return freed

    @property
    def nbytes(self) -> int:
        """Bytes the kept graphs hold."""
        return sum(graph.nbytes for graph in self._graphs.values())

    async def settled(self) -> None:
        """After the build under way, if any, has ended."""
        if self._building is not None:
            await asyncio.shield(self._building)

    async def stop(self) -> None:
        """Cancel the build under way (the app's shutdown), without waiting for its thread
        (which finishes on its own, its graph dropped)."""
        if self._building is not None:
            self._building.cancel()
            await asyncio.gather(self._building, return_exceptions=True)

    def _start(self, names: tuple[str, ...], indexes: list[SearchIndex]) -> None:
        if self._building is not None or self._clock() < self._next_build:
            return
        if not self._fits(indexes):
            return
        self._build_names, self._build_dropped = names, False
        self._building = asyncio.get_running_loop().create_task(self._build(names, indexes))

    def _fits(self, indexes: list[SearchIndex]) -> bool:
        """Whether the graph would fit the budget beside its tenants' indexes (its size
        estimated as the fp16 vectors and base-layer links of every row)."""
        if self._budget is None:
            return True
        rows = sum(len(index) for index in indexes)
        dimension = max(index.dimension or 0 for index in indexes)
        estimate = rows * (2 * dimension + 2 * NEIGHBOURS * 4)
        return sum(i.memory_bytes() for i in indexes) + self.nbytes + estimate <= self._budget

    async def _build(self, names: tuple[str, ...], indexes: list[SearchIndex]) -> None:
        started = self._clock()
        try:
            graph = await self._lane.run(lambda: UnionGraph.build(indexes))
        except Exception:  # our bug: logged; org-level calls walk each tenant's graph
            log.exception("org-level union graph failed: %s", ", ".join(names))
            return
        finally:
            self._building = None
            took = self._clock() - started
            self._next_build = started + took / self._build_share
        if self._build_dropped:  # a tenant was evicted meanwhile: the graph is of the old
            return
        self._graphs[names] = graph
        self._graphs.move_to_end(names)
        while len(self._graphs) > self._keep:
            self._graphs.popitem(last=False)
        log.info(
            "org-level union graph built: %d tenants, %d rows in %.1f s",
            len(names),
            sum(len(index) for index in indexes),
            took,
        )
