"""The tenants a replica serves: one method table per tenant, built on first use, and the
loaded indexes evicted least recently used first past a memory budget (CONTRACT.md,
Tenants; CSTP_INDEX_MEMORY_MIB).

A tenant's stack (store, search index, services, method table) is small until its index
loads; only the index is evicted. An evicted index loads again at its tenant's next call,
from its snapshot when one is current (a2a.index.snapshot), so no answer depends on what is
loaded: only how long the first call after an eviction takes.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel

from a2a.app.listing import Markers, TenantListing
from a2a.app.sources import TenantSource
from a2a.app.steps import with_stale_step
from a2a.app.union_graphs import UnionGraphs
from a2a.concurrency import Lane
from a2a.decisions.service import DecisionService
from a2a.errors import Saturated, StoreUnavailable
from a2a.index.staleness import chroma_known_down, mark_chroma_down, may_answer_stale
from a2a.index.sync import LiveIndex
from a2a.query.service import QueryService
from a2a.results import Result
from a2a.rpc.methods import CallContext, Handler, Method, NoParams, method
from a2a.similarity.service import SimilarityService
from a2a.store.async_store import AsyncStore
from a2a.tenants.grants import Grant
from a2a.tenants.names import DEFAULT_TENANT, EVERY_TENANT

log = logging.getLogger(__name__)

#: Tenant stacks a replica keeps at most: past it the least recently used idle ones are
#: dropped whole (built again at their next call), so that calls naming ever new tenants
#: (a `*` token reading names that do not exist) cannot grow the replica without bound.
MAX_STACKS = 1024


@dataclass(frozen=True, slots=True)
class Services:
    """The store and services of one tenant (org-level calls combine them, a2a.app.org)."""

    store: AsyncStore
    query: QueryService
    similar: SimilarityService
    decisions: DecisionService

    @property
    def source(self) -> TenantSource:
        """The tenant's answers (a2a.app.sources)."""
        return TenantSource(self.query, self.similar)


@dataclass(eq=False)
class TenantStack:
    """One tenant's parts: its method table (the handlers close over its services), its
    search index, and the services org-level calls combine."""

    name: str
    methods: dict[str, Method]
    index: LiveIndex
    services: Services
    #: Calls of this tenant being answered now (its index is never evicted under them).
    in_flight: int = 0
    #: The eviction of its index under way, which the next call waits for.
    unloading: asyncio.Task[None] | None = field(default=None, repr=False)


class EvictionCounter(Protocol):
    """Told of each evicted index and of the number loaded (a2a.observability.metrics)."""

    def tenant_evicted(self) -> None: ...

    def tenants_loaded(self, count: int) -> None: ...


