"""One tenant's parts, as the settings configure them: search index, services, method table."""

from __future__ import annotations

from a2a.app.decisions import decision_service
from a2a.app.federated import Federation
from a2a.app.guard_methods import Guardrails, guardrail_methods
from a2a.app.methods import build_methods
from a2a.app.runtime import Runtime
from a2a.app.sources import TenantSource
from a2a.app.tenants import Services, TenantStack
from a2a.concurrency import Lane, Lanes
from a2a.decisions.replica_locks import SharedRedis
from a2a.embeddings.batching import DynamicBatcher
from a2a.index.sync import LiveIndex
from a2a.query.fusion import FusionConfig
from a2a.query.matching import broad_match_line
from a2a.query.service import HybridConfig, QueryService
from a2a.settings import Settings
from a2a.similarity.service import SimilarityService
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore
from a2a.tenants.names import DEFAULT_TENANT


def tenant_stack(
    tenant: str,
    settings: Settings,
    runtime: Runtime,
    chroma: ChromaDecisionStore,
    store: AsyncStore,
    batcher: DynamicBatcher | None,
    shared_redis: SharedRedis | None,
    lanes: Lanes,
    federation: Federation | None = None,
    guardrails: Guardrails | None = None,
) -> TenantStack:
    """The parts of one tenant on its collection `chroma` (`store`: its async face): search
    index (not yet loading), services and method table (queryDecisions,
    findSimilarDecisions and the decision methods; with the service's peers,
    `federation`), and cstp.checkGuardrails (`guardrails`: the service's rules; None: none)."""
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
    line = broad_match_line(chroma.embedding_model, settings.broad_match_distance)
    methods = build_methods(TenantSource(query, similar), None, decisions, line, federation)
    methods.update(guardrail_methods(guardrails or Guardrails(), tenant, similar, decisions))
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
        model=store.embedding_model,
        dimension=dimension,
        snapshot_min_records=settings.index_snapshot_min_records,
        graph_min_rows=settings.index_graph_min_rows,
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


def evaluation_service(settings: Settings, runtime: Runtime) -> QueryService:
    """The query service `cstp eval` scores: the runtime's store with no search index (every
    query answered by Chroma and the keyword scan), agent id "eval", the settings' hybrid
    fusion."""
    store = AsyncStore(runtime.store, settings.chroma_timeout_seconds)
    return QueryService(store, runtime.embedder, "eval", hybrid=hybrid_config(settings))
