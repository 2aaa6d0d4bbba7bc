"""The DecisionService a running service uses, and the index run's writer locks, built from
its settings (the composition root's part for decisions)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Sequence
from typing import TypeVar

from pydantic import SecretStr

from a2a.decisions.claims import CreationClaims
from a2a.decisions.cursor import CursorCodec
from a2a.decisions.indexed import IndexSource, IndexTable, index_writes
from a2a.decisions.replica_locks import ReplicaLocks, SharedRedis, WriterLocks
from a2a.decisions.service import DecisionService
from a2a.decisions.table import DecisionTableSource, StoreTable
from a2a.embeddings import Embedder
from a2a.settings import Settings
from a2a.store.async_store import AsyncStore
from a2a.tenants.names import DEFAULT_TENANT

T = TypeVar("T")
#: A replica lock's lease, in Chroma deadlines (CSTP_CHROMA_TIMEOUT_SECONDS).
LEASE_DEADLINES = 3


def with_cursor_secret(settings: Settings) -> Settings:
    """`settings` with a CSTP_CURSOR_SECRET: its own, else one drawn now for the process.

    The composition root calls it once, so every tenant's cursor key is derived from the
    one secret (cursor_key) and does not depend on which stacks are loaded: a tenant's
    stack dropped and built again still accepts its cursors (issue 44, item 7). `cstp
    serve --workers` draws one before the workers start and shares it through the
    environment (a2a.cli.main), so every worker accepts the others' cursors.
    """
    if settings.cursor_secret is not None:
        return settings
    return settings.model_copy(update={"cursor_secret": SecretStr(secrets.token_hex(32))})


def cursor_key(settings: Settings, tenant: str) -> bytes | None:
    """The key that signs `tenant`'s cursors: SHA-256 of CSTP_CURSOR_SECRET, bound to the
    tenant's name for every tenant but `default`; None (a random key of the codec's own)
    without a secret, which only a service built outside the root has (with_cursor_secret)."""
    secret = settings.cursor_secret
    if secret is None:
        return None
    bound = "" if tenant == DEFAULT_TENANT else f"\0tenant:{tenant}"
    return hashlib.sha256((secret.get_secret_value() + bound).encode()).digest()


def lock_seconds(settings: Settings) -> tuple[float, float]:
    """(lease, longest wait) in seconds of a decision's lock across replicas: the lease
    outlasts any call, which ends by its Chroma deadline (CSTP_CHROMA_TIMEOUT_SECONDS), so
    it lapses only for a writer that died holding it; a waiter waits one deadline."""
    deadline = settings.chroma_timeout_seconds
    return LEASE_DEADLINES * deadline, deadline


def writer_locks(settings: Settings, collection: str) -> WriterLocks | None:
    """The locks `cstp index` takes on `collection`'s records in the Redis the replicas
    share (CSTP_RATE_LIMIT_STORAGE=redis://...), else None."""
    return WriterLocks.from_uri(settings.rate_limit_storage, collection, *lock_seconds(settings))


def decision_service(
    settings: Settings,
    store: AsyncStore,
    embedder: Embedder,
    index: IndexSource | None = None,
    tenant: str = DEFAULT_TENANT,
    collection: str | None = None,
    shared_redis: SharedRedis | None = None,
) -> DecisionService:
    """Decisions on `store`, embedded with `embedder`, blocking work in the store's worker
    pool (a Chroma server call is bounded by the client's own timeout).

    With `index` (the service's search index, a LiveIndex) listDecisions and getCalibration
    read its columns and every write goes into it before the answer; without, they read
    Chroma on each call. Cursors are signed with a key derived from CSTP_CURSOR_SECRET (the
    root draws one per process when none is set: with_cursor_secret); each tenant's with its
    own, so a cursor is bound to its tenant (CONTRACT.md, Tenants). The default tenant's key
    is the one from before tenants.

    `shared_redis` (a2a.decisions.replica_locks.replica_redis): writers of one decision take turns
    across the replicas on it too, and one of identical new records is `created`.
    """
    key = cursor_key(settings, tenant)
    run = store.workers.run

    async def finish(call: Callable[[], T]) -> T:
        """The rest of a write Chroma has stored: never refused for load (BatchWriter)."""
        return await store.workers.run(call, refusable=False)

    table: DecisionTableSource = StoreTable(store) if index is None else IndexTable(index, run)

    collection = collection or settings.collection
    claims = CreationClaims.from_uri(settings.rate_limit_storage, collection)
    replicas = None
    if shared_redis is not None:
        replicas = ReplicaLocks(shared_redis, collection, *lock_seconds(settings))

    async def forget(ids: Sequence[str]) -> None:
        """Deleted ids out of the search index and their creation claims released, before
        the answer (never refused: done)."""
        if index is not None:
            await finish(lambda: index.forget(ids))
        if claims is not None:
            await finish(lambda: claims.release(list(ids)))

    return DecisionService(
        store,
        embedder,
        table,
        cursors=CursorCodec(key),
        run=run,
        on_write=None if index is None else index_writes(index, finish),
        finish=finish,
        on_delete=forget,
        claims=claims,
        replicas=replicas,
        tenant=tenant,
    )
