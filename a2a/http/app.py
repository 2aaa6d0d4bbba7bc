"""The ASGI application factory."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.routing import Route

from a2a.http import routes
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
    """

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        active = runtime or Runtime.open(settings, role="cstp serve")
        store = AsyncStore(active.store, settings.chroma_timeout_seconds)
        service = QueryService(store, active.embedder, settings.agent_id)
        app.state.settings = settings
        app.state.store = store
        app.state.dispatcher = Dispatcher(
            build_methods(service),
            max_batch_size=settings.max_batch_size,
            max_json_depth=settings.max_json_depth,
        )
        try:
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
        lifespan=lifespan,
    )


def app_from_environment() -> Starlette:
    """Factory for `uvicorn --factory a2a.http.app:app_from_environment`: settings from env."""
    return create_app(load_settings())
