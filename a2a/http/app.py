"""The ASGI application factory."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Iterable

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route
from starlette.types import Scope

from a2a import __version__
from a2a.app.process import configure_process
from a2a.app.runtime import Runtime
from a2a.app.service import Service, build_service, open_service
from a2a.auth.caller import TrustedProxies
from a2a.auth.tokens import load_token_table
from a2a.http import routes
from a2a.http.console import PAGE_SLASH, console_routes, load_assets
from a2a.http.identify import OPEN_PATHS, Identify
from a2a.http.mcp import McpDoor, McpEndpoint
from a2a.observability.calls import CallLog
from a2a.observability.logs import configure_logging
from a2a.observability.metrics import Metrics
from a2a.observability.middleware import RequestObserver, elapsed, request_id_of
from a2a.rpc import protocol
from a2a.rpc.errors import ErrorObject
from a2a.rpc.methods import Method
from a2a.rpc.pipeline import Outcome
from a2a.settings import Settings, load_settings

log = logging.getLogger(__name__)

#: How long start-up waits for the search index before serving while it warms (seconds).
LOAD_WAIT_SECONDS = 2.0


def create_app(
    settings: Settings, runtime: Runtime | None = None, extra_methods: Iterable[Method] = ()
) -> Starlette:
    """The service as a Starlette app.

    With `runtime` given (the CLI opens it first, to report start-up errors plainly) the
    state is built now, so a bad setting fails here with StartupError naming it; otherwise
    the lifespan opens a runtime and builds the state. Either way the lifespan closes it at
    shutdown (uvicorn re-raises SIGTERM after a graceful shutdown, so code after
    `uvicorn.run` may never run). `extra_methods` are served besides the built-in ones.

    With tokens configured every path but /health, /ready, the agent cards and (unless
    `metrics_open` is false) /metrics needs a bearer token; with none the service runs open
    and logs a warning.
    """
    metrics = Metrics()
    calls = CallLog(metrics)
    built = (
        None if runtime is None else build_service(settings, runtime, metrics, calls, extra_methods)
    )
    tokens = load_token_table(settings) if built is None else built.tokens
    open_paths = OPEN_PATHS | {"/metrics"} if settings.metrics_open else OPEN_PATHS
    # The operator console: static files, open without a token (they hold no data).
    console = load_assets(settings)
    open_paths = open_paths | frozenset(console) | {PAGE_SLASH}

    def refused(scope: Scope) -> None:
        # A 401 on a JSON-RPC door is a call refused (-32001); on /metrics it is not a call.
        if scope["path"] not in ("/cstp", "/mcp"):
            return
        error = ErrorObject(protocol.UNAUTHORIZED, "Unauthorized")
        calls.record(
            [Outcome(None, error=error)],
            door=scope["path"].strip("/"),
            agent=None,
            request_id=request_id_of(scope),
            status=401,
            seconds=elapsed(scope),
        )

    # Outermost first: the request id and the timing also cover 401s.
    middleware = [
        Middleware(RequestObserver, metrics=metrics),
        Middleware(
            Identify,
            tokens=tokens,
            proxies=TrustedProxies(settings.trusted_proxies),
            open_paths=open_paths,
            on_refused=refused,
        ),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        state: Service | None = built
        try:
            if state is None:
                state = open_service(settings, metrics, calls, extra_methods)
            app.state.cstp = state
            app.state.cards = {}
            app.state.mcp = mcp = McpDoor(
                state.pipeline, calls, __version__, settings.max_body_bytes
            )
            # The search index answers every read; it loads in the background while /ready
            # says "warming" and queries wait for it. A small store is ready before serving.
            state.index.start()
            await state.index.settle(LOAD_WAIT_SECONDS)
            _log_access_mode(len(tokens), sorted(tokens.agents))
            # The SDK's session manager starts with the first /mcp request and runs until
            # this lifespan ends (it owns the task group of each MCP call).
            try:
                yield
            finally:
                await mcp.aclose()
        finally:
            if state is not None:
                await state.stop()
            elif runtime is not None:
                runtime.close()

    return Starlette(
        routes=[
            Route("/cstp", routes.rpc, methods=["POST"]),
            Route("/health", routes.health, methods=["GET"]),
            Route("/ready", routes.ready, methods=["GET"]),
            Route("/metrics", routes.metrics, methods=["GET"]),
            Route("/.well-known/agent-card.json", routes.card, methods=["GET"]),
            Route("/.well-known/agent.json", routes.card, methods=["GET"]),
            Route("/mcp", McpEndpoint()),
            *console_routes(console),
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
    """Factory for `uvicorn --factory a2a.http.app:app_from_environment`: settings from env.

    An entry point, as `cstp serve` is: sets up logging from the settings and the process's
    thread limits (a2a.app.process); `cstp serve --workers N` builds each worker's app here,
    in a fresh process.
    """
    settings = load_settings()
    configure_logging(settings.log_level, settings.log_format)
    configure_process()
    return create_app(settings)
