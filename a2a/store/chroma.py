"""The one module that imports chromadb: a decision collection, embedded or on a server."""

from __future__ import annotations

import contextlib
import itertools
import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import chromadb
import httpx
import numpy as np
import numpy.typing as npt
from chromadb.config import Settings as ChromaSettings
from chromadb.errors import ChromaError, NotFoundError

from a2a.concurrency import in_order
from a2a.errors import EmbeddingModelMismatch, StoreUnavailable
from a2a.records import DecisionRecord
from a2a.settings import Settings
from a2a.store.affinity import pin_chroma_threads
from a2a.store.disk import require_room
from a2a.store.metadata import (
    CONTENT_HASH_KEY,
    OPTIONAL_KEYS,
    UPDATED_AT_KEY,
    MetadataValue,
    stored_hash,
    to_metadata,
)
from a2a.store.pages import PAGE_SIZE, StoredPage, StoredRecord
from a2a.store.revisions import LocalRevisions

log = logging.getLogger(__name__)

#: Collection metadata key naming the embedding model that built the vectors.
MODEL_KEY = "embedding_model"
#: Collection metadata key that changes on every write, from whichever process wrote.
REVISION_KEY = "revision"
#: Embedded: the marker while a write's data goes in (see `_mark_pending`).
PENDING_PREFIX = "pending-"
#: Threads reading whole-store pages at once: Chroma's embedded `get` releases the GIL,
#: so a second reader overlaps Chroma's SQLite work with the caller's (a2a.index.sync).
READERS = 2
#: A page whose parts disagree in length is read again this many times before failing.
TORN_PAGE_RETRIES = 3
#: HNSW settings of collections this module creates. Every query is answered from the
#: in-process index (a2a.index), never from Chroma's HNSW graph, which Chroma still builds
#: on every write: a sparser graph (Chroma's defaults are 100 and 16) costs less to insert
#: into. Chroma keeps a collection's settings from its creation, so older collections
#: keep theirs and work unchanged.
HNSW_CONFIGURATION = {"space": "cosine", "ef_construction": 32, "max_neighbors": 8}


