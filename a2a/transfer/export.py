"""`cstp export`: every decision of one collection as JSON Lines, sorted by id, in pages."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import BinaryIO, Final

from a2a.settings import Settings
from a2a.store.chroma import ChromaDecisionStore, open_store
from a2a.store.interface import DecisionStore
from a2a.store.lock import EmbeddedStoreLock
from a2a.transfer.lines import line_of

#: Records read from Chroma per call: far below SQLite's 32,766 bound variables a
#: statement (one per id), and a few MB of records, whatever the store's size.
EXPORT_PAGE: Final = 1000


def export(
    store: DecisionStore,
    out: BinaryIO,
    *,
    started: Callable[[int], None] | None = None,
    advance: Callable[[int], None] | None = None,
    page: int = EXPORT_PAGE,
) -> int:
    """Write every record of `store` to `out`, one line each (a2a.transfer.lines), sorted
    by id; the number written.

    Memory: every id (listed first, without metadata, in pages) and one page of records.
    `started(total)` once the ids are listed, `advance(n)` after each page. A record
    deleted meanwhile is left out; one written meanwhile may be missing: export a store
    no one writes to for an exact copy. Raises StoreUnavailable when Chroma fails.
    """
    ids = sorted(store.ids())
    if started is not None:
        started(len(ids))
    written = 0
    for start in range(0, len(ids), page):
        rows = store.get(ids=ids[start : start + page])  # by id, as `get` sorts them
        out.write(b"".join(line_of(row.decision) for row in rows))
        written += len(rows)
        if advance is not None:
            advance(len(ids[start : start + page]))
    return written


@contextmanager
def opened(settings: Settings, role: str) -> Iterator[ChromaDecisionStore]:
    """The store the settings name (its collection: CSTP_COLLECTION, a tenant's), locked
    for the block when embedded (a2a.store.lock: one process at a time), opened with the
    model identity its collection records, whatever the configured model: an export reads
    no vector and loads no model. Raises StoreLocked, StoreFolderUnwritable and
    StoreUnavailable."""
    lock = None
    if settings.chroma_url is None:
        lock = EmbeddedStoreLock(settings.store_lock_path, role)
        lock.acquire()
    try:
        probe = open_store(settings, model="")
        try:
            recorded = probe.recorded_model() or ""
        finally:
            probe.close()
        store = open_store(settings, model=recorded)
        try:
            store.check()
            yield store
        finally:
            store.close()
    finally:
        if lock is not None:
            lock.release()
