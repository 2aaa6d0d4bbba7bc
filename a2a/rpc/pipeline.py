"""The one call pipeline every door (/cstp, /mcp) runs a call through.

`Pipeline.call(method, params, ctx) -> Outcome` runs the steps after the envelope, in the
order of CONTRACT.md section Rate limiting, each with one error code: admission (-32002) ->
method (-32601) -> scope (-32004) -> tenant (-32602, -32004; CONTRACT.md section Tenants) ->
params (-32602) -> call. Every call counts against the
caller's limits, whatever its method or params, so a client looping on bad calls is
throttled like any other. Metrics, the access log and the rate-limit headers read the
Outcome; nothing is passed around it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from a2a.auth.scopes import allows
from a2a.errors import MethodNotFound, MissingScope, RateLimited
from a2a.rpc.errors import ErrorObject, to_error_object
from a2a.rpc.methods import CallContext, Method
from a2a.rpc.protocol import to_wire
from a2a.rpc.quota import Quota
from a2a.store.deadlines import call_deadline
from a2a.tenants.param import take_tenant


class Admission(Protocol):
    """Decides whether a call may run now (rate limits).

    Returns the quota of each limit the call was counted against, counted `cost` times;
    raises RateLimited (carrying them) when a limit refuses it.
    """

    async def admit(self, method: str, ctx: CallContext, cost: int = 1) -> Sequence[Quota]: ...


class TenantRouter(Protocol):
    """The method a call runs once its tenant is known (a2a.tenants.registry.Tenants)."""

    def method(self, name: str, tenant: str) -> Method:
        """The method `name` as served for `tenant`, or for every granted tenant ("*")."""
        ...


class AdmitAll:
    """No limits."""

    async def admit(self, method: str, ctx: CallContext, cost: int = 1) -> Sequence[Quota]:
        return ()


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened to one call.

    `method` as the client named it (None when the envelope was unreadable); `result` the
    method's value when `error` is None; `quotas` the limits the call was counted against.
    """

    method: str | None
    result: Any = None
    error: ErrorObject | None = None
    quotas: tuple[Quota, ...] = ()

    @property
    def code(self) -> int | None:
        """The error code, None for a success."""
        return None if self.error is None else self.error.code

    @property
    def retry_after(self) -> int | None:
        """`data.retryAfter` (seconds) of a -32002 or -32005 error, else None."""
        data = None if self.error is None else self.error.data
        value = data.get("retryAfter") if isinstance(data, dict) else None
        return value if isinstance(value, int) else None


class Pipeline:
    """Runs one call against a method table, behind the caller's limits."""

    def __init__(
        self,
        methods: Mapping[str, Method],
        admission: Admission | None = None,
        tenants: TenantRouter | None = None,
    ) -> None:
        """`methods`: the table calls are checked against; `tenants`: where a call that
        names a tenant runs (None: every call runs in `methods`, and `tenant` is taken
        out of its params unchecked against any store)."""
        self.methods = methods
        self._admission = admission or AdmitAll()
        self._tenants = tenants

    def serving(self, methods: Mapping[str, Method]) -> Pipeline:
        """The same pipeline, behind the same limits, over another table (a door's subset)."""
        return Pipeline(methods, self._admission, self._tenants)

    async def count(self, method: str, ctx: CallContext) -> Outcome:
        """Count a request that is not a method call (an MCP `tools/list`, `ping`,
        `initialize`) against the caller's limits: an Outcome with the quotas, and the
        -32002 error when a limit refuses it."""
        try:
            quotas = await self._admission.admit(method, ctx)
        except RateLimited as exc:
            return Outcome(method, error=to_error_object(exc), quotas=tuple(exc.quotas))
        return Outcome(method, quotas=tuple(quotas))

    async def call(
        self, method: str, params: dict[str, Any] | list[Any] | None, ctx: CallContext
    ) -> Outcome:
        """The Outcome of calling `method` with `params` as `ctx`'s caller; never raises
        for a caller's mistake, a limit, a store failure or a fault of ours."""
        quotas: Sequence[Quota] = ()
        try:
            # Step 1: admission (-32002), before any other work is done for the call; a
            # call counts as its method weighs it (1 + the peers it asks).
            served = self.methods.get(method)
            cost = 1 if served is None else served.weight(params)
            try:
                quotas = await self._admission.admit(method, ctx, cost)
            except RateLimited as exc:
                quotas = exc.quotas
                raise
            # Step 2: method (-32601), case-sensitive.
            if served is None:
                raise MethodNotFound(method)
            # Step 3: scope (-32004).
            if not allows(ctx.scopes, served.scope):
                raise MissingScope(served.scope)
            # Step 4: tenant (-32602, -32004), before the method's own params.
            tenant, params = take_tenant(params, served.tenancy, ctx.tenants)
            if tenant and self._tenants is not None:
                served = self._tenants.method(method, tenant)
            # Step 5: params (-32602).
            valid = served.validate(params)
            # Step 6: the call itself, its waits on Chroma by one deadline (a2a.store.deadlines).
            with call_deadline():
                result = to_wire(await served.handler(valid, ctx))
        except Exception as exc:
            return Outcome(method, error=to_error_object(exc), quotas=tuple(quotas))
        return Outcome(method, result=result, quotas=tuple(quotas))