def _torn(result: dict[str, Any], include: Sequence[str]) -> str | None:
    """What disagrees in a `get` result whose parts should have one entry per id, or None.

    Seen from a Chroma server read racing a write: ids and metadata of records just
    written, with no embeddings (tests/store/test_paging.py).
    """
    count = len(result["ids"])
    for part in include:
        values = result.get(part)
        if part == "embeddings" and values is None:
            return f"{count} ids but no embeddings"
        if values is not None and len(values) != count:
            return f"{count} ids but {len(values)} {part}"
    return None


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
        single_core: bool = False,
        revisions: LocalRevisions | None = None,
        min_free_bytes: int = 0,
    ) -> None:
        """Exactly one of `data_dir` (embedded Chroma) and `server_url`.

        `revisions`: the in-memory revision markers of the embedded folder (see
        `revision`), shared by every store object on that folder in this process; None:
        a new one of this object's own (`self.revisions`, to pass to another).

        `single_core` (opt-in, CSTP_CHROMA_SINGLE_CORE): pin embedded Chroma's own threads to
        one CPU core when its client opens and before each write (a2a.store.affinity: its
        bulk writes cost about half as much); no effect on a server.

        `min_free_bytes` (CSTP_MIN_FREE_DISK_MIB): embedded, every write is refused with
        DiskFull while the folder's filesystem has less free (a2a.store.disk); 0: never.
        A Chroma server's disk is its own: no check.
        """
        if (data_dir is None) == (server_url is None):
            raise ValueError("give exactly one of data_dir (embedded) or server_url")
        self.collection_name = collection
        self.embedding_model = embedding_model
        self._data_dir = data_dir
        self._server_url = server_url
        self._timeout = timeout_seconds
        self._single_core = single_core
        self._min_free = min_free_bytes if data_dir is not None else 0
        self._client: Any = None
        self._collection: Any = None
        self._max_batch: int | None = None
        self._lock = threading.Lock()
        # The in-memory revision's key of an embedded collection; None for a server.
        self._key = None if data_dir is None else (str(data_dir.resolve()), collection)
        self.revisions = LocalRevisions() if revisions is None else revisions

    @property
    def location(self) -> str:
        """Where the vectors live: the server URL or the embedded folder."""
        return self._server_url or str(self._data_dir)

    # -- reads -------------------------------------------------------------------------

    def content_hashes(self, ids: Sequence[str]) -> dict[str, str]:
        """Stored content hash of each of `ids` that exists (absent ids are left out)."""
        collection = self._guarded(self._get_collection, create=False)
        if collection is None or not ids:
            return {}
        result = self._guarded(collection.get, ids=list(ids), include=["metadatas"])
        return {
            i: stored_hash(m or {}) or ""
            for i, m in zip(result["ids"], result["metadatas"], strict=True)
        }

    def count(self) -> int:
        """Number of records stored (0 when the collection does not exist yet)."""
        collection = self._guarded(self._get_collection, create=False)
        return 0 if collection is None else int(self._guarded(collection.count))

    def count_collections(self, keep: Callable[[str], bool]) -> int:
        """Records stored in every collection of this Chroma whose name `keep` accepts (the
        tenants' collections: a2a.app.service.Service.count_decisions), summed; one listing,
        then one count per collection. A collection deleted in between counts 0."""
        client = self._guarded(self._get_client)

        def count(name: str) -> int:
            try:
                return int(client.get_collection(name, embedding_function=None).count())
            except NotFoundError:
                return 0

        listed = self._guarded(client.list_collections)
        names = [str(getattr(c, "name", c)) for c in listed]
        return sum(self._guarded(count, name) for name in names if keep(name))

    def recorded_model(self) -> str | None:
        """The embedding model's identity the collection records, unchecked (None: no
        collection yet, or none recorded). Raises StoreUnavailable when Chroma fails."""
        client = self._guarded(self._get_client)

        def recorded() -> str | None:
            try:
                collection = client.get_collection(self.collection_name, embedding_function=None)
            except NotFoundError:
                return None
            model = (collection.metadata or {}).get(MODEL_KEY)
            return model if isinstance(model, str) else None

        found: str | None = self._guarded(recorded)
        return found

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

        `documents=True` also returns each record's embedded text (rebuilt from the stored
        record, or Chroma's document for a record stored without its JSON); `metadata=False`
        leaves metadata out (every field None), much cheaper when only ids are needed.
        Read in pages of PAGE_SIZE, so no call grows with the store. [] for an empty store.
        """
        rows: list[StoredRecord] = []
        for page in self.pages(ids=ids, where=where, documents=documents, metadata=metadata):
            texts: list[str | None] = [None] * len(page.ids)
            if page.documents is not None:
                texts = list(page.documents)
            rows.extend(
                StoredRecord.of(i, m, d)
                for i, m, d in zip(page.ids, page.metadatas, texts, strict=True)
            )
        return sorted(rows, key=lambda row: row.id)

    def pages(
        self,
        *,
        ids: Sequence[str] | None = None,
        where: dict[str, Any] | None = None,
        documents: bool = False,
        metadata: bool = True,
        embeddings: bool = False,
        page_size: int = PAGE_SIZE,
        readers: int = 1,
    ) -> Iterator[StoredPage]:
        """The records by `ids` and/or `where` (all when both are None), page by page.

        Pages by id chunks when `ids` is given, else by limit/offset; with `readers` > 1
        the limit/offset pages are read by that many threads at once, a few pages ahead
        of the caller, and still yielded in order. A page read while another process
        writes may miss or repeat a record; callers that need every record (the search
        index) reconcile afterwards by `updated_at` and ids.
        """
        collection = self._guarded(self._get_collection, create=False)
        if collection is None or (ids is not None and not ids):
            return
        include = (
            (["metadatas"] if metadata else [])
            + (["documents"] if documents else [])
            + (["embeddings"] if embeddings else [])
        )
        if ids is not None:
            unique = list(dict.fromkeys(ids))
            for start in range(0, len(unique), page_size):
                chunk = unique[start : start + page_size]
                yield self._page(collection.get, ids=chunk, where=where, include=include)
            return

        def read(offset: int) -> StoredPage:
            return self._page(
                collection.get, where=where, include=include, limit=page_size, offset=offset
            )

        yield from _read_ahead(read, page_size, max(readers, 1))

    def _page(self, call: Any, **kwargs: Any) -> StoredPage:
        """One page read with `call(**kwargs)`; a torn one (see `_torn`) is read again,
        waiting 0.05, 0.1, 0.2 s, and after TORN_PAGE_RETRIES raises StoreUnavailable."""
        include = kwargs["include"]
        wants_text = "documents" in include
        if wants_text and "metadatas" not in include:
            kwargs["include"] = [*include, "metadatas"]  # the text is derived from the record
        for attempt in itertools.count():
            result = self._guarded(call, **kwargs)
            torn = _torn(result, kwargs["include"])
            if torn is None:
                break
            if attempt == TORN_PAGE_RETRIES:
                raise StoreUnavailable(f"Chroma at {self.location} returned a torn page: {torn}")
            log.warning(
                "chroma at %s returned a torn page (%s); reading it again", self.location, torn
            )
            time.sleep(0.05 * 2**attempt)
        count = len(result["ids"])
        ids = list(result["ids"])
        # Chroma builds fresh dicts on every read: kept as they are, not copied.
        metadatas = [m or {} for m in (result.get("metadatas") or [None] * count)]
        texts = result.get("documents") or [None] * count
        vectors = result.get("embeddings") if "embeddings" in include else None
        decoded = None
        if wants_text:  # each record decoded once, for its text and for `rows()`
            decoded = [StoredRecord.of(i, m) for i, m in zip(ids, metadatas, strict=True)]
        return StoredPage(
            ids=ids,
            metadatas=metadatas if "metadatas" in include else [{}] * count,
            documents=(
                None
                if decoded is None
                else [_embedded_text(r, d) for r, d in zip(decoded, texts, strict=True)]
            ),
            embeddings=None if vectors is None else np.asarray(vectors, dtype=np.float32),
            decoded=decoded if "metadatas" in include else None,
        )

    def changed_since(self, updated_at_ms: int) -> list[StoredRecord]:
        """Records whose `updated_at` is at or after `updated_at_ms`, paged.

        Records written before `updated_at` existed have none and are never returned.
        """
        where = {UPDATED_AT_KEY: {"$gte": int(updated_at_ms)}}
        return self.get(where=where)

    def ids(self) -> list[str]:
        """Every stored id, read in pages (no metadata: cheap)."""
        return [i for page in self.pages(metadata=False, page_size=4 * PAGE_SIZE) for i in page.ids]

    def collection_names(self) -> list[str]:
        """The names of every collection in this Chroma (embedded folder or server), sorted.

        Server: listed by Chroma at each call (other processes create collections).
        Embedded: this process is the folder's only writer, so after the first listing the
        names are kept in memory (`revisions`, shared by this process's store objects on
        the folder) with the collections their writes create: no Chroma call (listing 50
        collections cost ~2 ms, each org-level call's).
        """
        return sorted(self.collection_markers())

    def collection_markers(self) -> dict[str, str | None]:
        """Every collection's name -> its change marker as the listing read it (`revision`;
        server), or None (embedded: the markers are in memory, `revision_in_memory`).

        One Chroma call on a server, none embedded after the first (`collection_names`): an
        org-level call checks every tenant's freshness from it, rather than with a call per
        tenant (a2a.index.sync.LiveIndex.current's `marker`).
        """
        folder = None if self._key is None else self._key[0]
        if folder is not None:
            known = self.revisions.names(folder)
            if known is not None:
                return dict.fromkeys(known)
        client = self._guarded(self._get_client)
        listed = self._guarded(client.list_collections)
        if folder is not None:
            self.revisions.listed(folder, sorted(str(getattr(c, "name", c)) for c in listed))
            return dict.fromkeys(self.revisions.names(folder) or [])
        # As `revision` reads it: "" when a collection has no marker yet.
        return {
            str(getattr(c, "name", c)): (
                str((c.metadata or {}).get(REVISION_KEY, "")) if hasattr(c, "metadata") else None
            )
            for c in listed
        }

    @property
    def collection_names_in_memory(self) -> bool:
        """True when `collection_names()` makes no Chroma call (embedded, after its first
        listing): callers may then call it on an event loop."""
        return self._key is not None and self.revisions.names(self._key[0]) is not None

    def max_batch_size(self) -> int:
        """The most records Chroma takes in one write (its own limit, from the client)."""
        client = self._guarded(self._get_client)
        return int(self._guarded(client.get_max_batch_size))

    def revision(self) -> str | None:
        """The collection's change marker: a new value after every write by any process.

        Server: read fresh from Chroma on each call (one cheap call), so caches built over
        the store (the search index) notice writes made by other processes. Embedded: this
        process is the folder's only writer (a2a.store.lock), so after the first read the
        marker is kept in memory (`revisions`, shared by this process's store objects on
        the folder) and changed by their writes: no Chroma call. None when the collection
        does not exist yet.
        """
        key = self._key
        if key is not None and key in self.revisions:
            return self.revisions.get(key)
        client = self._guarded(self._get_client)
        try:
            collection = self._guarded(
                client.get_collection, self.collection_name, embedding_function=None
            )
        except NotFoundError:
            revision = None
        else:
            revision = str((collection.metadata or {}).get(REVISION_KEY, ""))
        if key is not None:
            self.revisions.first_read(key, revision)
        return revision

    @property
    def revision_in_memory(self) -> bool:
        """True when `revision()` makes no Chroma call (embedded, after its first read):
        callers may then call it on an event loop."""
        return self._key is not None and self._key in self.revisions

    # -- writes ------------------------------------------------------------------------

    def upsert(
        self,
        records: Sequence[DecisionRecord],
        embeddings: Sequence[Sequence[float]] | npt.NDArray[np.floating],
        *,
        only_new: bool = False,
    ) -> list[StoredRecord]:
        """Insert or replace `records` (by id) with their vectors.

        Stamps each record's metadata with `updated_at` (epoch ms, this machine's clock,
        taken just before the write) so that search indexes in other processes find the
        change (a2a.index.sync), then changes the collection's revision marker (embedded:
        before the data too, `_mark_pending`). Writes in
        chunks of Chroma's max batch size. Returns each record as stored (its content hash as
        `origin_hash`, the write's `updated_at`), in order.

        The embedded text is not written as Chroma's document: embedded Chroma keeps a
        trigram full-text index of documents, which nothing here queries and which cost
        ~35% of its write CPU; reads derive the text from the stored record.

        `only_new`: Chroma's `add`, which keeps a record already stored under an id and
        stores the others (first writer wins, whichever process wrote first); read the ids
        back to learn which were stored.
        """
        if not records:
            return []
        self._room_to_write()
        collection = self._guarded(self._get_collection, create=True)
        self._pin()
        stamp = time.time_ns() // 1_000_000
        kept: list[dict[str, MetadataValue]] = [
            {**to_metadata(r), UPDATED_AT_KEY: stamp} for r in records
        ]
        # Chroma's upsert merges metadata: None deletes a key the record no longer has.
        cleared: dict[str, MetadataValue | None] = dict.fromkeys(OPTIONAL_KEYS)
        metadatas = kept if only_new else [{**cleared, **m} for m in kept]
        vectors = np.asarray(embeddings, dtype=np.float32)
        batch = self._batch_size()
        try:
            self._mark_pending(collection)
            for start in range(0, len(records), batch):
                end = start + batch
                self._guarded(
                    collection.add if only_new else collection.upsert,
                    ids=[r.id for r in records[start:end]],
                    embeddings=vectors[start:end],
                    metadatas=metadatas[start:end],
                )
            # Inside the failure handling: a write stored but not announced is bumped again.
            self._bump_revision(collection)
        except BaseException:
            self._bump_after_failure(collection)
            raise
        # The hash to_metadata wrote, as a read would give it: the record's origin_hash.
        return [
            StoredRecord(
                r.id, r.model_copy(update={"origin_hash": m[CONTENT_HASH_KEY]}), None, stamp
            )
            for r, m in zip(records, kept, strict=True)
        ]

    def delete(self, ids: Sequence[str]) -> None:
        """Remove `ids` (absent ids are ignored) and change the revision marker."""
        self._room_to_write()
        collection = self._guarded(self._get_collection, create=False)
        if collection is None or not ids:
            return
        self._pin()
        try:
            self._mark_pending(collection)
            for start in range(0, len(ids), PAGE_SIZE):
                self._guarded(collection.delete, ids=list(ids[start : start + PAGE_SIZE]))
        except BaseException:
            self._bump_after_failure(collection)
            raise
        self._bump_revision(collection)

    def touch(self) -> None:
        """Change the revision marker, so that every search index looks again (a retry of
        a write that may have been stored without its marker change: issue 25)."""
        self._room_to_write()
        collection = self._guarded(self._get_collection, create=False)
        if collection is not None:
            self._bump_revision(collection)

    def _room_to_write(self) -> None:
        """Embedded: DiskFull, before Chroma is called, when the disk is nearly full."""
        if self._min_free and self._data_dir is not None:  # set only when embedded
            require_room(self._data_dir, self._min_free)

    def _bump_after_failure(self, collection: Any) -> None:
        """A write failed, but earlier chunks (or the failed call itself) may have landed:
        change the marker anyway so that search indexes look (best effort on Chroma)."""
        with contextlib.suppress(Exception):
            self._bump_revision(collection)

    def _mark_pending(self, collection: Any) -> None:
        """Embedded: before a write's data, Chroma's marker becomes a value no snapshot is
        stamped with (this process's own marker, which stamps snapshots, changes only
        after the data): a writer killed between its data and `_bump_revision` leaves a
        marker that no snapshot matches, so the next load catches up (a2a.index.sync
        trusts a snapshot whose stamp is the marker, and reads nothing from Chroma)."""
        if self._key is not None:
            self._guarded(
                collection.modify,
                metadata={
                    MODEL_KEY: self.embedding_model,
                    REVISION_KEY: f"{PENDING_PREFIX}{uuid.uuid4().hex}",
                },
            )

    def _bump_revision(self, collection: Any) -> None:
        revision = uuid.uuid4().hex
        if self._key is not None:  # before Chroma is told: a failed write may have landed
            self.revisions.written(self._key, revision)
        self._guarded(
            collection.modify, metadata={MODEL_KEY: self.embedding_model, REVISION_KEY: revision}
        )

    def _batch_size(self) -> int:
        if self._max_batch is None:
            self._max_batch = self.max_batch_size()
        return self._max_batch

    def close(self) -> None:
        """Drop the client; the next call connects again."""
        with self._lock:
            self._client = self._collection = None

    # -- connection --------------------------------------------------------------------

    def _guarded(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        """Run a Chroma call; Chroma itself failing is StoreUnavailable, the rest propagates.

        Only failures of Chroma (see `is_chroma_failure`) reset the connection and become
        StoreUnavailable (CSTP -32003); a malformed `where`, a bad name or a bug of ours is
        raised unchanged, so the dispatcher answers -32603 and logs its traceback.
        """
        try:
            return call(*args, **kwargs)
        except StoreUnavailable:
            self.close()
            raise
        except Exception as exc:
            if not is_chroma_failure(exc):
                raise
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

    def _pin(self) -> None:
        """Embedded Chroma's threads, including any started since the last call, on one
        core (a2a.store.affinity), when `single_core` is on; before writes, which gain."""
        if self._single_core and self._data_dir is not None:
            pin_chroma_threads()

    def _open_client(self) -> Any:
        settings = ChromaSettings(anonymized_telemetry=False)
        if self._data_dir is not None:
            self._data_dir.mkdir(parents=True, exist_ok=True)
            embedded = chromadb.PersistentClient(path=str(self._data_dir), settings=settings)
            self._pin()
            return embedded
        url = urlsplit(str(self._server_url))
        try:
            client = chromadb.HttpClient(
                host=url.hostname or "localhost",
                port=url.port or (443 if url.scheme == "https" else 80),
                ssl=url.scheme == "https",
                settings=settings,
            )
        except ValueError as exc:
            # chromadb.HttpClient checks the server at construction and reports a dead one
            # as ValueError ("Could not connect to a Chroma server"): here it is Chroma down.
            raise StoreUnavailable(f"Chroma at {self.location} is unreachable: {exc}") from exc
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
                configuration={"hnsw": HNSW_CONFIGURATION},
                metadata={MODEL_KEY: self.embedding_model},
                embedding_function=None,
            )
            if self._key is not None:
                self.revisions.created(self._key)
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


def _embedded_text(stored: StoredRecord, document: str | None) -> str:
    """The text a record was embedded from: rebuilt from its stored JSON, or Chroma's
    document for a record stored before records were kept whole ("" when neither)."""
    return stored.decision.embedding_text() if stored.whole else document or ""


def _read_ahead(
    read: Callable[[int], StoredPage], page_size: int, readers: int
) -> Iterator[StoredPage]:
    """Pages `read(0)`, `read(page_size)`, ... in order, until one comes back short.

    One reader reads in the caller's thread; more read in threads, `readers + 1` pages
    ahead (an extra page or two may be read past the end). Leaving early, or an error
    of one read, cancels the reads not started.
    """
    offsets = itertools.count(0, page_size)
    with contextlib.closing(in_order(read, offsets, readers, name="cstp-page")) as pages:
        for page in pages:
            if page.ids:
                yield page
            if len(page.ids) < page_size:
                return


#: HTTP statuses of a Chroma server failing (its own errors and a proxy's in front of it).
_SERVER_FAILURE = 500


def is_chroma_failure(exc: BaseException) -> bool:
    """True when `exc` means Chroma itself failed: retryable, CSTP -32003.

    Connection refused or reset, a timeout of a call that reached Chroma, a 5xx or 429
    from the server or a proxy in front of it, the embedded SQLite database locked or
    failing. Not a Chroma client validation error, a 4xx, or anything else (our own bugs).
    """
    if isinstance(exc, httpx.TimeoutException | httpx.NetworkError | httpx.RemoteProtocolError):
        return True
    if isinstance(exc, httpx.HTTPStatusError):
        code = exc.response.status_code
        return code >= _SERVER_FAILURE or code == 429
    if type(exc) is Exception and isinstance(exc.__context__, httpx.HTTPStatusError):
        # Chroma's HTTP client raises a bare Exception(body) for an error status whose body
        # is not one of Chroma's errors (a proxy's "Internal Server Error"), while handling
        # the HTTPStatusError that carries the status.
        return is_chroma_failure(exc.__context__)
    if isinstance(exc, ChromaError):
        code = exc.code()
        return code >= _SERVER_FAILURE or code == 429
    return isinstance(exc, ConnectionError | TimeoutError | sqlite3.OperationalError)


def open_store(
    settings: Settings,
    collection: str | None = None,
    revisions: LocalRevisions | None = None,
    *,
    model: str,
) -> ChromaDecisionStore:
    """The store the settings name: a Chroma server when `chroma_url` is set, else embedded;
    its collection `collection` (a tenant's, a2a.tenants.names), else CSTP_COLLECTION.
    `revisions`: those of another store on the same folder (every store object of a
    process on one embedded folder shares one; see ChromaDecisionStore). `model`: the
    embedding model's identity (its embedder's `name`), which the collection records."""
    server_url = None if settings.chroma_url is None else str(settings.chroma_url)
    return ChromaDecisionStore(
        collection=collection or settings.collection,
        embedding_model=model,
        data_dir=None if server_url else settings.data_dir / "chroma",
        server_url=server_url,
        timeout_seconds=settings.chroma_timeout_seconds,
        single_core=settings.chroma_single_core,
        revisions=revisions,
        min_free_bytes=settings.min_free_disk_mib * 1024 * 1024,
    )
