"""The outermost ASGI middleware: a request id on every response; the RPC doors timed."""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from a2a.observability.calls import printable
from a2a.observability.metrics import Metrics
from a2a.observability.request_id import accepted_request_id, new_request_id

#: `scope["state"]` keys set here: the request id, and when the request arrived
#: (`time.perf_counter()` seconds).
REQUEST_ID_KEY, STARTED_KEY = "request_id", "started"

__all__ = [
    "REQUEST_ID_KEY",
    "STARTED_KEY",
    "RequestObserver",
    "elapsed",
    "printable",
    "request_id_of",
]


class RequestObserver:
    """Plain ASGI middleware, placed outside auth so that it sees 401s too.

    Every HTTP response carries `X-Request-ID`: the caller's when `accepted_request_id`
    takes it, else a new one; the doors read it from `scope["state"]["request_id"]`. Each
    request to one of `rpc_paths` is timed into `cstp_rpc_request_seconds` and counted in
    `cstp_rpc_requests_in_flight`. The calls themselves are counted and logged by the doors,
    from their outcomes (`a2a.observability.calls.CallLog`).
    """

    def __init__(
        self, app: ASGIApp, metrics: Metrics, rpc_paths: Collection[str] = ("/cstp", "/mcp")
    ) -> None:
        self.app = app
        self._metrics = metrics
        self._rpc_paths = rpc_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state: dict[str, Any] = scope.setdefault("state", {})
        request_id = accepted_request_id(_header(scope, b"x-request-id")) or new_request_id()
        state[REQUEST_ID_KEY] = request_id
        state[STARTED_KEY] = started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)["X-Request-ID"] = request_id
            await send(message)

        if scope["path"] not in self._rpc_paths:
            await self.app(scope, receive, send_with_id)
            return
        self._metrics.in_flight.inc()
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            self._metrics.in_flight.dec()
            self._metrics.request_seconds.observe(time.perf_counter() - started)


def request_id_of(scope: Scope) -> str:
    """The request id RequestObserver gave this request ("" outside it)."""
    value = scope.get("state", {}).get(REQUEST_ID_KEY)
    return value if isinstance(value, str) else ""


def elapsed(scope: Scope) -> float:
    """Seconds since RequestObserver saw this request arrive (0 outside it)."""
    started = scope.get("state", {}).get(STARTED_KEY)
    return time.perf_counter() - started if isinstance(started, float) else 0.0


def _header(scope: Scope, name: bytes) -> str | None:
    values = [value for key, value in scope["headers"] if key.lower() == name]
    return values[0].decode("latin-1") if len(values) == 1 else None
