"""The app's lifespan state: one typed object, built once from the settings by one function."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import HTTPConnection

from a2a import __version__
from a2a.app.org import org_methods
from a2a.app.tenants import Services, Tenants, TenantStack, list_tenants_method
from a2a.auth.caller import TrustedProxies
from a2a.auth.tokens import TokenTable, load_token_table
from a2a.concurrency import Lane, Lanes
from a2a.decisions.replica_locks import SharedRedis, replica_redis
from a2a.decisions.wiring import decision_service
from a2a.docs.method import search_docs_method
from a2a.docs.service import docs_service
from a2a.embeddings.batching import DynamicBatcher, query_batcher
from a2a.errors import CatalogError, StartupError
from a2a.http.mcp import mcp_server, session_manager
from a2a.index.sync import LiveIndex
from a2a.limits.admission import RateLimits
from a2a.methods import build_methods, discover_method
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
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore, open_store
from a2a.tenants.names import DEFAULT_TENANT, collection_of, tenant_of


@dataclass
class AppState:
    """Everything the routes use, built once per app (`build_state`)."""

    settings: Settings
    runtime: Runtime
    lanes: Lanes
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
    #: The default tenant's search index (a2a.index): /ready waits for it.
    index: LiveIndex
    #: Every tenant this replica serves (a2a.app.tenants).
    tenants: Tenants
    #: Concurrent queries' embeddings in shared model calls (None: the model is not batchable).
    batcher: DynamicBatcher | None = None
    #: The Redis the replicas share their decision locks in (None: no shared Redis).
    shared_redis: SharedRedis | None = None
    #: Agent cards already served, by (base URL, shape).
    cards: dict[tuple[str, str], bytes] = field(default_factory=dict)

    def warming(self) -> bool:
        """True while the search index is still loading: /ready is 503 `"warming"`
        (CONTRACT.md section Transport). Not once evicted (CSTP_INDEX_MEMORY_MIB): the
        replica answers as before, the next call of the default tenant loads it again."""
        return self.index.status not in ("ready", "evicted")

    @property
    def auth_on(self) -> bool:
        """True when tokens are configured."""
        return bool(self.tokens)

    async def stop(self) -> None:
        """Stop the tenants' background work, close the shared Redis client, then `close`."""
        await self.tenants.stop()
        if self.shared_redis is not None:
            await self.shared_redis.aclose()
        self.close()

    def close(self) -> None:
        """Stop the lanes and the query batcher, close the runtime (Chroma client, store
        lock)."""
        self.lanes.close()
        if self.batcher is not None:
            self.batcher.close()
        self.runtime.close()


