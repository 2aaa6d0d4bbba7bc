"""Store failures, free of any transport: the RPC layer maps them to error codes."""

from __future__ import annotations


class StoreUnavailable(Exception):
    """Chroma could not answer: connection refused, timeout, server error (CSTP -32003)."""


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
