"""Where decisions live: a Chroma collection behind a small interface."""

from __future__ import annotations

from a2a.settings import Settings
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore, StoredRecord
from a2a.store.errors import EmbeddingModelMismatch, StoreLocked, StoreUnavailable
from a2a.store.interface import DecisionStore
from a2a.store.lock import EmbeddedStoreLock
from a2a.store.revisions import LocalRevisions
from a2a.store.stored import StoredDecision


def open_store(
    settings: Settings, collection: str | None = None, revisions: LocalRevisions | None = None
) -> ChromaDecisionStore:
    """The store the settings name: a Chroma server when `chroma_url` is set, else embedded;
    its collection `collection` (a tenant's, a2a.tenants.names), else CSTP_COLLECTION.
    `revisions`: those of another store on the same folder (every store object of a
    process on one embedded folder shares one; see ChromaDecisionStore)."""
    server_url = None if settings.chroma_url is None else str(settings.chroma_url)
    return ChromaDecisionStore(
        collection=collection or settings.collection,
        embedding_model=settings.embedding_model,
        data_dir=None if server_url else settings.data_dir / "chroma",
        server_url=server_url,
        timeout_seconds=settings.chroma_timeout_seconds,
        single_core=settings.chroma_single_core,
        revisions=revisions,
    )


__all__ = [
    "AsyncStore",
    "ChromaDecisionStore",
    "DecisionStore",
    "EmbeddedStoreLock",
    "EmbeddingModelMismatch",
    "StoreLocked",
    "StoreUnavailable",
    "StoredDecision",
    "StoredRecord",
    "open_store",
]
