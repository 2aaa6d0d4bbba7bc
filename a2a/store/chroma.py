"""The one module that imports chromadb: a decision collection, embedded or on a server."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import chromadb
import httpx
from chromadb.config import Settings as ChromaSettings
from chromadb.errors import NotFoundError

from a2a.records import DecisionRecord
from a2a.store.errors import EmbeddingModelMismatch, StoreUnavailable
from a2a.store.metadata import MetadataValue, to_metadata

log = logging.getLogger(__name__)

#: Collection metadata key naming the embedding model that built the vectors.
MODEL_KEY = "embedding_model"
#: Collection metadata key that changes on every write, from whichever process wrote.
REVISION_KEY = "revision"


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """A stored record: id, its Chroma metadata, and its embedded text when asked for."""

    id: str
    metadata: dict[str, Any]
    document: str | None = None


@dataclass(frozen=True, slots=True)
class Hit:
    """One query result: record id, its Chroma metadata, cosine distance in [0, 2]."""

    id: str
    metadata: dict[str, Any]
    distance: float


class ChromaDecisionStore:
    """Decision vectors and metadata in one Chroma collection (cosine space).

    Connects lazily and again after any failure, so the service starts while a Chroma
    server is down and recovers when it returns. Every Chroma failure is raised as
    StoreUnavailable; a collection built with another model raises EmbeddingModelMismatch.
    Blocking: call it from a worker thread (see a2a.store.AsyncStore).
    """

    def __init__(
        self,
        *,
        collection: str,
        embedding_model: str,
        data_dir: Path | None = None,
        server_url: str | None = None,
        timeout_seconds: float = 10.0,
    ) -> None:
        if (data_dir is None) == (server_url is None):
            raise ValueError("give exactly one of data_dir (embedded) or server_url")
        self.collection_name = collection
        self.embedding_model = embedding_model
        self._data_dir = data_dir
        self._server_url = server_url
        self._timeout = timeout_seconds
        self._client: Any = None
        self._collection: Any = None
        self._lock = threading.Lock()

    @property
    def location(self) -> str:
        """Where the vectors live: the server URL or the embedded folder."""
        return self._server_url or str(self._data_dir)

    # -- reads -------------------------------------------------------------------------

    def query(
        self, embedding: Sequence[float], where: dict[str, Any] | None, n_results: int
    ) -> list[Hit]:
        """Up to `n_results` (>= 1) nearest records matching `where`; [] for an empty store."""
        collection = self._guarded(self._get_collection, create=False)
        if collection is None:
            return []
        result = self._guarded(
            collection.query,
            query_embeddings=[list(embedding)],
            n_results=n_results,
            where=where,
            include=["metadatas", "distances"],
        )
        ids, metadatas, distances = (
            result["ids"][0],
            result["metadatas"][0],
            result["distances"][0],
        )
        return [
            # float32 rounding can put an identical vector a hair below 0.
            Hit(id=i, metadata=dict(m or {}), distance=min(max(float(d), 0.0), 2.0))
            for i, m, d in zip(ids, metadatas, distances, strict=True)
        ]

    def content_hashes(self, ids: Sequence[str]) -> dict[str, str]:
        """Stored content hash of each of `ids` that exists (absent ids are left out)."""
        collection = self._guarded(self._get_collection, create=False)
        if collection is None or not ids:
            return {}
        result = self._guarded(collection.get, ids=list(ids), include=["metadatas"])
        return {
            i: str((m or {}).get("content_hash", ""))
            for i, m in zip(result["ids"], result["metadatas"], strict=True)
        }

    def count(self) -> int:
        """Number of records stored (0 when the collection does not exist yet)."""
        collection = self._guarded(self._get_collection, create=False)
        return 0 if collection is None else int(self._guarded(collection.count))

    def check(self) -> None:
        """Raise StoreUnavailable unless Chroma answers, EmbeddingModelMismatch on a bad model."""
        client = self._guarded(self._get_client)
        self._guarded(client.heartbeat)
        self._guarded(self._get_collection, create=False)

    def get(
        self,
        *,
        ids: Sequence[str] | None = None,
        where: dict[str, Any] | None = None,
        documents: bool = False,
        metadata: bool = True,
    ) -> list[StoredRecord]:
        """Stored records by `ids` and/or `where` (every record when both are None), by id.

        `documents=True` also returns each record's embedded text; `metadata=False` leaves
        metadata out (`{}`), which is much cheaper when only ids are needed.
        [] for an empty store.
        """
        collection = self._guarded(self._get_collection, create=False)
        if collection is None or (ids is not None and not ids):
            return []
        include = (["metadatas"] if metadata else []) + (["documents"] if documents else [])
        result = self._guarded(
            collection.get, ids=None if ids is None else list(ids), where=where, include=include
        )
        count = len(result["ids"])
        texts = result.get("documents") or [None] * count
        metadatas = result.get("metadatas") or [None] * count
        rows = [
            StoredRecord(id=i, metadata=dict(m or {}), document=d)
            for i, m, d in zip(result["ids"], metadatas, texts, strict=True)
        ]
        return sorted(rows, key=lambda row: row.id)

    def revision(self) -> str | None:
        """The collection's change marker: a new value after every write by any process.

        Read fresh from Chroma on each call (it is cheap), so caches built over the store
        (the keyword index) notice writes made by `cstp index` in another process.
        None when the collection does not exist yet.
        """
        client = self._guarded(self._get_client)
        try:
            collection = self._guarded(
                client.get_collection, self.collection_name, embedding_function=None
            )
        except StoreUnavailable as exc:
            if isinstance(exc.__cause__, NotFoundError):
                return None
            raise
        return str((collection.metadata or {}).get(REVISION_KEY, ""))

    # -- writes ------------------------------------------------------------------------

    def upsert(
        self,
        records: Sequence[DecisionRecord],
        embeddings: Sequence[Sequence[float]],
        documents: Sequence[str],
    ) -> None:
        """Insert or replace `records` (by id) with their vectors and embedded text."""
        if not records:
            return
        collection = self._guarded(self._get_collection, create=True)
        metadatas: list[dict[str, MetadataValue]] = [to_metadata(r) for r in records]
        self._guarded(
            collection.upsert,
            ids=[r.id for r in records],
            embeddings=[list(e) for e in embeddings],
            metadatas=metadatas,
            documents=list(documents),
        )
        self._guarded(
            collection.modify,
            metadata={MODEL_KEY: self.embedding_model, REVISION_KEY: uuid.uuid4().hex},
        )

    def close(self) -> None:
        """Drop the client; the next call connects again."""
        with self._lock:
            self._client = self._collection = None

    # -- connection --------------------------------------------------------------------

    def _guarded(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        """Run a Chroma call; any failure resets the connection and is StoreUnavailable."""
        try:
            return call(*args, **kwargs)
        except (EmbeddingModelMismatch, StoreUnavailable):
            raise
        except Exception as exc:
            # Errors are mapped by where they happen, not by type: a dead server shows up
            # as ValueError at construction and httpx.ConnectError on a call.
            self.close()
            log.warning("chroma call failed at %s: %r", self.location, exc)
            reason = (str(exc).strip().splitlines() or [""])[0][:200]
            raise StoreUnavailable(
                f"Chroma at {self.location} failed: {type(exc).__name__}: {reason}"
            ) from exc

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._open_client()
            return self._client

    def _open_client(self) -> Any:
        settings = ChromaSettings(anonymized_telemetry=False)
        if self._data_dir is not None:
            self._data_dir.mkdir(parents=True, exist_ok=True)
            return chromadb.PersistentClient(path=str(self._data_dir), settings=settings)
        url = urlsplit(str(self._server_url))
        client = chromadb.HttpClient(
            host=url.hostname or "localhost",
            port=url.port or (443 if url.scheme == "https" else 80),
            ssl=url.scheme == "https",
            settings=settings,
        )
        # Chroma's HTTP client waits forever by default; a stalled server must not hold a
        # worker thread for longer than the call's own timeout.
        session = getattr(getattr(client, "_server", None), "_session", None)
        if isinstance(session, httpx.Client):
            session.timeout = httpx.Timeout(self._timeout)
        return client

    def _get_collection(self, *, create: bool) -> Any:
        if self._collection is not None:
            return self._collection
        client = self._get_client()
        if create:
            collection = client.get_or_create_collection(
                self.collection_name,
                configuration={"hnsw": {"space": "cosine"}},
                metadata={MODEL_KEY: self.embedding_model},
                embedding_function=None,
            )
        else:
            try:
                collection = client.get_collection(self.collection_name, embedding_function=None)
            except NotFoundError:
                return None
        stored = (collection.metadata or {}).get(MODEL_KEY)
        if stored != self.embedding_model:
            raise EmbeddingModelMismatch(self.collection_name, str(stored), self.embedding_model)
        with self._lock:
            self._collection = collection
        return collection
