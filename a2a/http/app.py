"""The ASGI application factory."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route

from a2a.auth.middleware import BearerAuth
from a2a.auth.tokens import load_token_table
from a2a.http import routes
from a2a.limits.admission import RateLimits
from a2a.methods import build_methods
from a2a.query.service import QueryService
from a2a.rpc.dispatcher import Dispatcher
from a2a.runtime import Runtime
from a2a.settings import Settings, load_settings
from a2a.store import AsyncStore

log = logging.getLogger(__name__)


def create_app(settings: Settings, runtime: Runtime | None = None) -> Starlette:
    """The service as a Starlette app.

    With `runtime` given (the CLI opens it first, to report start-up errors plainly) the
    app uses it; otherwise the lifespan opens one from `settings`. Either way the lifespan
    closes it at shutdown (uvicorn re-raises SIGTERM after a graceful shutdown, so code
    after `uvicorn.run` may never run).

    With tokens configured every path but /health, /ready and the agent card needs a bearer
    token; with none the service runs open and logs a warning. Raises ValueError naming the
    setting for malformed tokens; the lifespan raises it for CSTP_RATE_LIMITS naming a method
    that is not served.
    """
    tokens = load_token_table(settings)
    middleware = [Middleware(BearerAuth, tokens=tokens)] if tokens else []

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        active = runtime or Runtime.open(settings, role="cstp serve")
        try:
            store = AsyncStore(active.store, settings.chroma_timeout_seconds)
            service = QueryService(store, active.embedder, settings.agent_id)
            methods = build_methods(service)
            app.state.settings = settings
            app.state.store = store
            app.state.rate_limits = RateLimits.from_settings(settings, methods)
            app.state.dispatcher = Dispatcher(
                methods,
                max_batch_size=settings.max_batch_size,
                max_json_depth=settings.max_json_depth,
                admission=app.state.rate_limits,
            )
            _log_access_mode(len(tokens), sorted(tokens.agents))
            yield
        finally:
            active.close()

    return Starlette(
        routes=[
            Route("/cstp", routes.rpc, methods=["POST"]),
            Route("/health", routes.health, methods=["GET"]),
            Route("/ready", routes.ready, methods=["GET"]),
            Route("/.well-known/agent-card.json", routes.card, methods=["GET"]),
            Route("/.well-known/agent.json", routes.card, methods=["GET"]),
        ],
        middleware=middleware,
        lifespan=lifespan,
    )


def _log_access_mode(token_count: int, agents: list[str]) -> None:
    if token_count:
        log.info("auth on: %d token(s) for agents %s", token_count, ", ".join(agents))
    else:
        log.warning(
            "AUTH IS OFF: no tokens in CSTP_AUTH_TOKENS or CSTP_AUTH_TOKENS_FILE; anyone who can"
            " reach this port may call /cstp, and each client address is its own agent"
        )


def app_from_environment() -> Starlette:
    """Factory for `uvicorn --factory a2a.http.app:app_from_environment`: settings from env."""
    return create_app(load_settings())
