"""Store failures, free of any transport: the RPC layer maps them to error codes."""

from __future__ import annotations


class StoreUnavailable(Exception):
    """Chroma could not answer: connection refused, timeout, server error (CSTP -32003)."""

    #: Why, when the client can act on it (CSTP -32003 `data.reason`); None: not said.
    reason: str | None = None


class DiskFull(StoreUnavailable):
    """A write refused before it reached the embedded store: its disk is (nearly) full
    (a2a.store.disk). Retryable once space is freed; nothing stored is touched."""

    reason = "disk full"


class EmbeddingModelMismatch(Exception):
    """The collection was built with another embedding model than the configured one."""

    def __init__(self, collection: str, stored: str, configured: str) -> None:
        super().__init__(
            f"collection {collection!r} was built with embedding model {stored!r} but the "
            f"service is configured with {configured!r}; set CSTP_EMBEDDING_MODEL={stored} "
            f"or re-index into a new collection (CSTP_COLLECTION)"
        )
        self.stored = stored
        self.configured = configured


class StoreLocked(Exception):
    """Another process holds the embedded store (two writers corrupt Chroma's files)."""


class StoreFolderUnwritable(Exception):
    """The embedded store's folder (CSTP_DATA_DIR) cannot be written: read-only, or not
    ours. Chroma's embedded store and its lock file live there, so nothing can start."""

    def __init__(self, folder: str, reason: str) -> None:
        super().__init__(
            f"the data folder {folder} cannot be written ({reason}): the embedded store keeps "
            f"its files there; make it writable or set CSTP_DATA_DIR to a writable folder"
        )
        self.folder = folder
