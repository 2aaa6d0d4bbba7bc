"""The outermost ASGI middleware: a request id on every response; /cstp timed, counted, logged."""

from __future__ import annotations

import logging
import time
from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from a2a.observability.metrics import Metrics, code_label
from a2a.observability.request_id import accepted_request_id, new_request_id
from a2a.rpc import protocol
from a2a.rpc.dispatcher import CallOutcome

#: The logger of the one-line-per-call access log.
access_log = logging.getLogger("a2a.access")


def printable(text: str) -> str:
    """`text` with control characters escaped (`\\n`), so a client cannot forge log lines."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


#: Longest method name written to the log; the rest is cut (names are client-chosen).
MAX_LOGGED_METHOD = 100
#: `scope["state"]` keys: the request id (set here), the agent (a2a.auth.middleware), and the
#: calls' outcomes (set by the /cstp route once the dispatcher has answered).
REQUEST_ID_KEY, AGENT_KEY, OUTCOMES_KEY = "request_id", "agent", "outcomes"


class RequestObserver:
    """Plain ASGI middleware, placed outside auth so that it sees 401s too.

    Every HTTP response carries `X-Request-ID`: the caller's when `accepted_request_id`
    takes it, else a new one; the route reads it from `scope["state"]["request_id"]`. Each
    request to `rpc_path` is timed into `cstp_rpc_request_seconds`, its calls are counted
    (`Metrics.count_calls`), and each call is logged as one `a2a.access` line with
    `request_id`, `agent`, `method`, `code` (`ok` or the error code), `status` (HTTP) and `ms`
    (wall time of the HTTP request carrying the call, milliseconds; a batch's calls share
    it). A 401 from auth counts and logs as one call with code -32001 and no method.
    """

    def __init__(self, app: ASGIApp, metrics: Metrics, rpc_path: str = "/cstp") -> None:
        self.app = app
        self._metrics = metrics
        self._rpc_path = rpc_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state: dict[str, Any] = scope.setdefault("state", {})
        request_id = accepted_request_id(_header(scope, b"x-request-id")) or new_request_id()
        state[REQUEST_ID_KEY] = request_id
        status = 0

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message)["X-Request-ID"] = request_id
            await send(message)

        if scope["path"] != self._rpc_path:
            await self.app(scope, receive, send_with_id)
            return
        started = time.perf_counter()
        self._metrics.in_flight.inc()
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - started
            self._metrics.in_flight.dec()
            self._metrics.request_seconds.observe(seconds)
            self._record(scope, state, status, seconds)

    def _record(self, scope: Scope, state: dict[str, Any], status: int, seconds: float) -> None:
        outcomes: list[CallOutcome] | None = state.get(OUTCOMES_KEY)
        if outcomes is None and status == 401:
            outcomes = [CallOutcome(None, protocol.UNAUTHORIZED)]
        if not outcomes:
            return
        self._metrics.count_calls(outcomes)
        agent = state.get(AGENT_KEY)
        if agent is None and status != 401 and scope.get("client"):
            agent = scope["client"][0]
        for outcome in outcomes:
            access_log.info(
                "call",
                extra={
                    "request_id": state[REQUEST_ID_KEY],
                    "agent": agent,
                    "method": None
                    if outcome.method is None
                    else printable(outcome.method[:MAX_LOGGED_METHOD]),
                    "code": code_label(outcome.code),
                    "status": status,
                    "ms": round(seconds * 1000, 1),
                },
            )


def _header(scope: Scope, name: bytes) -> str | None:
    values = [value for key, value in scope["headers"] if key.lower() == name]
    return values[0].decode("latin-1") if len(values) == 1 else None
