"""DecisionStore: the store methods the services, the search index and the CLI call."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from a2a.records import DecisionRecord
from a2a.store.pages import PAGE_SIZE, StoredPage, StoredRecord


class DecisionStore(Protocol):
    """The system of record for decisions (ChromaDecisionStore is the one implementation).

    Reads return records (`StoredRecord.decision`, `StoredPage.rows()`): no
    caller outside `a2a.store` and `a2a.index` reads Chroma's metadata dicts. Blocking:
    call from a worker thread (a2a.store.AsyncStore). Chroma failing raises
    StoreUnavailable; a collection built with another model EmbeddingModelMismatch.
    See ChromaDecisionStore for each method's shapes.
    """

    @property
    def location(self) -> str:
        """Where the records live: a server URL or a folder."""
        ...

    def get(
        self,
        *,
        ids: Sequence[str] | None = None,
        where: dict[str, Any] | None = None,
        documents: bool = False,
        metadata: bool = True,
    ) -> list[StoredRecord]:
        """Records by `ids` and/or a Chroma `where` (all when both are None), by id."""
        ...

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
        """The same records, page by page (for whole-store reads); `readers` threads
        read ahead of the caller."""
        ...

    def changed_since(self, updated_at_ms: int) -> list[StoredRecord]:
        """Records written at or after `updated_at_ms` (epoch ms)."""
        ...

    def content_hashes(self, ids: Sequence[str]) -> dict[str, str]:
        """Stored content hash per id of `ids` that exists."""
        ...

    def ids(self) -> list[str]:
        """Every stored id."""
        ...

    def count(self) -> int:
        """Number of records stored."""
        ...

    def revision(self) -> str | None:
        """A marker that changes on every write by any process; None before the first."""
        ...

    @property
    def revision_in_memory(self) -> bool:
        """True when `revision()` is answered from memory (no I/O, safe on an event loop)."""
        ...

    def check(self) -> None:
        """Return when the store answers; raise StoreUnavailable otherwise."""
        ...

    def max_batch_size(self) -> int:
        """The most records one `upsert` call writes at once."""
        ...

    def upsert(
        self,
        records: Sequence[DecisionRecord],
        embeddings: Sequence[Sequence[float]] | npt.NDArray[np.floating],
        *,
        only_new: bool = False,
    ) -> list[StoredRecord]:
        """Insert or replace `records`; each as stored (for the search index).

        `only_new`: add only where the id is free (an id stored already keeps its record).
        """
        ...

    def delete(self, ids: Sequence[str]) -> None:
        """Remove `ids` (absent ids are ignored)."""
        ...

    def touch(self) -> None:
        """Change the revision marker (no record changes)."""
        ...

    def close(self) -> None:
        """Drop the connection; the next call connects again."""
        ...