def build_state(
    settings: Settings,
    runtime: Runtime,
    metrics: Metrics,
    calls: CallLog,
    extra_methods: Iterable[Method] = (),
) -> AppState:
    """The state of a service on `runtime`: lanes, store, methods, limits, pipeline, doors.

    `metrics` and `calls` are the app's own (its middleware holds them from the start).
    `extra_methods` join the table (an embedding app's own, or a test's): like every method
    they are served on both doors, described by rpc.discover and the card, counted, logged.

    Raises StartupError naming the setting: CSTP_RATE_LIMITS naming a method not served,
    CSTP_DOCS_CATALOG malformed, CSTP_TRUSTED_PROXIES malformed.
    """
    lanes = Lanes(
        settings.worker_threads, settings.worker_queue, settings.worker_queue_timeout_seconds
    )
    try:
        docs = docs_service(settings.docs_catalog)
    except CatalogError as exc:
        raise StartupError(str(exc)) from None
    batcher = query_batcher(
        runtime.embedder,
        settings.worker_queue,
        settings.worker_queue_timeout_seconds,
        on_batch=metrics.query_batch_size.observe,
    )

    store = AsyncStore(
        runtime.store, settings.chroma_timeout_seconds, lanes.request, on_error=metrics.store_failed
    )

    shared_redis = replica_redis(settings.rate_limit_storage)

    def build(tenant: str) -> TenantStack:
        if tenant == DEFAULT_TENANT:
            return tenant_stack(
                tenant, settings, runtime, runtime.store, store, batcher, shared_redis, lanes
            )
        chroma = open_store(
            settings, collection_of(settings.collection, tenant), runtime.store.revisions
        )
        return tenant_stack(
            tenant, settings, runtime, chroma, store.sharing(chroma), batcher, shared_redis, lanes
        )

    async def existing() -> dict[str, str | None]:
        if runtime.store.collection_names_in_memory:  # embedded: no Chroma call, no hop
            markers = runtime.store.collection_markers()
        else:  # within the call's deadline, as every Chroma call (CONTRACT.md, Deadlines)
            markers = await store.call(runtime.store.collection_markers)
        tenants = ((tenant_of(settings.collection, n), marker) for n, marker in markers.items())
        return {tenant: marker for tenant, marker in tenants if tenant is not None}

    methods = {"cstp.searchDocs": search_docs_method(docs)}
    tenants = Tenants(
        build,
        methods,
        existing,
        memory_budget=None
        if settings.index_memory_mib is None
        else settings.index_memory_mib * 1024 * 1024,
        metrics=metrics,
        load_wait_seconds=settings.chroma_timeout_seconds,
        background=lanes.background,
    )
    default = tenants.stack(DEFAULT_TENANT)
    # The table calls are checked against: every tenant's methods have the same names,
    # params, scopes and schemas as the default tenant's.
    methods.update(default.methods)
    methods["cstp.listTenants"] = list_tenants_method(tenants)
    methods["rpc.discover"] = discover_method(methods)
    index = default.index
    methods.update((method.name, method) for method in extra_methods)
    metrics.served = frozenset(methods)
    try:
        rate_limits = RateLimits.from_settings(settings, methods, lane=lanes.background)
    except ValueError as exc:
        raise StartupError(str(exc)) from None
    tenants.org = org_methods(tenants, methods, settings.agent_id, metrics)
    pipeline = Pipeline(methods, rate_limits, tenants)
    return AppState(
        settings=settings,
        runtime=runtime,
        lanes=lanes,
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
            parser=lanes.parser,
        ),
        mcp=session_manager(
            mcp_server(pipeline, calls, "cstp", __version__), settings.max_body_bytes
        ),
        index=index,
        tenants=tenants,
        batcher=batcher,
        shared_redis=shared_redis,
    )


def tenant_stack(
    tenant: str,
    settings: Settings,
    runtime: Runtime,
    chroma: ChromaDecisionStore,
    store: AsyncStore,
    batcher: DynamicBatcher | None,
    shared_redis: SharedRedis | None,
    lanes: Lanes,
) -> TenantStack:
    """The parts of one tenant on its collection `chroma` (`store`: its async face): search
    index (not yet loading), services and method table (queryDecisions,
    findSimilarDecisions and the decision methods)."""
    workers = store.workers
    dimension = getattr(runtime.embedder, "dimension", None)
    index = live_index(settings, chroma, dimension, tenant, lanes.background)
    query = QueryService(
        store,
        runtime.embedder,
        settings.agent_id,
        hybrid=hybrid_config(settings),
        index=index,
        workers=workers,
        default_mode=settings.default_retrieval_mode,
        batcher=batcher,
    )
    similar = SimilarityService(
        store, settings.similarity_weights, settings.agent_id, index=index, workers=workers
    )
    decisions = decision_service(
        settings, store, runtime.embedder, index, tenant, chroma.collection_name, shared_redis
    )
    methods = build_methods(query, similar, None, decisions)
    del methods["rpc.discover"]  # one for the service, in the table calls are checked against
    return TenantStack(tenant, methods, index, Services(store, query, similar, decisions))


def live_index(
    settings: Settings,
    store: ChromaDecisionStore,
    dimension: int | None = None,
    tenant: str = DEFAULT_TENANT,
    background: Lane | None = None,
) -> LiveIndex:
    """The search index of `store` as the settings configure it (not yet loading), with
    snapshots of vectors of `dimension` (the embedder's) in CSTP_INDEX_SNAPSHOT_DIR
    (default <data_dir>/index/<collection>; another tenant's in its `tenants/<name>`
    folder, by default <data_dir>/index/<its collection>); its loads, checks, graph builds
    and snapshot writes on `background` (a2a.concurrency.Lanes.background)."""
    if settings.index_snapshot_dir is None:
        snapshots = settings.data_dir / "index" / store.collection_name
    elif tenant == DEFAULT_TENANT:
        snapshots = settings.index_snapshot_dir
    else:
        snapshots = settings.index_snapshot_dir / "tenants" / tenant
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
        background=background,
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
