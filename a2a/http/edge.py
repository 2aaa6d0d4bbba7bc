"""The edge both JSON-RPC doors (/cstp and /mcp) run a request through: the body read
within its cap and deadline (413, 408: CONTRACT.md section Transport), the caller's call
context, and each outcome recorded once in the metrics and the access log, refusals
included."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Scope

from a2a.auth.caller import caller_of
from a2a.errors import BodyTimeout, BodyTooLarge
from a2a.http.body import read_capped_body, timed_out, too_large
from a2a.observability.calls import CallLog
from a2a.observability.middleware import elapsed, request_id_of
from a2a.rpc import protocol
from a2a.rpc.errors import ErrorObject
from a2a.rpc.methods import CallContext
from a2a.rpc.pipeline import Outcome
from a2a.settings import Settings

Door = Literal["cstp", "mcp"]


def call_context(scope: Scope) -> CallContext:
    """Who is calling (a2a.http.identify.Identify found it), the request id, and whether
    a peer service sent the call (`CSTP-Federated: 1`; CONTRACT.md, Federation)."""
    caller = caller_of(scope)
    federated = (b"cstp-federated", b"1") in scope.get("headers", ())
    return CallContext(caller.agent, request_id_of(scope), caller.scopes, caller.tenants, federated)


def record(
    calls: CallLog, scope: Scope, outcomes: Sequence[Outcome], door: Door, status: int
) -> None:
    """Count and log `outcomes` of one HTTP request answered with `status`."""
    calls.record(
        list(outcomes),
        door=door,
        agent=caller_of(scope).agent,
        request_id=request_id_of(scope),
        status=status,
        seconds=elapsed(scope),
    )


async def read_body(
    request: Request, settings: Settings, calls: CallLog, door: Door
) -> bytes | Response:
    """The request body, or the response that refuses it: 413 over CSTP_MAX_BODY_BYTES, 408
    past CSTP_BODY_TIMEOUT_SECONDS (each recorded as a -32600 outcome), 400 when the client
    went away mid-body (nobody to answer: not recorded)."""
    try:
        return await read_capped_body(
            request, settings.max_body_bytes, settings.body_timeout_seconds
        )
    except ClientDisconnect:
        return Response(status_code=400)
    except BodyTooLarge:
        refusal = too_large(settings.max_body_bytes)
    except BodyTimeout:
        refusal = timed_out(settings.body_timeout_seconds)
    error = ErrorObject(protocol.INVALID_REQUEST, "Invalid Request")
    record(calls, request.scope, [Outcome(None, error=error)], door, refusal.status_code)
    return refusal
