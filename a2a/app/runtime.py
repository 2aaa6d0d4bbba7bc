"""The long-lived parts of a running service or index run, opened and closed together."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from a2a.app.decisions import writer_locks
from a2a.decisions.replica_locks import WriterLocks
from a2a.embeddings import Embedder, embedder_of
from a2a.errors import StoreUnavailable
from a2a.results import EmbeddingModel
from a2a.settings import Settings
from a2a.store.chroma import ChromaDecisionStore, open_store
from a2a.store.lock import EmbeddedStoreLock

log = logging.getLogger(__name__)


def _recorded(settings: Settings) -> str | None:
    """The model identity the configured collection records (None: none yet, or Chroma
    not answering): a provider's model then needs no call to say its dimension, and the
    service starts while the provider is down (keyword queries and reads work)."""
    store = open_store(settings, model="")
    try:
        return store.recorded_model()
    except StoreUnavailable:
        return None
    finally:
        store.close()


@dataclass
class Runtime:
    """Settings, embedding model, store, and (embedded mode) the lock on the store folder."""

    settings: Settings
    embedder: Embedder
    store: ChromaDecisionStore
    lock: EmbeddedStoreLock | None = None

    @classmethod
    def open(cls, settings: Settings, role: str, embedder: Embedder | None = None) -> Runtime:
        """Lock the embedded store (if used), load the model, check the collection's model.

        Raises StoreLocked when another process has the embedded store,
        StoreFolderUnwritable when its folder cannot be written, EmbeddingModelError when
        the model cannot load (or a provider cannot say its dimension),
        EmbeddingModelMismatch when the collection was built with another model (its
        identity: the embedder's `name`, which the agent card shows too). A Chroma server
        that is down is only logged: the service starts and recovers when it returns.
        """
        lock = None
        if settings.chroma_url is None:
            lock = EmbeddedStoreLock(settings.store_lock_path, role)
            lock.acquire()
        try:
            embedder = embedder or embedder_of(settings, lambda: _recorded(settings))
            store = open_store(settings, model=embedder.name)
            try:
                store.check()
            except StoreUnavailable as exc:
                log.warning("starting without Chroma: %s", exc)
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        return cls(settings=settings, embedder=embedder, store=store, lock=lock)

    @contextmanager
    def writer_locks(self) -> Iterator[WriterLocks | None]:
        """The locks an index run takes in the Redis the service's replicas share (None
        without one): they may be updating the same records, and each batch takes turns with
        them (docs/lifecycle.md, "Limits"). Closed after the block."""
        locks = writer_locks(self.settings, self.store.collection_name)
        try:
            yield locks
        finally:
            if locks is not None:
                locks.close()

    @property
    def embedding_model(self) -> EmbeddingModel | None:
        """The model's identity as the agent card names it and peers compare it (CONTRACT.md,
        Federation): the name its collection records and its dimensions (None: a model
        that does not say its dimension)."""
        dimension = getattr(self.embedder, "dimension", None)
        if not isinstance(dimension, int):
            return None
        return EmbeddingModel(name=self.embedder.name, dimensions=dimension)

    def close(self) -> None:
        """Drop the Chroma client (and a provider's connections), release the lock."""
        self.store.close()
        close = getattr(self.embedder, "close", None)
        if callable(close):
            close()
        if self.lock is not None:
            self.lock.release()
