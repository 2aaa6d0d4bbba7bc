"""The app's lifespan state: one typed object, built once from the settings by one function."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import HTTPConnection

from a2a import __version__
from a2a.auth.caller import TrustedProxies
from a2a.auth.tokens import TokenTable, load_token_table
from a2a.decisions.wiring import decision_service
from a2a.docs.catalog import CatalogError
from a2a.docs.service import docs_service
from a2a.embeddings.batching import DynamicBatcher, query_batcher
from a2a.http.mcp import mcp_server, session_manager
from a2a.index.sync import LiveIndex
from a2a.limits.admission import RateLimits
from a2a.methods import build_methods
from a2a.observability.calls import CallLog
from a2a.observability.metrics import Metrics
from a2a.query.fusion import FusionConfig
from a2a.query.service import HybridConfig, QueryService
from a2a.rpc.dispatcher import Dispatcher
from a2a.rpc.methods import Method
from a2a.rpc.pipeline import Pipeline
from a2a.runtime import Runtime
from a2a.settings import Settings
from a2a.similarity.service import SimilarityService
from a2a.store import AsyncStore, ChromaDecisionStore
from a2a.workers import WorkerPool


class StartupError(Exception):
    """A setting the service cannot start with; the message names it (`CSTP_RATE_LIMITS: ...`)."""


@dataclass
class AppState:
    """Everything the routes use, built once per app (`build_state`)."""

    settings: Settings
    runtime: Runtime
    workers: WorkerPool
    store: AsyncStore
    metrics: Metrics
    calls: CallLog
    tokens: TokenTable
    proxies: TrustedProxies
    methods: dict[str, Method]
    rate_limits: RateLimits
    pipeline: Pipeline
    dispatcher: Dispatcher
    mcp: StreamableHTTPSessionManager
    #: The in-process search index every read method answers from (a2a.index).
    index: LiveIndex
    #: Concurrent queries' embeddings in shared model calls (None: the model is not batchable).
    batcher: DynamicBatcher | None = None
    #: Agent cards already served, by (base URL, shape).
    cards: dict[tuple[str, str], bytes] = field(default_factory=dict)

    def warming(self) -> bool:
        """True while the search index is still loading: /ready is 503 `"warming"`
        (CONTRACT.md section Transport)."""
        return self.index.status != "ready"

    @property
    def auth_on(self) -> bool:
        """True when tokens are configured."""
        return bool(self.tokens)

    def close(self) -> None:
        """Stop the worker pool, the query batcher and the parser, close the runtime
        (Chroma client, store lock)."""
        self.workers.close()
        if self.batcher is not None:
            self.batcher.close()
        self.dispatcher.close()
        self.runtime.close()


def build_state(
    settings: Settings,
    runtime: Runtime,
    metrics: Metrics,
    calls: CallLog,
    extra_methods: Iterable[Method] = (),
) -> AppState:
    """The state of a service on `runtime`: workers, store, methods, limits, pipeline, doors.

    `metrics` and `calls` are the app's own (its middleware holds them from the start).
    `extra_methods` join the table (an embedding app's own, or a test's): like every method
    they are served on both doors, described by rpc.discover and the card, counted, logged.

    Raises StartupError naming the setting: CSTP_RATE_LIMITS naming a method not served,
    CSTP_DOCS_CATALOG malformed, CSTP_TRUSTED_PROXIES malformed.
    """
    workers = WorkerPool(
        settings.worker_threads, settings.worker_queue, settings.worker_queue_timeout_seconds
    )
    store = AsyncStore(
        runtime.store, settings.chroma_timeout_seconds, workers, on_error=metrics.store_failed
    )
    try:
        docs = docs_service(settings.docs_catalog)
    except CatalogError as exc:
        raise StartupError(str(exc)) from None
    index = live_index(settings, runtime.store, getattr(runtime.embedder, "dimension", None))
    batcher = query_batcher(
        runtime.embedder,
        settings.worker_queue,
        settings.worker_queue_timeout_seconds,
        on_batch=metrics.query_batch_size.observe,
    )
    methods = build_methods(
        QueryService(
            store,
            runtime.embedder,
            settings.agent_id,
            hybrid=hybrid_config(settings),
            index=index,
            workers=workers,
            default_mode=settings.default_retrieval_mode,
            batcher=batcher,
        ),
        SimilarityService(
            store, settings.similarity_weights, settings.agent_id, index=index, workers=workers
        ),
        docs,
        decisions=decision_service(settings, store, runtime.embedder, index=index),
    )
    methods.update((method.name, method) for method in extra_methods)
    metrics.served = frozenset(methods)
    try:
        rate_limits = RateLimits.from_settings(settings, methods)
    except ValueError as exc:
        raise StartupError(str(exc)) from None
    pipeline = Pipeline(methods, rate_limits)
    return AppState(
        settings=settings,
        runtime=runtime,
        workers=workers,
        store=store,
        metrics=metrics,
        calls=calls,
        tokens=load_token_table(settings),
        proxies=TrustedProxies(settings.trusted_proxies),
        methods=methods,
        rate_limits=rate_limits,
        pipeline=pipeline,
        dispatcher=Dispatcher(
            pipeline,
            max_batch_size=settings.max_batch_size,
            max_json_depth=settings.max_json_depth,
        ),
        mcp=session_manager(
            mcp_server(pipeline, calls, "cstp", __version__), settings.max_body_bytes
        ),
        index=index,
        batcher=batcher,
    )


def live_index(
    settings: Settings, store: ChromaDecisionStore, dimension: int | None = None
) -> LiveIndex:
    """The search index of `store` as the settings configure it (not yet loading), with
    snapshots in CSTP_INDEX_SNAPSHOT_DIR (default <data_dir>/index/<collection>) of
    vectors of `dimension` (the embedder's)."""
    snapshots = settings.index_snapshot_dir or settings.data_dir / "index" / settings.collection
    return LiveIndex(
        store,
        timeout_seconds=settings.chroma_timeout_seconds,
        margin_ms=round(settings.index_freshness_margin_seconds * 1000),
        vector_dtype=settings.index_vector_dtype,
        snapshots=snapshots,
        model=settings.embedding_model,
        dimension=dimension,
        snapshot_min_records=settings.index_snapshot_min_records,
        stale_seconds=settings.stale_reads_seconds,
    )


def hybrid_config(settings: Settings) -> HybridConfig:
    """Hybrid retrieval as the settings configure it: the fusion and the candidate depth."""
    return HybridConfig(fusion=fusion_config(settings), candidates=settings.hybrid_candidates)


def fusion_config(settings: Settings) -> FusionConfig:
    """The hybrid fusion of `settings`: CSTP_FUSION_METHOD and the CSTP_HYBRID_* parameters."""
    return FusionConfig(
        method=settings.fusion_method,
        rrf_k=settings.hybrid_rrf_k,
        semantic_weight=settings.hybrid_semantic_weight,
        keyword_weight=settings.hybrid_keyword_weight,
    )


def state_of(connection: HTTPConnection) -> AppState:
    """The AppState of the app serving `connection`."""
    state: Any = connection.app.state.cstp
    assert isinstance(state, AppState), "the lifespan has not run"
    return state
