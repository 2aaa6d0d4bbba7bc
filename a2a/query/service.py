"""The query logic behind cstp.queryDecisions, with no idea it sits behind HTTP."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt

from a2a.concurrency import Lane
from a2a.embeddings import Embedder, is_available, is_static
from a2a.embeddings.batching import DynamicBatcher
from a2a.errors import EmbeddingsUnavailable
from a2a.index import Match, SearchIndex
from a2a.index.columns import BoolArray
from a2a.index.sync import LiveIndex
from a2a.query.fusion import FusedHit, FusionConfig, explain, fuse
from a2a.query.keyword import KeywordHit
from a2a.query.matching import category_note
from a2a.query.params import QueryDecisionsParams, RetrievalMode
from a2a.query.recency import by_recency, recent_candidates
from a2a.query.results import Hits, QueryDecisionsResult
from a2a.store.async_store import AsyncStore

#: Work a query of a static embedder may do on the event loop, in multiply-adds of the
#: semantic scan (rows scored x dimension, ~1 ns each here), BM25's work counted in the same
#: unit (a2a.index.bm25.BM25Index.work). INLINE_WORK (4,096 rows of 256-d, ~0.1 ms) holds
#: always, for semantic queries; IDLE_INLINE_WORK (~3-4 ms) in any mode while no worker is
#: busy: a lone caller then skips the hop to a worker thread, whose cold core cost ~1.7 ms
#: on 2 ms of work here (bench/scale_bench.py, ~10% filter at 100k).
INLINE_WORK = 4096 * 256
IDLE_INLINE_WORK = 4 * 1024 * 1024
#: Largest share of wall time the answers given on the event loop may take, over any stretch
#: longer than INLINE_BURST_SECONDS (a token bucket of loop time: credit accrues at
#: INLINE_SHARE seconds per second, up to INLINE_BURST_SECONDS; an answer on the loop spends
#: the time it took; the idle path is open while credit is left). Callers answered on the
#: loop never make the pool busy, so `busy == 0` alone cannot tell a lone caller from many
#: concurrent ones, which would then all queue on the loop (and /health behind them: p50
#: 119 ms under 8 clients of 100-term keyword queries at 100k, 4.5 ms with a share of 1/2).
INLINE_SHARE = 0.5
INLINE_BURST_SECONDS = 0.01
#: The embedding of a keyword query the embedding provider could not give (it is down:
#: CONTRACT.md, Embedding providers): the query is answered by BM25 alone, its hits
#: without a distance (null on the wire). Only where the vector is not needed to rank
#: (`vector_optional`).
NO_VECTOR: Final = np.zeros(0, dtype=np.float32)


@dataclass(frozen=True, slots=True)
class InlinePolicy:
    """When a query is answered on the event loop rather than in a worker: the knobs above,
    as one value a QueryService takes (tests pass their own rather than patch the module)."""

    work: int = INLINE_WORK
    idle_work: int = IDLE_INLINE_WORK
    share: float = INLINE_SHARE
    burst_seconds: float = INLINE_BURST_SECONDS

    @classmethod
    def never(cls) -> InlinePolicy:
        """Every query goes to a worker."""
        return cls(work=-1, idle_work=-1)


@dataclass(frozen=True, slots=True)
class HybridConfig:
    """Hybrid retrieval: how the two rankings are fused, and how deep each is read."""

    fusion: FusionConfig = field(default_factory=FusionConfig)
    candidates: int = 100


class Ranking(NamedTuple):
    """A query's hits in one index before what they show is read: rows (valid under the
    index's read lock it was computed under), best first, with their cosine distances, and
    scores and explains (None when the call produces none), position by position."""

    rows: list[int]
    distances: Sequence[float | None]
    scores: list[float | None] | None = None
    explains: list[dict[str, Any]] | None = None

    def hits(self, index: SearchIndex, params: QueryDecisionsParams) -> Hits:
        """The Hits of these rows (what each shows read from `index`; reason types when
        the call asked). Under the read lock the ranking was computed under."""
        reasons = index.reason_types(self.rows) if params.include_reasons else None
        return Hits(index.shown(self.rows), self.distances, reasons, self.scores, self.explains)

    def only(self, positions: list[int]) -> Ranking:
        """The entries at `positions`, in that order."""
        return Ranking(
            [self.rows[n] for n in positions],
            [self.distances[n] for n in positions],
            None if self.scores is None else [self.scores[n] for n in positions],
            None if self.explains is None else [self.explains[n] for n in positions],
        )


class QueryService:
    """Decisions by meaning, by keywords (BM25) or both, narrowed by filters.

    Answered from the in-process search index (a2a.index), fresh with every write
    Chroma acknowledged before the call. Filters are one mask in every mode, applied
    before the top k is cut. Every result carries its cosine distance to the query.
    Results are deterministic: equal scores and distances are ordered by id.
    `index` defaults to a LiveIndex of `store` of the service's own, loaded at the first
    call; `workers` runs the embedding and the search off the event loop, except for a
    cheap query of a static embedder (INLINE_WORK; the index not being written), which is
    answered on the event loop without a thread hop. With `batcher` (a model whose
    batched vectors equal its lone ones), queries are embedded there, concurrent ones in
    shared model calls, and the search follows the same rule: on the event loop when
    cheap, else in a worker.
    """

    def __init__(
        self,
        store: AsyncStore,
        embedder: Embedder,
        agent_id: str,
        clock: Callable[[], float] = time.perf_counter,
        hybrid: HybridConfig | None = None,
        index: LiveIndex | None = None,
        workers: Lane | None = None,
        default_mode: RetrievalMode = "semantic",
        batcher: DynamicBatcher | None = None,
        wall_clock: Callable[[], float] = time.time,
        inline: InlinePolicy | None = None,
    ) -> None:
        self._embedder = embedder
        self._default_mode = default_mode
        self._agent_id = agent_id
        self._clock = clock
        self._hybrid = hybrid or HybridConfig()
        self._live = index or LiveIndex(store.sync)
        self._workers = workers or store.workers
        self._static = is_static(embedder)
        self._batcher = batcher
        self._wall_clock = wall_clock  # epoch seconds: the "now" of recencyHalfLifeDays
        #: When a query is answered on the event loop (InlinePolicy).
        self.inline = inline or InlinePolicy()
        # Loop time answers on the idle path may still take (see INLINE_SHARE), and when.
        self._inline_credit = self.inline.burst_seconds
        self._credited_at = time.perf_counter()

    async def index(self, marker: str | None = None) -> SearchIndex:
        """The index this service answers from, fresh with every acknowledged write
        (LiveIndex.current, `marker` its; stale reads as `answer` has them)."""
        return await self._live.current(marker)

    def hits(
        self, index: SearchIndex, params: QueryDecisionsParams, vector: npt.NDArray[np.float32]
    ) -> Hits:
        """The hits of `params` in `index` for the query's `vector`: `answer`'s search, run
        here (blocking: call it from a worker; org-level search runs every tenant's in one)."""
        return self._answer(index, params, vector)

    def ranking(
        self,
        index: SearchIndex,
        params: QueryDecisionsParams,
        vector: npt.NDArray[np.float32],
        proposed: npt.NDArray[np.int64] | None = None,
    ) -> Ranking | None:
        """`hits`' ranking before what the hits show is read, for org-level search: it
        reads them only for the hits it keeps, and the planner walks graphs from
        ORG_GRAPH_MIN_ROWS rows (SearchIndex.plan). `proposed`: in semantic mode, the rows
        a union graph's walk proposed in this index (a2a.index.union_graph), scored
        instead. None for a call with recencyHalfLifeDays (ranked by what the hits show:
        use `hits`). Call under `index.reading()`, from a worker."""
        if params.recency_half_life_days is not None:
            return None
        mask, passing = index.selection(params.filters)
        return self._ranked(index, params, vector, mask, passing, org=True, proposed=proposed)

    def mode(self, params: QueryDecisionsParams) -> RetrievalMode:
        """The retrieval mode `params` are answered in: theirs, else the server's
        (CSTP_DEFAULT_RETRIEVAL_MODE)."""
        return params.mode_or(self._default_mode)

    async def embed(self, query: str) -> npt.NDArray[np.float32]:
        """The embedding of `query` as `answer` computes it (the batcher, else a worker).
        Raises EmbeddingsUnavailable while an embedding provider fails."""
        if self._batcher is not None:
            return await self._batcher.embed(query)
        if self._static:  # a static model's lookup and mean: here, as `answer` embeds it
            return self._vector(query)
        return await self._workers.run(lambda: self._vector(query))

    async def vector_of(self, params: QueryDecisionsParams) -> npt.NDArray[np.float32]:
        """`embed(params.query)`, or NO_VECTOR for a call that can do without it
        (`vector_optional`) while the provider fails or is taken as down (not asked
        then). Raises EmbeddingsUnavailable for the others."""
        optional = self.vector_optional(params)
        if optional and not is_available(self._embedder):
            return NO_VECTOR
        try:
            return await self.embed(params.query)
        except EmbeddingsUnavailable:
            if optional:
                return NO_VECTOR
            raise

    def vector_optional(self, params: QueryDecisionsParams) -> bool:
        """Whether `params` rank without the query's vector, which then only gives each hit
        its distance: keyword mode without maxDistance or recencyHalfLifeDays (both rank
        by distance too)."""
        return (
            self.mode(params) == "keyword"
            and params.max_distance is None
            and params.recency_half_life_days is None
        )

    async def query_decisions(
        self, params: QueryDecisionsParams, vector: npt.NDArray[np.float32] | None = None
    ) -> QueryDecisionsResult:
        """Decisions matching `params.query` that pass every filter, at most `params.limit`:
        what cstp.queryDecisions answers.

        `vector`: the query's embedding when the caller has it already (org-level search
        embeds once for every tenant; see `embed`). `max_distance` (when the params carry
        it) drops results farther than it, in every mode. Raises StoreUnavailable when
        Chroma cannot answer (CSTP -32003).
        """
        started = self._clock()
        index = await self._live.current()
        hits = None
        if vector is not None:
            hits = self._answer_inline(index, params, vector)
        elif self._batcher is not None:
            vector = await self.vector_of(params)
            hits = self._answer_inline(index, params, vector)
        elif self._static:
            hits = self._answer_inline(index, params)
        if hits is None:
            hits = await self._workers.run(lambda: self._answer(index, params, vector))
        note = None
        category = params.filters.category if params.filters is not None else None
        # Only an empty answer can come from a category no decision has: others pay nothing.
        if category is not None and not hits.shown:
            note = await self._workers.run(lambda: _category_note(index, category))
        decisions = hits.summaries()
        return QueryDecisionsResult(
            decisions=decisions,
            total=len(decisions),
            query=params.query,
            query_time_ms=round((self._clock() - started) * 1000),
            agent=self._agent_id,
            note=note,
        )

    def _answer(
        self,
        index: SearchIndex,
        params: QueryDecisionsParams,
        vector: npt.NDArray[np.float32] | None = None,
    ) -> Hits:
        # Embedded before the read lock is taken: a writer never waits for the model.
        if vector is None:
            vector = self._vector_for(params)
        with index.reading():
            return self._search(index, params, vector, *index.selection(params.filters))

    def _answer_inline(
        self,
        index: SearchIndex,
        params: QueryDecisionsParams,
        vector: npt.NDArray[np.float32] | None = None,
    ) -> Hits | None:
        """The answer when it is cheap to compute here, else None (see INLINE_WORK); the
        query is embedded here unless `vector` is given.

        Never while a writer holds or waits for the index. Keyword and hybrid queries only
        while the pool is idle, and only once BM25's statistics are computed since the last
        write: computing them is a pass over every row and every posting of each term
        (~10 ms at 300k rows), whatever the filter.
        """
        if not index.lock.try_reading():
            return None
        try:
            started = time.perf_counter()
            idle = self._idle(started)
            mask, passing = index.selection(params.filters)
            work = self._work(index, params, mask, passing, idle)
            limit = self.inline.idle_work if idle else self.inline.work
            if work is None or work > limit:
                return None  # the worker reuses the mask (a2a.index.mask_cache)
            if vector is None:
                vector = self._vector_for(params)
            answer = self._search(index, params, vector, mask, passing)
            self._spent(started)
            return answer
        finally:
            index.lock.stop_reading()

    @contextlib.contextmanager
    def on_loop(self, work: int) -> Iterator[bool]:
        """Whether work of `work` (INLINE_WORK's units) may run on the event loop now, as
        a query of this service would (InlinePolicy), for the block; when it may, the
        block's time counts against the loop's share. Org-level search answers from a
        union graph there (a2a.app.org)."""
        started = time.perf_counter()
        allowed = work <= (self.inline.idle_work if self._idle(started) else self.inline.work)
        try:
            yield allowed
        finally:
            if allowed:
                self._spent(started)

    def _idle(self, now: float) -> bool:
        """Whether the pool is idle and loop time is left: the idle path's bound applies."""
        return self._workers.busy == 0 and self._credit(now) > 0

    def _spent(self, started: float) -> None:
        """Every answer given on the loop counts against the idle path's share of it."""
        self._inline_credit -= time.perf_counter() - started

    def _credit(self, now: float) -> float:
        """Seconds of loop time the idle path may still spend, accrued up to `now`."""
        accrued = self._inline_credit + (now - self._credited_at) * self.inline.share
        self._inline_credit, self._credited_at = min(accrued, self.inline.burst_seconds), now
        return self._inline_credit

    def _work(
        self,
        index: SearchIndex,
        params: QueryDecisionsParams,
        mask: BoolArray,
        passing: npt.NDArray[np.int64] | None,
        idle: bool,
    ) -> int | None:
        """The query's work in INLINE_WORK's units; None when unbounded or not cheap
        while the pool is busy (any mode but semantic)."""
        count = np.count_nonzero(mask) if passing is None else len(passing)
        graph = not params.exact and index.plan(mask, passing) is not None
        semantic = index.semantic_work(int(count), approximate=graph)
        mode = self.mode(params)
        if mode == "semantic":
            return semantic
        if not idle:
            return None
        keyword = index.keyword_work(params.query)
        if keyword is None:
            return None
        within = semantic if params.max_distance is not None else 0
        return keyword + within + (semantic if mode == "hybrid" else 0)

    def _vector(self, query: str) -> npt.NDArray[np.float32]:
        """The query's embedding, float32, `dimension` long."""
        return np.asarray(self._embedder.embed_query(query), dtype=np.float32)

    def _vector_for(self, params: QueryDecisionsParams) -> npt.NDArray[np.float32]:
        """`vector_of`, blocking (here, or in a worker)."""
        optional = self.vector_optional(params)
        if optional and not is_available(self._embedder):
            return NO_VECTOR
        try:
            return self._vector(params.query)
        except EmbeddingsUnavailable:
            if optional:
                return NO_VECTOR
            raise

    def _search(
        self,
        index: SearchIndex,
        params: QueryDecisionsParams,
        vector: npt.NDArray[np.float32],
        mask: BoolArray,
        passing: npt.NDArray[np.int64] | None = None,
    ) -> Hits:
        """The answer to `vector` (the query's embedding) under `mask` (`passing`: its
        true rows ascending, when known)."""
        half_life = params.recency_half_life_days
        if half_life is None:
            return self._ranked(index, params, vector, mask, passing).hits(index, params)
        max_distance = params.max_distance
        mode = self.mode(params)
        if max_distance is not None and mode != "semantic":
            mask, passing = index.within(vector, mask, max_distance), None
        # Recency reorders a deeper list: in semantic mode the best rows of every passing
        # one by the recency score (any of them can be lifted), the hybrid candidate depth
        # in the others.
        now = self._wall_clock()
        if mode == "semantic":
            rows = passing if passing is not None else np.flatnonzero(mask)
            passing = recent_candidates(index, vector, rows, now, half_life, params.limit)
            mask = np.zeros(len(mask), dtype=bool)
            mask[passing] = True
            depth = len(passing)
        else:
            depth = max(self._hybrid.candidates, params.limit)
        wide = params.model_copy(update={"limit": max(depth, 1)})
        hits = self._by_mode(mode, _Probe(index, vector, wide, mask, passing)).hits(index, params)
        return by_recency(hits, now, half_life, params.limit)

    def _ranked(
        self,
        index: SearchIndex,
        params: QueryDecisionsParams,
        vector: npt.NDArray[np.float32],
        mask: BoolArray,
        passing: npt.NDArray[np.int64] | None,
        org: bool = False,
        proposed: npt.NDArray[np.int64] | None = None,
    ) -> Ranking:
        """The ranking of a call without recencyHalfLifeDays (see `_search`)."""
        mode = self.mode(params)
        if params.max_distance is not None and mode != "semantic":
            mask, passing = index.within(vector, mask, params.max_distance), None
        return self._by_mode(mode, _Probe(index, vector, params, mask, passing, org, proposed))

    def _by_mode(self, mode: RetrievalMode, probe: _Probe) -> Ranking:
        if mode == "keyword":
            return self._keyword(probe)
        if mode == "hybrid":
            return self._fused(probe)
        return self._semantic(probe)

    def _semantic(self, probe: _Probe) -> Ranking:
        index, params = probe.index, probe.params
        matches = index.semantic(
            probe.vector,
            probe.mask,
            params.limit,
            probe.passing,
            params.exact,
            probe.org,
            probe.proposed,
        )
        if params.max_distance is not None:
            matches = [m for m in matches if m.distance <= params.max_distance]
        rows, distances = [m.row for m in matches], [m.distance for m in matches]
        explains = [{"distance": d} for d in distances] if params.explain else None
        return Ranking(rows, distances, None, explains)

    def _keyword(self, probe: _Probe) -> Ranking:
        index, params = probe.index, probe.params
        matches = index.keyword(params.query, probe.mask, params.limit, probe.passing)
        rows = [m.row for m in matches]
        scores = [m.score for m in matches]
        explains = None
        if params.explain:
            explains = [
                {"bm25": score, "keywordRank": rank} for rank, score in enumerate(scores, 1)
            ]
        distances: list[float | None] = [None] * len(rows)
        if probe.vector.size:  # not NO_VECTOR
            distances = list(index.distances(probe.vector, rows))
        return Ranking(rows, distances, list(scores), explains)

    def _fused(self, probe: _Probe) -> Ranking:
        index, params, mask, passing = probe.index, probe.params, probe.mask, probe.passing
        depth = max(self._hybrid.candidates, params.limit)
        semantic = index.semantic(probe.vector, mask, depth, passing, params.exact, probe.org)
        keyword = index.keyword(params.query, mask, depth, passing)
        # Keyword matches carry no distance yet: fuse on ids, ranks and scores alone.
        fused = fuse(
            semantic,
            [KeywordHit(m.id, m.score or 0.0) for m in keyword],
            self._hybrid.fusion,
            params.limit,
        )
        row_of = {m.id: m.row for m in [*semantic, *keyword]}
        rows = [row_of[hit.id] for hit in fused]
        distances = index.distances(probe.vector, rows)
        explains = None
        if params.explain:
            explains = [self._components(h, d) for h, d in zip(fused, distances, strict=True)]
        return Ranking(rows, distances, [hit.score for hit in fused], explains)

    def _components(self, hit: FusedHit, distance: float) -> dict[str, Any]:
        return {**explain(hit, self._hybrid.fusion), "distance": distance}


@dataclass(frozen=True, slots=True)
class _Probe:
    """One ranking's inputs: the index, the query's embedding, the params, the rows that
    pass the filters (`mask`; `passing`, their row numbers, when known), whether the
    search is org-level (tenant "*") and the rows a union graph proposed (semantic)."""

    index: SearchIndex
    vector: npt.NDArray[np.float32]
    params: QueryDecisionsParams
    mask: BoolArray
    passing: npt.NDArray[np.int64] | None
    org: bool = False
    proposed: npt.NDArray[np.int64] | None = None


def _category_note(index: SearchIndex, category: str) -> str | None:
    """The result's `note` when no current decision has `category`, else None."""
    with index.reading():
        known = index.values_of("category")
    return None if category in known else category_note(category, known)


__all__ = [
    "IDLE_INLINE_WORK",
    "INLINE_WORK",
    "HybridConfig",
    "KeywordHit",
    "Match",
    "QueryService",
    "Ranking",
]
