"""HTTP endpoints: POST /cstp (JSON-RPC), /health, /ready, /metrics, the agent card."""

from __future__ import annotations

import uuid
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from a2a.http.agent_card import agent_card
from a2a.http.body import BodyTooLarge, read_capped_body
from a2a.limits.headers import rate_limit_headers
from a2a.observability.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from a2a.observability.middleware import OUTCOMES_KEY, REQUEST_ID_KEY
from a2a.rpc import protocol
from a2a.rpc.dispatcher import CallOutcome
from a2a.rpc.methods import CallContext
from a2a.store import EmbeddingModelMismatch, StoreUnavailable

#: Longest wait, in seconds, for the decision count when /metrics is scraped.
METRICS_STORE_TIMEOUT_SECONDS = 2.0


async def rpc(request: Request) -> Response:
    """One JSON-RPC request or batch; 200 with the reply, 204 when nothing is owed, 413.

    Auth (401) has already run in `a2a.auth.middleware.BearerAuth` when tokens are
    configured. Each call is counted against the caller's limits; the response carries
    `Retry-After` and `X-RateLimit-*` as `a2a.limits.headers.rate_limit_headers` says.
    """
    state: Any = request.app.state
    max_bytes = state.settings.max_body_bytes
    try:
        body = await read_capped_body(request, max_bytes)
    except ClientDisconnect:
        # The client went away mid-body: nobody to answer, nothing worth a traceback.
        return Response(status_code=400)
    except BodyTooLarge:
        error = protocol.failure(
            None, protocol.INVALID_REQUEST, "Request body too large", {"maxBytes": max_bytes}
        )
        _record_outcomes(request, [CallOutcome(None, protocol.INVALID_REQUEST)])
        return JSONResponse(error, status_code=413)
    ctx = CallContext(agent=_caller(request), request_id=_request_id(request))
    with state.rate_limits.tracking(ctx) as quotas:
        reply = await state.dispatcher.dispatch(body, ctx)
    _record_outcomes(request, reply.outcomes)
    headers = rate_limit_headers(reply, quotas)
    if reply.body is None:
        return Response(status_code=204, headers=headers)
    return JSONResponse(reply.body, headers=headers)


async def health(request: Request) -> Response:
    """Liveness: the process answers. Never touches Chroma."""
    return JSONResponse({"status": "ok"})


async def ready(request: Request) -> Response:
    """Readiness: 200 when Chroma answers with the right embedding model and the search
    index is loaded; else 503 and why (`"warming"` while the index loads)."""
    store = request.app.state.store
    try:
        await store.check()
    except (StoreUnavailable, EmbeddingModelMismatch) as exc:
        return JSONResponse({"status": "unavailable", "reason": str(exc)}, status_code=503)
    index = getattr(request.app.state, "index", None)
    if index is not None and index.status != "ready":
        return JSONResponse({"status": "unavailable", "reason": index.status}, status_code=503)
    return JSONResponse({"status": "ready"})


async def metrics(request: Request) -> Response:
    """Prometheus metrics (text format); the decision count is read now, for at most 2 s."""
    state: Any = request.app.state
    timeout = min(METRICS_STORE_TIMEOUT_SECONDS, state.settings.chroma_timeout_seconds)
    await state.metrics.refresh_store(state.store.count, timeout)
    return Response(state.metrics.exposition(), media_type=METRICS_CONTENT_TYPE)


async def card(request: Request) -> Response:
    """The A2A Agent Card, with the endpoint URL as this client reached the service."""
    base_url = str(request.base_url).rstrip("/")
    state: Any = request.app.state
    return JSONResponse(agent_card(base_url, state.settings.agent_id, state.methods, state.auth_on))


def _caller(request: Request) -> str:
    # The agent BearerAuth found; with auth off, each client address is its own agent.
    agent = getattr(request.state, "agent", None)
    if isinstance(agent, str):
        return agent
    return request.client.host if request.client else "unknown"


def _request_id(request: Request) -> str:
    # Set, validated, by a2a.observability.middleware.RequestObserver, which also echoes it.
    request_id = request.scope.get("state", {}).get(REQUEST_ID_KEY)
    return request_id if isinstance(request_id, str) else uuid.uuid4().hex


def _record_outcomes(request: Request, outcomes: list[CallOutcome]) -> None:
    # RequestObserver counts and logs each call once the response has been sent.
    request.scope.setdefault("state", {})[OUTCOMES_KEY] = outcomes
