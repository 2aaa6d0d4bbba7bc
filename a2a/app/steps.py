"""The steps around a method call, over its typed result (before the wire exists, which
a2a.rpc makes): which tenant answers is the pipeline's step 4 (a2a.rpc.pipeline); the
tenant stamp is `WireModel.with_tenant`, applied by a2a.app.tenants; the stale mark and
the broad-match mark are here; org-level fan-out is a2a.app.org's."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from a2a.index.staleness import rfc3339, stale_allowed
from a2a.query.matching import is_broad
from a2a.query.results import QueryDecisionsResult
from a2a.rpc.methods import CallContext, Method
from a2a.similarity.results import FindSimilarDecisionsResult

R = TypeVar("R", QueryDecisionsResult, FindSimilarDecisionsResult)


def with_stale_step(method: Method) -> Method:
    """`method` with the stale mark when it may answer stale (Method.stale), else itself:
    its reads may then be answered from the loaded index while Chroma is away, and its
    result carries `stale.since` (CONTRACT.md, "Availability of reads and the honesty of
    writes"); a fresh answer carries no `stale`."""
    if not method.stale:
        return method
    handler = method.handler

    async def marked(params: Any, ctx: CallContext) -> Any:
        with stale_allowed() as mark:
            result = await handler(params, ctx)
        return result if mark.since is None else result.with_stale(rfc3339(mark.since))

    return dataclasses.replace(method, handler=marked)


def with_broad_match(result: R, line: float | None) -> R:
    """`result` with `broadMatch: true` when no decision in it lies within `line` (the
    model's topical distance, a2a.query.matching.broad_match_line; None: no line), by the
    one rule `is_broad`; left absent otherwise (CONTRACT.md). Applied once to what a
    source answers, one tenant's or every granted tenant's merged (a2a.app.methods). In a
    list merged by rank, only this service's own distances count: a peer's may come from
    another model, whose line is not ours."""
    own = (
        d.distance
        for d in result.decisions
        if result.merge != "rank" or not isinstance(d.peer, str)
    )
    if is_broad(own, line):
        result.broad_match = True
    return result
