"""HTTP endpoints: POST /cstp (JSON-RPC), /health, /ready, /metrics, the agent cards."""

from __future__ import annotations

import logging
from typing import Any

from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response

from a2a.app.service import Service
from a2a.auth.caller import caller_of
from a2a.auth.scopes import allows
from a2a.errors import EmbeddingModelMismatch, Saturated, StoreUnavailable
from a2a.http.agent_card import CARD_SHAPES, card_bytes
from a2a.http.edge import call_context, read_body, record
from a2a.http.identify import missing_scope
from a2a.limits.headers import rate_limit_headers
from a2a.observability.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from a2a.rpc import protocol

log = logging.getLogger(__name__)

#: Longest wait, in seconds, for the decision count when /metrics is scraped.
METRICS_STORE_TIMEOUT_SECONDS = 2.0


async def rpc(request: Request) -> Response:
    """The /cstp door: body (413, 408) -> dispatcher (parse, envelope, batch, pipeline).

    200 with the reply, 204 when nothing is owed. Auth (401) has already run in
    `a2a.http.identify.Identify`. The response carries `Retry-After` and `X-RateLimit-*`
    from the calls' outcomes (`a2a.limits.headers.rate_limit_headers`); the outcomes are
    counted and logged here, once the response is built.
    """
    state = state_of(request)
    body = await read_body(request, state.settings, state.calls, "cstp")
    if isinstance(body, Response):
        return body
    reply = await state.dispatcher.dispatch(body, call_context(request.scope))
    headers = rate_limit_headers(reply.outcomes)
    if reply.body is None:
        response = Response(status_code=204, headers=headers)
    else:
        response = Response(
            protocol.encode(reply.body), headers=headers, media_type="application/json"
        )
    record(state.calls, request.scope, reply.outcomes, "cstp", response.status_code)
    return response


async def health(request: Request) -> Response:
    """Liveness: the process answers. Never touches Chroma."""
    return JSONResponse({"status": "ok"})


async def ready(request: Request) -> Response:
    """Readiness: 200 when Chroma answers with the right embedding model, else 503.

    The 503 says why in a short word (`chroma unreachable`, `model mismatch`, `warming`,
    `saturated`: no worker thread was free to ask Chroma, so send traffic elsewhere); the
    Chroma URL, data path and exception text go to the log only (CONTRACT.md section
    Transport).
    """
    state = state_of(request)
    try:
        await state.store.check()
    except Saturated:
        return _not_ready("saturated")
    except StoreUnavailable as exc:
        log.warning("not ready: %s", exc)
        if state.index.stale_window_open():
            return _not_ready("serving stale")
        return _not_ready("chroma unreachable")
    except EmbeddingModelMismatch as exc:
        log.error("not ready: %s", exc)
        return _not_ready("model mismatch")
    if state.warming():
        return _not_ready("warming")
    return JSONResponse({"status": "ready"})


def _not_ready(reason: str) -> Response:
    return JSONResponse({"status": "unavailable", "reason": reason}, status_code=503)


async def metrics(request: Request) -> Response:
    """Prometheus metrics (text format); the decision count (every tenant's together) is
    read now, for at most 2 s.

    With CSTP_METRICS_OPEN=false a token with scope `admin` (a2a.http.identify.Identify has
    already answered 401 without a known token; a token without `admin` gets 403 -32004,
    CONTRACT.md, Isolation).
    """
    state = state_of(request)
    if not state.settings.metrics_open and not allows(caller_of(request.scope).scopes, "admin"):
        return missing_scope("admin")
    timeout = min(METRICS_STORE_TIMEOUT_SECONDS, state.settings.chroma_timeout_seconds)
    await state.metrics.refresh_store(state.count_decisions, timeout)
    state.metrics.stale_since.set(state.index.stale_since or 0)
    state.metrics.tenants_loaded(len(state.tenants.loaded()))
    return Response(state.metrics.exposition(), media_type=METRICS_CONTENT_TYPE)


async def card(request: Request) -> Response:
    """The A2A Agent Card (current shape at agent-card.json, 0.3 at agent.json).

    Its URLs come from CSTP_PUBLIC_URL, else the address the server socket is bound to:
    never from the request's Host header, since the card is public and cacheable.
    """
    state = state_of(request)
    shape = CARD_SHAPES[request.url.path]
    base_url = public_base_url(state, request)
    key = (base_url, shape)
    cards: dict[tuple[str, str], bytes] = request.app.state.cards
    if key not in cards:
        cards[key] = card_bytes(
            shape,
            base_url,
            state.settings.agent_id,
            state.methods,
            state.auth_on,
            state.runtime.embedding_model,
        )
    return Response(cards[key], media_type="application/json")


def state_of(connection: HTTPConnection) -> Service:
    """The Service of the app serving `connection` (built in its lifespan, a2a.http.app)."""
    state: Any = connection.app.state.cstp
    assert isinstance(state, Service), "the lifespan has not run"
    return state


def public_base_url(state: Service, request: Request) -> str:
    """CSTP_PUBLIC_URL without a trailing `/`, else `http://<bound host>:<port>`."""
    if state.settings.public_url is not None:
        return str(state.settings.public_url).rstrip("/")
    server = request.scope.get("server") or (state.settings.host, state.settings.port)
    host, port = server[0], server[1]
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}" if port in (None, 80) else f"http://{host}:{port}"
