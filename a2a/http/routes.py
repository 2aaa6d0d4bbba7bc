"""HTTP endpoints: POST /cstp (JSON-RPC), /health, /ready, the agent card."""

from __future__ import annotations

import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from a2a.http.agent_card import agent_card
from a2a.http.body import BodyTooLarge, read_capped_body
from a2a.rpc import protocol
from a2a.rpc.methods import CallContext
from a2a.store import EmbeddingModelMismatch, StoreUnavailable


async def rpc(request: Request) -> Response:
    """One JSON-RPC request or batch; 200 with the reply, 204 when nothing is owed, 413."""
    state: Any = request.app.state
    max_bytes = state.settings.max_body_bytes
    try:
        body = await read_capped_body(request, max_bytes)
    except BodyTooLarge:
        error = protocol.failure(
            None, protocol.INVALID_REQUEST, "Request body too large", {"maxBytes": max_bytes}
        )
        return JSONResponse(error, status_code=413)
    ctx = CallContext(agent=_caller(request), request_id=_request_id(request))
    reply = await state.dispatcher.dispatch(body, ctx)
    if reply.body is None:
        return Response(status_code=204)
    return JSONResponse(reply.body)


async def health(request: Request) -> Response:
    """Liveness: the process answers. Never touches Chroma."""
    return JSONResponse({"status": "ok"})


async def ready(request: Request) -> Response:
    """Readiness: 200 when Chroma answers with the right embedding model, else 503 and why."""
    store = request.app.state.store
    try:
        await store.check()
    except (StoreUnavailable, EmbeddingModelMismatch) as exc:
        return JSONResponse({"status": "unavailable", "reason": str(exc)}, status_code=503)
    return JSONResponse({"status": "ready", "store": store.sync.location})


async def card(request: Request) -> Response:
    """The A2A Agent Card, with the endpoint URL as this client reached the service."""
    base_url = str(request.base_url).rstrip("/")
    return JSONResponse(agent_card(base_url, request.app.state.settings.agent_id))


def _caller(request: Request) -> str:
    # Until bearer tokens are configured, each client address is its own agent.
    return request.client.host if request.client else "unknown"


def _request_id(request: Request) -> str:
    return request.headers.get("x-request-id") or uuid.uuid4().hex
