"""The composition root: one function builds a running service from the settings.

`build_service(settings, runtime, ...)` turns settings into objects (lanes, store, tenants
and their stacks, method table, limits, pipeline, dispatcher) and is the only place that
does: `cstp serve`, the ASGI factory (a2a.http.app), `cstp eval` and the tests all build
through this package. The doors hold the Service and never a service, store or index.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from a2a.app.decisions import with_cursor_secret
from a2a.app.federated import Federation, list_peers_method
from a2a.app.guard_methods import Guardrails
from a2a.app.methods import discover_method, search_docs_method
from a2a.app.org import org_methods
from a2a.app.runtime import Runtime
from a2a.app.stack import tenant_stack
from a2a.app.steps import with_stale_step
from a2a.app.tenants import Tenants, TenantStack, list_tenants_method
from a2a.auth.tokens import TokenTable, load_token_table
from a2a.concurrency import Lanes
from a2a.decisions.replica_locks import SharedRedis, replica_redis
from a2a.docs.service import docs_service
from a2a.embeddings.batching import DynamicBatcher, query_batcher
from a2a.errors import CatalogError, StartupError
from a2a.federation.config import load_peers
from a2a.federation.peers import Peers
from a2a.guardrails.rules import load_rules
from a2a.index.sync import LiveIndex
from a2a.limits.admission import RateLimits
from a2a.observability.calls import CallLog
from a2a.observability.metrics import Metrics
from a2a.query.matching import broad_match_line
from a2a.rpc.dispatcher import Dispatcher
from a2a.rpc.methods import Method
from a2a.rpc.pipeline import Pipeline
from a2a.settings import Settings
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import open_store
from a2a.tenants.names import DEFAULT_TENANT, collection_of, tenant_of


@dataclass
class Service:
    """Everything the doors use, built once per app (`build_service`)."""

    settings: Settings
    runtime: Runtime
    lanes: Lanes
    store: AsyncStore
    metrics: Metrics
    calls: CallLog
    tokens: TokenTable
    methods: dict[str, Method]
    pipeline: Pipeline
    dispatcher: Dispatcher
    #: The default tenant's search index (a2a.index): /ready waits for it.
    index: LiveIndex
    #: Every tenant this replica serves (a2a.app.tenants).
    tenants: Tenants
    #: Concurrent queries' embeddings in shared model calls (None: the model is not batchable).
    batcher: DynamicBatcher | None = None
    #: The Redis the replicas share their decision locks in (None: no shared Redis).
    shared_redis: SharedRedis | None = None
    #: The peer services calls may ask (CONTRACT.md, Federation; none by default).
    federation: Federation = field(default_factory=Federation.alone)

    async def count_decisions(self) -> int:
        """Decisions in every tenant's collection together (`cstp_decisions` on /metrics:
        one figure, no tenant's own, CONTRACT.md, Isolation), read within the Chroma
        deadline (CSTP_CHROMA_TIMEOUT_SECONDS); StoreUnavailable when Chroma fails or hangs."""
        base = self.settings.collection
        return await self.store.call(
            lambda: self.runtime.store.count_collections(lambda n: tenant_of(base, n) is not None)
        )

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
        """Stop the tenants' background work, close the shared Redis client and the peers'
        HTTP client, then `close`."""
        await self.tenants.stop()
        await self.federation.peers.aclose()
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


def build_service(
    settings: Settings,
    runtime: Runtime,
    metrics: Metrics,
    calls: CallLog,
    extra_methods: Iterable[Method] = (),
) -> Service:
    """The service on `runtime`: lanes, store, tenants, methods, limits, pipeline.

    `metrics` and `calls` are the app's own (its middleware holds them from the start).
    `extra_methods` join the table (an embedding app's own, or a test's): like every method
    they are served on both doors, described by rpc.discover and the card, counted, logged.

    Raises StartupError naming the setting: CSTP_RATE_LIMITS naming a method not served,
    CSTP_DOCS_CATALOG malformed, CSTP_PEERS_FILE unusable (naming the peer and field),
    CSTP_GUARDRAILS_FILE unusable (naming the rule and the fault).
    """
    settings = with_cursor_secret(settings)
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

    federation = Federation(
        Peers(load_peers(settings.peers_file), settings.peer_timeout_seconds, metrics=metrics),
        runtime.embedding_model,
        settings.default_retrieval_mode,
    )

    guardrails = Guardrails(load_rules(settings.guardrails_file), metrics.guardrails_checked)

    def build(tenant: str) -> TenantStack:
        if tenant == DEFAULT_TENANT:
            chroma, face = runtime.store, store
        else:
            chroma = open_store(
                settings,
                collection_of(settings.collection, tenant),
                runtime.store.revisions,
                model=runtime.store.embedding_model,
            )
            face = store.sharing(chroma)
        return tenant_stack(
            tenant,
            settings,
            runtime,
            chroma,
            face,
            batcher,
            shared_redis,
            lanes,
            federation,
            guardrails,
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
    methods["cstp.listTenants"] = with_stale_step(list_tenants_method(tenants))
    methods["cstp.listPeers"] = list_peers_method(federation)
    methods["rpc.discover"] = discover_method(methods)
    index = default.index
    methods.update((method.name, method) for method in extra_methods)
    metrics.served = frozenset(methods)
    try:
        rate_limits = RateLimits.from_settings(settings, methods, lane=lanes.background)
    except ValueError as exc:
        raise StartupError(str(exc)) from None
    line = broad_match_line(runtime.store.embedding_model, settings.broad_match_distance)
    tenants.org = org_methods(tenants, methods, settings.agent_id, metrics, line, federation)
    pipeline = Pipeline(methods, rate_limits, tenants)
    return Service(
        settings=settings,
        runtime=runtime,
        lanes=lanes,
        store=store,
        metrics=metrics,
        calls=calls,
        tokens=load_token_table(settings),
        methods=methods,
        pipeline=pipeline,
        dispatcher=Dispatcher(
            pipeline,
            max_batch_size=settings.max_batch_size,
            max_json_depth=settings.max_json_depth,
            parser=lanes.parser,
        ),
        index=index,
        tenants=tenants,
        batcher=batcher,
        shared_redis=shared_redis,
        federation=federation,
    )


def open_service(
    settings: Settings, metrics: Metrics, calls: CallLog, extra_methods: Iterable[Method] = ()
) -> Service:
    """`build_service` on a runtime opened now (Runtime.open, role `cstp serve`), closed
    again when the build fails. Raises what Runtime.open and build_service raise."""
    runtime = Runtime.open(settings, role="cstp serve")
    try:
        return build_service(settings, runtime, metrics, calls, extra_methods)
    except BaseException:
        runtime.close()
        raise
