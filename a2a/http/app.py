"""The ASGI application factory."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route

from a2a import __version__
from a2a.auth.middleware import OPEN_PATHS, BearerAuth
from a2a.auth.tokens import load_token_table
from a2a.docs.service import docs_service
from a2a.embeddings import Embedder
from a2a.http import routes
from a2a.http.mcp import McpEndpoint, mcp_server, running, session_manager
from a2a.limits.admission import RateLimits
from a2a.methods import build_methods
from a2a.observability.logs import configure_logging
from a2a.observability.metrics import Metrics
from a2a.observability.middleware import RequestObserver
from a2a.query.fusion import FusionConfig
from a2a.query.service import HybridConfig, QueryService
from a2a.rpc.dispatcher import Dispatcher
from a2a.rpc.methods import Method
from a2a.runtime import Runtime
from a2a.settings import Settings, load_settings
from a2a.similarity.service import SimilarityService
from a2a.store import AsyncStore

log = logging.getLogger(__name__)


def create_app(settings: Settings, runtime: Runtime | None = None) -> Starlette:
    """The service as a Starlette app.

    With `runtime` given (the CLI opens it first, to report start-up errors plainly) the
    app uses it; otherwise the lifespan opens one from `settings`. Either way the lifespan
    closes it at shutdown (uvicorn re-raises SIGTERM after a graceful shutdown, so code
    after `uvicorn.run` may never run).

    With tokens configured every path but /health, /ready, the agent card and (unless
    `metrics_open` is false) /metrics needs a bearer token; with none the service runs open
    and logs a warning. Raises ValueError naming the setting for malformed tokens; the
    lifespan raises it for CSTP_RATE_LIMITS naming a method that is not served.
    """
    tokens = load_token_table(settings)
    # Outermost first: the request id and the access log also cover 401s.
    metrics = Metrics()
    middleware = [Middleware(RequestObserver, metrics=metrics)]
    if tokens:
        open_paths = OPEN_PATHS | {"/metrics"} if settings.metrics_open else OPEN_PATHS
        middleware.append(Middleware(BearerAuth, tokens=tokens, open_paths=open_paths))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        active = runtime or Runtime.open(settings, role="cstp serve")
        try:
            store = AsyncStore(
                active.store, settings.chroma_timeout_seconds, on_error=metrics.store_failed
            )
            methods = service_methods(settings, store, active.embedder)
            app.state.settings = settings
            app.state.store = store
            app.state.metrics = metrics
            metrics.served = frozenset(methods)
            app.state.rate_limits = RateLimits.from_settings(settings, methods)
            app.state.dispatcher = Dispatcher(
                methods,
                max_batch_size=settings.max_batch_size,
                max_json_depth=settings.max_json_depth,
                admission=app.state.rate_limits,
            )
            app.state.methods, app.state.auth_on = methods, bool(tokens)
            # MCP tools share the method table and the rate limits; the SDK's session
            # manager must run inside this lifespan (it owns the task group of each call).
            mcp = mcp_server(methods, app.state.rate_limits, "cstp", __version__)
            app.state.mcp = session_manager(mcp, settings.max_body_bytes)
            _log_access_mode(len(tokens), sorted(tokens.agents))
            async with running(app.state.mcp):
                yield
        finally:
            active.close()

    return Starlette(
        routes=[
            Route("/cstp", routes.rpc, methods=["POST"]),
            Route("/health", routes.health, methods=["GET"]),
            Route("/ready", routes.ready, methods=["GET"]),
            Route("/metrics", routes.metrics, methods=["GET"]),
            Route("/.well-known/agent-card.json", routes.card, methods=["GET"]),
            Route("/.well-known/agent.json", routes.card, methods=["GET"]),
            Route("/mcp", McpEndpoint()),
        ],
        middleware=middleware,
        lifespan=lifespan,
    )


def service_methods(settings: Settings, store: AsyncStore, embedder: Embedder) -> dict[str, Method]:
    """The method table of a service on `store`: query, similarity, docs, rpc.discover.

    Raises CatalogError for a malformed CSTP_DOCS_CATALOG.
    """
    service = QueryService(store, embedder, settings.agent_id, hybrid=hybrid_config(settings))
    similar = SimilarityService(store, settings.similarity_weights, settings.agent_id)
    return build_methods(service, similar, docs=docs_service(settings.docs_catalog))


def _log_access_mode(token_count: int, agents: list[str]) -> None:
    if token_count:
        log.info("auth on: %d token(s) for agents %s", token_count, ", ".join(agents))
    else:
        log.warning(
            "AUTH IS OFF: no tokens in CSTP_AUTH_TOKENS or CSTP_AUTH_TOKENS_FILE; anyone who can"
            " reach this port may call /cstp, and each client address is its own agent"
        )


def hybrid_config(settings: Settings) -> HybridConfig:
    """The reciprocal rank fusion settings of `settings`."""
    return HybridConfig(
        rrf_k=settings.hybrid_rrf_k,
        semantic_weight=settings.hybrid_semantic_weight,
        keyword_weight=settings.hybrid_keyword_weight,
        candidates=settings.hybrid_candidates,
    )


def fusion_config(settings: Settings) -> FusionConfig:
    """The hybrid fusion of `settings`: CSTP_FUSION_METHOD and the CSTP_HYBRID_* parameters."""
    return FusionConfig(
        method=settings.fusion_method,
        rrf_k=settings.hybrid_rrf_k,
        semantic_weight=settings.hybrid_semantic_weight,
        keyword_weight=settings.hybrid_keyword_weight,
    )


def app_from_environment() -> Starlette:
    """Factory for `uvicorn --factory a2a.http.app:app_from_environment`: settings from env.

    Also sets up logging from the settings: `cstp serve --workers N` builds each worker's
    app here, in a fresh process.
    """
    settings = load_settings()
    configure_logging(settings.log_level, settings.log_format)
    return create_app(settings)
