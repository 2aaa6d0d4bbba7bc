"""Org-level calls: `tenant: "*"` on queryDecisions, findSimilarDecisions and
getCalibration covers every granted tenant that exists (CONTRACT.md, Tenants).

Each tenant answers the call as it would alone (the query embedded once for all); the
answers are ranked as one list: by recency score with recencyHalfLifeDays (as one tenant
ranks them, a2a.query.recency), else by `score` (higher first) in keyword and hybrid modes
and for similarity, else by `distance` (lower first); ties by tenant, then id. Calibration is
computed once over the scored decisions of every tenant together.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import dataclasses
import functools
import os
import time
from collections.abc import Awaitable, Iterator
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from a2a.app.federated import Federation
from a2a.app.methods import answer_methods
from a2a.app.steps import with_stale_step
from a2a.app.tenants import Tenants, TenantStack
from a2a.app.union_graphs import UnionGraphs
from a2a.concurrency import Lane
from a2a.decisions.params import GetCalibrationParams
from a2a.decisions.results import CalibrationResult
from a2a.decisions.service import calibration_of
from a2a.errors import FieldError, InvalidParams
from a2a.index import SearchIndex
from a2a.index.union_graph import UnionGraph
from a2a.query.matching import category_note
from a2a.query.params import QueryDecisionsParams, RetrievalMode
from a2a.query.recency import recency_key
from a2a.query.results import DecisionSummary, Hits, QueryDecisionsResult
from a2a.query.service import QueryService, Ranking
from a2a.rpc.methods import CallContext, Method
from a2a.similarity.params import FindSimilarDecisionsParams
from a2a.similarity.results import FindSimilarDecisionsResult, SimilarDecision
from a2a.tenants.names import DEFAULT_TENANT

#: A decision of an org-level list (a query's summary or a similar decision).
S = TypeVar("S", DecisionSummary, SimilarDecision)
T = TypeVar("T")

#: Worker calls an org-level query splits its tenants into, run in parallel: two where the
#: machine has two cores (one: every tenant in one call, one thread hop).
ORG_CALLS = min(2, os.cpu_count() or 1)


class OrgSearchCounter(Protocol):
    """Told how each org-level query searched (a2a.observability.metrics)."""

    def org_searched(self, path: str) -> None: ...


def org_methods(
    tenants: Tenants,
    base: dict[str, Method],
    agent_id: str,
    metrics: OrgSearchCounter | None = None,
    broad_match_line: float | None = None,
    federation: Federation | None = None,
) -> dict[str, Method]:
    """The `tenant: "*"` form of each org-level method `base` serves (same params model,
    schema and errors; answered by an OrgSource, with the peers a call names:
    `federation`), with the stale mark and the broad-match mark over the merged list
    (`broad_match_line`, a2a.app.methods.answer_methods)."""
    source = OrgSource(tenants, agent_id, metrics)
    served = answer_methods(source, broad_match_line, federation)
    if "cstp.getCalibration" in base:
        calibration = base["cstp.getCalibration"]
        served[calibration.name] = dataclasses.replace(calibration, handler=source.calibration)
    return {name: with_stale_step(m) for name, m in served.items() if name in base}


class OrgSource:
    """The answers of every granted tenant that exists, ranked as one list (the module
    docstring): the AnswerSource of `tenant: "*"` (a2a.app.sources). `metrics` counts the
    queries by path: `union` (one walk of the tenants' union graph) or `tenants` (each
    tenant's own search)."""

    def __init__(
        self, tenants: Tenants, agent_id: str, metrics: OrgSearchCounter | None = None
    ) -> None:
        self._tenants = tenants
        self._agent = agent_id
        self._metrics = metrics

    async def query(self, params: QueryDecisionsParams, ctx: CallContext) -> QueryDecisionsResult:
        """cstp.queryDecisions over the granted tenants, the query embedded once for all."""
        tenants, started = self._tenants, time.perf_counter()
        # One listing of Chroma's collections names the tenants and reads each one's change
        # marker (a tenant whose index is at its marker needs no check of its own); the
        # query is embedded (once for all, by any tenant's service) while it is under way.
        query = tenants.stack(DEFAULT_TENANT).services.query
        markers, vector = await asyncio.gather(
            tenants.markers(ctx.tenants), query.vector_of(params)
        )
        chosen = [tenants.stack(name) for name in markers]
        if not chosen:
            return _query_result(params, [], None, self._agent, started)
        workers = chosen[0].services.store.workers
        async with tenants.using_all(chosen):
            indexes = await asyncio.gather(
                *(s.services.query.index(markers[s.name]) for s in chosen)
            )
            pairs = list(zip(chosen, indexes, strict=True))
            ranked, path = await _searched(tenants.unions, pairs, params, vector, query, workers)
            if self._metrics is not None:
                self._metrics.org_searched(path)
            category = params.filters.category if params.filters is not None else None
            known = _categories(indexes) if category is not None and not ranked else None
        ranked = _ranked(ranked, params.recency_half_life_days)[: params.limit]
        note = None
        if category is not None and known is not None and category not in known:
            # No granted tenant has the category: the note names the closest of them all.
            note = category_note(category, known)
        return _query_result(params, ranked, note, self._agent, started)

    async def find_similar(
        self, params: FindSimilarDecisionsParams, ctx: CallContext
    ) -> FindSimilarDecisionsResult:
        """cstp.findSimilarDecisions over the granted tenants: each tenant's source asked
        for a proposal's neighbours. Raises InvalidParams for a `decisionId` (an id names a
        decision of one tenant)."""
        if params.decision_id is not None:
            raise InvalidParams(
                [
                    FieldError(
                        "decisionId",
                        'an id names a decision of one tenant: with tenant "*", send a proposal',
                    )
                ]
            )
        started = time.perf_counter()
        chosen = await self._stacks(ctx)
        answers = await asyncio.gather(
            *(self._in(s, s.services.source.find_similar(params, ctx)) for s in chosen)
        )
        found: list[SimilarDecision] = []
        reason = None
        for stack, answer in zip(chosen, answers, strict=True):
            found += answer.with_tenant(stack.name).decisions
            reason = reason or answer.reason
        ranked = _ranked(found)[: params.limit]
        return FindSimilarDecisionsResult(
            decisions=ranked,
            total=len(ranked),
            query_time_ms=round((time.perf_counter() - started) * 1000),
            agent=self._agent,
            reason=reason,
        )

    async def calibration(
        self, params: GetCalibrationParams, ctx: CallContext
    ) -> CalibrationResult:
        """cstp.getCalibration computed once over the scored decisions of every tenant."""
        chosen = await self._stacks(ctx)
        parts = await asyncio.gather(
            *(self._in(s, s.services.decisions.scored(params)) for s in chosen)
        )
        return calibration_of(list(parts), params.bins)

    async def _stacks(self, ctx: CallContext) -> list[TenantStack]:
        names = await self._tenants.existing(ctx.tenants)
        return [self._tenants.stack(name) for name in names]

    async def _in(self, stack: TenantStack, work: Awaitable[T]) -> T:
        """`work` (an awaitable of `stack`'s services), counted as a call of that tenant."""
        async with self._tenants.using(stack):
            return await work


async def _searched(
    unions: UnionGraphs,
    pairs: list[tuple[TenantStack, SearchIndex]],
    params: QueryDecisionsParams,
    vector: npt.NDArray[np.float32],
    query: QueryService,
    workers: Lane,
) -> tuple[list[DecisionSummary], str]:
    """The hits of every tenant of `pairs` that may make the org list (`_answers`), and
    how they were searched: `union` (one walk of their union graph, when one covers them
    and the call may take it, `_walks_union`) or `tenants` (each tenant's own search).
    `query`: the service whose mode and event-loop policy the call follows."""
    mode = query.mode(params)
    union = None
    if _walks_union(params, mode):
        union = unions.get(tuple(stack.name for stack, _ in pairs), [i for _, i in pairs])
    if union is not None:
        indexes = [index for _, index in pairs]
        found, answered = None, False
        # On the event loop when a query of its work would be (one walk: a 100k store's
        # query is), and no writer holds a tenant's index; else in a worker.
        with query.on_loop(union.work(indexes)) as here:
            if here:
                with _reading_all(indexes, wait=False) as locked:
                    if locked:
                        found, answered = _union_answers(union, pairs, params, vector), True
        if not answered:

            def waiting() -> list[DecisionSummary] | None:  # in a worker: locks waited for
                with _reading_all(indexes, wait=True):
                    return _union_answers(union, pairs, params, vector)

            found = await workers.run(waiting)
        if found is not None:
            return found, "union"
    # The tenants' searches in ORG_CALLS worker calls run side by side (a walk and a scan
    # release the GIL), each answering its share of the tenants in turn.
    shares = [pairs[n::ORG_CALLS] for n in range(min(ORG_CALLS, len(pairs)))]
    parts = await asyncio.gather(
        *(workers.run(functools.partial(_answers, share, params, vector)) for share in shares)
    )
    return [decision for part in parts for decision in part], "tenants"


def _answers(
    share: list[tuple[TenantStack, SearchIndex]],
    params: QueryDecisionsParams,
    vector: npt.NDArray[np.float32],
) -> list[DecisionSummary]:
    """The hits of `params` in each tenant of `share` (blocking: a worker's), in turn, as
    summaries naming their tenant.

    What a hit shows is read only for the hits that can still make the first
    `params.limit` of the share, ranked as `_ranked` ranks them (the hits before them in the
    share do not push them out): a superset of the share's part of the org list, at ~30%
    of the reads for ten tenants. With recencyHalfLifeDays (ranked by what hits show)
    every tenant's hits are read whole.
    """
    found: list[DecisionSummary] = []
    if params.recency_half_life_days is not None:
        for stack, index in share:
            hits = stack.services.query.hits(index, params, vector)
            found += _stamped(hits, stack.name)
        return found
    best: list[tuple[Any, ...]] = []  # the keys of the first `limit` so far, ascending
    for stack, index in share:
        with index.reading():
            ranking = stack.services.query.ranking(index, params, vector)
            assert ranking is not None
            found += _kept(stack.name, index, ranking, params, best)
    return found


def _walks_union(params: QueryDecisionsParams, mode: RetrievalMode) -> bool:
    """Whether an org-level query may take its semantic candidates from a union graph:
    semantic mode, not exact, not ranked by recency (hybrid fuses each tenant's own
    semantic list, as that tenant answers alone)."""
    return mode == "semantic" and not params.exact and params.recency_half_life_days is None


def _union_answers(
    union: UnionGraph,
    pairs: list[tuple[TenantStack, SearchIndex]],
    params: QueryDecisionsParams,
    vector: npt.NDArray[np.float32],
) -> list[DecisionSummary] | None:
    """`_answers` of every tenant of `pairs` from one walk of `union`, under every
    tenant's read lock (`_reading_all`: the walk numbers all their rows); None when the
    union's planner scans instead (then `_answers`)."""
    indexes = [index for _, index in pairs]
    masks = [index.selection(params.filters)[0] for index in indexes]
    proposed = union.candidates(vector, indexes, masks, params.limit)
    if proposed is None:
        return None
    found: list[DecisionSummary] = []
    best: list[tuple[Any, ...]] = []
    for (stack, index), rows in zip(pairs, proposed, strict=True):
        ranking = stack.services.query.ranking(index, params, vector, rows)
        assert ranking is not None
        found += _kept(stack.name, index, ranking, params, best)
    return found


@contextlib.contextmanager
def _reading_all(indexes: list[SearchIndex], wait: bool) -> Iterator[bool]:
    """Every index's read lock for the block; with `wait` false none is waited for (on
    the event loop): the block then gets False, holding none, when a writer holds or waits
    for one of them."""
    with contextlib.ExitStack() as held:
        for index in indexes:
            if wait:
                held.enter_context(index.reading())
            elif index.lock.try_reading():
                held.callback(index.lock.stop_reading)
            else:
                held.close()
                yield False
                return
        yield True


def _kept(
    tenant: str,
    index: SearchIndex,
    ranking: Ranking,
    params: QueryDecisionsParams,
    best: list[tuple[Any, ...]],
) -> list[DecisionSummary]:
    """The hits of `ranking` (of `tenant`'s `index`, under its read lock) that can still
    make the first `params.limit` after those `best` holds (their keys, ascending; updated),
    as summaries naming `tenant`."""
    kept = []
    # As `_ranked`: by score when every hit has one (keyword, hybrid), else by distance.
    scores = ranking.scores or []
    known = [score for score in scores if score is not None]
    firsts = [-score for score in known] if len(known) == len(ranking.rows) else None
    for n, row in enumerate(ranking.rows):
        first = ranking.distances[n] if firsts is None else firsts[n]
        key = (first, tenant, index.id_of(row))
        if len(best) < params.limit or key < best[-1]:
            bisect.insort(best, key)
            del best[params.limit :]
            kept.append(n)
    return _stamped(ranking.only(kept).hits(index, params), tenant)


def _stamped(hits: Hits, tenant: str) -> list[DecisionSummary]:
    """`hits` as summaries, each naming `tenant`."""
    return [summary.with_tenant(tenant) for summary in hits.summaries()]


def _categories(indexes: list[SearchIndex]) -> list[str]:
    """Every category stored in `indexes`, sorted."""
    found: set[str] = set()
    for index in indexes:
        with index.reading():
            found.update(index.values_of("category"))
    return sorted(found)


def _ranked(decisions: list[S], half_life_days: float | None = None) -> list[S]:
    """One list from several tenants' (module docstring): by recency score with
    `half_life_days`, else by score when every hit has one, else by distance; ties by
    tenant, then id."""
    if half_life_days is not None:
        now: float = time.time()
        half_life: float = half_life_days
        return sorted(
            decisions,
            key=lambda d: (
                *recency_key(d.date, d.distance or 0.0, now, half_life),
                d.tenant or "",
                d.id,
            ),
        )
    scores: list[float | None] = [getattr(d, "score", None) for d in decisions]
    if decisions and all(score is not None for score in scores):
        keyed = zip(decisions, scores, strict=True)
        ranked = sorted(
            keyed, key=lambda pair: (-(pair[1] or 0.0), pair[0].tenant or "", pair[0].id)
        )
        return [decision for decision, _ in ranked]
    return sorted(decisions, key=lambda d: (d.distance or 0.0, d.tenant or "", d.id))


def _query_result(
    params: QueryDecisionsParams,
    ranked: list[DecisionSummary],
    note: str | None,
    agent: str,
    started: float,
) -> QueryDecisionsResult:
    """The org-level answer: `ranked` (the first `limit`), the query, server time since
    `started` (perf_counter seconds) in ms, the agent id, the note when one is due."""
    return QueryDecisionsResult(
        decisions=ranked,
        total=len(ranked),
        query=params.query,
        query_time_ms=round((time.perf_counter() - started) * 1000),
        agent=agent,
        note=note,
    )
