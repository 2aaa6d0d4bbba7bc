"""The steps around a method call, over its typed result (before the wire exists, which
a2a.rpc makes): the stale mark and the tenant stamp. Which tenant answers is the
pipeline's step 4 (a2a.rpc.pipeline); org-level fan-out is a2a.app.org's."""

from __future__ import annotations

import dataclasses
from typing import Any

from a2a.index.staleness import rfc3339, stale_allowed
from a2a.results import WireModel
from a2a.rpc.methods import CallContext, Handler, Method


def stale_marked(handler: Handler) -> Handler:
    """The stale mark: `handler`'s reads may be answered from the loaded index while Chroma
    is away, and its result then carries `stale.since` (CONTRACT.md, "Availability of reads
    and the honesty of writes"); a fresh answer carries no `stale`."""

    async def marked(params: Any, ctx: CallContext) -> Any:
        with stale_allowed() as mark:
            result = await handler(params, ctx)
        return result if mark.since is None else result.with_stale(rfc3339(mark.since))

    return marked


def with_stale_step(method: Method) -> Method:
    """`method` with the stale mark when it may answer stale (Method.stale), else itself."""
    if not method.stale:
        return method
    return dataclasses.replace(method, handler=stale_marked(method.handler))


def stamped(result: Any, tenant: str) -> Any:
    """The tenant stamp: `result` with `tenant` on each decision it carries (CONTRACT.md,
    Tenants: every summary carries its tenant; WireModel.with_tenant)."""
    return result.with_tenant(tenant) if isinstance(result, WireModel) else result