class Tenants:
    """Tenant name -> its method table; the TenantRouter of a2a.rpc.pipeline.

    `build(name)` makes a tenant's stack (no I/O: its index loads at the first call).
    `base` serves what belongs to no tenant (rpc.discover, cstp.searchDocs,
    cstp.listTenants) and `org` the methods of `tenant: "*"`. `existing()` lists the
    tenants that exist in Chroma, each with its change marker when the listing read it
    (ChromaDecisionStore.collection_markers; blocking work is the caller's to run off the
    loop, by the call's deadline), through a2a.app.listing.TenantListing (skipped while
    Chroma is known down).
    `memory_budget` (bytes, None: no limit): after each call, the least recently used
    loaded indexes with no call in flight are evicted until the loaded ones fit (the most
    recently used one stays, even alone over the budget).
    `load_wait_seconds`: how long a call waits for its tenant's index to load before it is
    answered -32005 (Saturated; the load goes on). The default tenant's calls wait for it
    as they did before tenants (/ready says "warming" meanwhile).
    `background`: the lane org-level search's union graphs are built on (UnionGraphs).
    """

    def __init__(
        self,
        build: Callable[[str], TenantStack],
        base: Mapping[str, Method],
        existing: Callable[[], Awaitable[Markers]],
        *,
        memory_budget: int | None = None,
        metrics: EvictionCounter | None = None,
        load_wait_seconds: float | None = None,
        max_stacks: int = MAX_STACKS,
        background: Lane | None = None,
    ) -> None:
        self._build = build
        self._base = base
        self._listing = TenantListing(existing)
        self._budget = memory_budget
        self._metrics = metrics
        self._load_wait = load_wait_seconds
        #: Stacks kept at most (a2a.app.tenants.MAX_STACKS).
        self.max_stacks = max_stacks
        self._stacks: OrderedDict[str, TenantStack] = OrderedDict()
        self._dropping: set[asyncio.Task[None]] = set()
        self.org: dict[str, Method] = {}
        #: Org-level search's graphs over several tenants (counted in the budget).
        self.unions = UnionGraphs(memory_budget=memory_budget, lane=background)

    # -- the router --------------------------------------------------------------------

    def method(self, name: str, tenant: str) -> Method:
        """The method `name` as served for `tenant` ("*": every granted tenant)."""
        if tenant == EVERY_TENANT:
            return self.org[name]
        stack = self.stack(tenant)
        return stack.methods.get(name) or self._base[name]

    def stack(self, tenant: str) -> TenantStack:
        """The stack of `tenant`, built now if this replica has not served it yet."""
        stack = self._stacks.get(tenant)
        if stack is None:
            stack = self._stacks[tenant] = self._counted(self._build(tenant))
        return stack

    def loaded(self) -> list[str]:
        """The tenants whose index is loaded in this replica, least recently used first."""
        return [
            name
            for name, s in self._stacks.items()
            if s.index.status == "ready" and s.unloading is None
        ]

    async def existing(self, grant: Grant) -> list[str]:
        """The tenants in Chroma that `grant` allows, sorted by name (see `markers`)."""
        return list(await self.markers(grant))

    async def markers(self, grant: Grant) -> dict[str, str | None]:
        """The tenants in Chroma that `grant` allows, sorted by name, each with its change
        marker as the listing read it (None: not read; LiveIndex.current's `marker`).

        While Chroma cannot be read, inside a2a.index.staleness.stale_allowed(): the
        tenants of `_stale` (the call marked stale, and marked as having found Chroma down),
        else StoreUnavailable. Once a listing failed, such calls skip the listing while any
        tenant can answer stale (TenantListing: one deadline for the first call, none for
        the next ones).
        """
        if self._listing.down and may_answer_stale():
            found = self._stale(grant)
            if found:
                self._listing.probe()
                return found
        try:
            listed = await self._listing()
        except StoreUnavailable:
            found = self._stale(grant)
            if not found:
                raise
            return found
        return {name: marker for name, marker in sorted(listed.items()) if grant.allows(name)}

    def _stale(self, grant: Grant) -> dict[str, str | None]:
        """The tenants `grant` allows whose loaded index may answer stale now, sorted by
        name, each marked (LiveIndex.stale_read: the call's `since` is their last successful
        check), no marker: only tenants that exist in Chroma (LiveIndex.holds_collection;
        the default tenant loaded at start need not). Inside stale_allowed() the call is
        marked as having found Chroma down (their indexes are not checked again)."""
        names = [
            name
            for name in sorted(self.loaded())
            if grant.allows(name)
            and self._stacks[name].index.holds_collection
            and self._stacks[name].index.stale_read()
        ]
        if names:
            mark_chroma_down()
        return dict.fromkeys(names)

    async def count(self, tenant: str) -> int:
        """How many decisions `tenant` holds: embedded, what its index or snapshot at
        Chroma's marker holds (LiveIndex.known_count: embedded Chroma keeps each collection
        it counts in memory for good); else Chroma's count, or inside stale_allowed() while
        Chroma cannot be read, its loaded index's (the call marked stale)."""
        stack = self.stack(tenant)
        if chroma_known_down() and stack.index.stale_read():
            return stack.index.index.alive_count
        try:
            # Within the call's deadline: reading the marker may be a Chroma call.
            known = await stack.services.store.call(stack.index.known_count)
            if known is not None:
                return known
            return await stack.services.store.count()
        except StoreUnavailable:
            if not stack.index.stale_read():
                raise
            return stack.index.index.alive_count

    async def stop(self) -> None:
        """Stop every tenant's index loading (the app's shutdown)."""
        await asyncio.gather(*self._dropping, return_exceptions=True)
        await self._listing.stop()
        await self.unions.stop()
        for stack in list(self._stacks.values()):
            await stack.index.stop()

    # -- memory ------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def using(self, stack: TenantStack) -> AsyncIterator[None]:
        """A call of `stack`'s tenant for the block: after any eviction of its index under
        way, counted in flight (its index is not evicted under it), marked most recently
        used; then whatever the budget no longer holds is evicted."""
        # Counted first: an index with a call in flight is never evicted, also while the
        # call waits for it to load (reported: an eviction under a waiting call answered it
        # from an emptied index).
        stack.in_flight += 1
        try:
            self._stacks.move_to_end(stack.name)
            await self._ready(stack)
            yield
        finally:
            stack.in_flight -= 1
            self.evict()

    @contextlib.asynccontextmanager
    async def using_all(self, stacks: list[TenantStack]) -> AsyncIterator[None]:
        """`using` each of `stacks` for the block (an org-level call), evicting once after
        it rather than once per tenant."""
        for stack in stacks:
            stack.in_flight += 1
        try:
            for stack in stacks:
                self._stacks.move_to_end(stack.name)
            for stack in stacks:
                await self._ready(stack)
            yield
        finally:
            for stack in stacks:
                stack.in_flight -= 1
            self.evict()

    async def _ready(self, stack: TenantStack) -> None:
        """After any eviction of `stack`'s index under way, its load waited for (within
        the load wait; else Saturated), as a call of its tenant does."""
        if stack.unloading is not None:
            await asyncio.shield(stack.unloading)
        if self._load_wait is not None and stack.name != DEFAULT_TENANT:
            await stack.index.settle(self._load_wait)
            stack.index.raise_fault()  # a load that cannot succeed (another model) says why
            if stack.index.status in ("warming", "evicted"):
                raise Saturated(math.ceil(self._load_wait))

    def _counted(self, stack: TenantStack) -> TenantStack:
        """`stack` with each handler a call `using` it, with the stale mark where the
        method may answer stale, its result stamped with the tenant (WireModel.with_tenant)."""

        def counted(handler: Handler) -> Handler:
            async def call(params: Any, ctx: CallContext) -> Any:
                async with self.using(stack):
                    return (await handler(params, ctx)).with_tenant(stack.name)

            return call

        stack.methods = {
            name: dataclasses.replace(method, handler=counted(with_stale_step(method).handler))
            for name, method in stack.methods.items()
        }
        return stack

    def evict(self) -> None:
        """Evict the least recently used loaded indexes with no call in flight until the
        loaded ones fit the budget (none with no budget), then drop idle stacks past
        `max_stacks`."""
        if self._budget is not None:
            self._evict_indexes(self._budget)
        self._drop_idle()
        if self._metrics is not None:
            self._metrics.tenants_loaded(len(self.loaded()))

    def _evict_indexes(self, budget: int) -> None:
        loaded = [self._stacks[name] for name in self.loaded()]
        total = sum(s.index.memory_bytes() for s in loaded) + self.unions.nbytes
        # The most recently used stays, even alone over the budget: evicting the tenant
        # every call is for would reload it at each one.
        for stack in loaded[:-1]:
            if total <= budget:
                break
            if stack.in_flight:
                continue
            total -= stack.index.memory_bytes() + self.unions.drop(stack.name)
            stack.unloading = asyncio.get_running_loop().create_task(self._unload(stack))

    def _drop_idle(self) -> None:
        """Drop the least recently used idle stacks past `max_stacks` (never the default
        tenant's, nor one with a call in flight or an eviction under way)."""
        excess = len(self._stacks) - self.max_stacks
        if excess <= 0:
            return
        for stack in list(self._stacks.values()):
            if excess <= 0:
                break
            if stack.in_flight or stack.unloading is not None or stack.name == DEFAULT_TENANT:
                continue
            del self._stacks[stack.name]
            self.unions.drop(stack.name)
            task = asyncio.get_running_loop().create_task(stack.index.unload())
            self._dropping.add(task)
            task.add_done_callback(self._dropping.discard)
            excess -= 1

    def __len__(self) -> int:
        return len(self._stacks)

    async def _unload(self, stack: TenantStack) -> None:
        started = time.perf_counter()
        try:
            await stack.index.unload()
        except Exception:  # our bug (a snapshot write): logged; the calls waiting go on
            log.exception("tenant index eviction failed: %s", stack.name)
        finally:
            stack.unloading = None
        if self._metrics is not None:
            self._metrics.tenant_evicted()
            self._metrics.tenants_loaded(len(self.loaded()))
        log.info("tenant index evicted: %s in %.2f s", stack.name, time.perf_counter() - started)


class TenantCount(BaseModel):
    """One tenant of cstp.listTenants: its name and how many decisions it holds."""

    name: str
    decisions: int


class ListTenantsResult(Result):
    """cstp.listTenants: the granted tenants that exist, sorted by name."""

    tenants: list[TenantCount]


def list_tenants_method(tenants: Tenants) -> Method:
    """cstp.listTenants (scope read, no params, no `tenant`; CONTRACT.md, Tenants)."""

    @method(
        "cstp.listTenants",
        NoParams,
        ListTenantsResult,
        examples=({},),
        tenancy="none",
        stale=True,
    )
    async def list_tenants(params: NoParams, ctx: CallContext) -> ListTenantsResult:
        """List the tenants this token may use that hold decisions.

        Use it to choose a `tenant` for the other tools. Returns `tenants`, sorted by name,
        each with its `name` and how many `decisions` it holds.
        """
        names = await tenants.existing(ctx.tenants)
        counts = await asyncio.gather(*(tenants.count(n) for n in names))
        found = [TenantCount(name=n, decisions=c) for n, c in zip(names, counts, strict=True)]
        return ListTenantsResult(tenants=found)

    return list_tenants
