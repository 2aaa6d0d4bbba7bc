"""The identity gate in front of the JSON-RPC doors: who calls, or 401 before any body is read."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from a2a.auth.caller import CALLER_KEY, Caller, TrustedProxies, anonymous
from a2a.auth.tokens import TokenTable
from a2a.errors import MissingScope, Unauthorized
from a2a.rpc import protocol
from a2a.rpc.errors import to_error_object

#: Paths served without a token (CONTRACT.md section Transport); every other path needs one.
OPEN_PATHS = frozenset(
    {"/health", "/ready", "/.well-known/agent-card.json", "/.well-known/agent.json"}
)


@dataclass(frozen=True, slots=True)
class Identify:
    """ASGI middleware: puts the request's Caller in `scope["state"]["caller"]`.

    With tokens configured, a request to a path outside `open_paths` must carry
    `Authorization: Bearer <token>` of a known agent. A missing, malformed (`Basic ...`,
    `Bearer ` with nothing) or unknown token gets HTTP 401 with `WWW-Authenticate: Bearer`
    and the JSON-RPC error object -32001 with `id: null` (CONTRACT.md sections Transport and
    Errors specific to CSTP), and `on_refused(scope)` is told. The check runs before the body
    is read, so an unauthenticated client never gets a 413 or a parse error. With no tokens,
    every request's caller is its client address with every scope.
    """

    app: ASGIApp
    tokens: TokenTable
    proxies: TrustedProxies
    open_paths: Collection[str] = OPEN_PATHS
    on_refused: Callable[[Scope], None] = lambda scope: None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        if not self.tokens:
            state[CALLER_KEY] = anonymous(scope, self.proxies)
        elif scope["path"] not in self.open_paths:
            found = self.tokens.lookup(bearer_token(scope["headers"]))
            if found is None:
                self.on_refused(scope)
                await _unauthorized()(scope, receive, send)
                return
            state[CALLER_KEY] = Caller(*found)
        await self.app(scope, receive, send)


def bearer_token(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The token of the one `Authorization: Bearer <token>` header, else None.

    The scheme is case-insensitive (RFC 7235 section 2.1); two Authorization headers, another
    scheme, an empty token or one with spaces inside all give None.
    """
    values = [value for name, value in headers if name.lower() == b"authorization"]
    if len(values) != 1:
        return None
    scheme, _, token = values[0].decode("latin-1").strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or any(c.isspace() for c in token):
        return None
    return token


def missing_scope(required: str) -> JSONResponse:
    """HTTP 403 for a known token without the scope a plain HTTP path needs (`/metrics`
    closed needs `admin`): the JSON-RPC error object -32004 with `data.requiredScope`,
    `id: null`, as the 401 above is -32001."""
    wire = to_error_object(MissingScope(required))
    return JSONResponse(protocol.failure(None, wire.code, wire.message, wire.data), status_code=403)


def _unauthorized() -> JSONResponse:
    wire = to_error_object(Unauthorized())
    body = protocol.failure(None, wire.code, wire.message, wire.data)
    return JSONResponse(body, status_code=401, headers={"WWW-Authenticate": "Bearer"})
