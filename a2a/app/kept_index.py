"""The search index a `cstp index` run keeps beside its writes, to leave a current snapshot.

Without it the run only wrote Chroma, and the next `cstp serve` read every record back
(62 s at 300k decisions) and then built the graph (40 s more, every query scanning
meanwhile), and wrote no snapshot until that build ended (issue 44, item 10). With it:

- at the start, the index is loaded as a replica loads it (the snapshot when there is
  one, caught up from its stamp; else from Chroma), only when the store will hold at
  least CSTP_INDEX_SNAPSHOT_MIN_RECORDS records (a smaller one loads in under a second);
- each batch the run writes goes into the index as Chroma stored it (vectors, content
  hash, `updated_at`): nothing is read back. Once the index passes the graph's threshold
  (a2a.index.search_index: min(CSTP_INDEX_GRAPH_MIN_ROWS, 5,000) rows) the graph is
  built, and grows with every batch after;
- at the end, the run having been the embedded folder's one writer, Chroma's marker is
  taken as the index's (LiveIndex.take_own_writes) and the snapshot written with the
  graph: the next `cstp serve` maps it and reads nothing from Chroma. Against a Chroma
  server the snapshot keeps the stamp of its load, and a start catches up from it.

A stop (the first Ctrl-C) ends a graph build within a step (a2a.index.search_index
BUILD_STEP_ROWS) and writes the snapshot with what is done: the records written and the
graph's nodes so far, which the next build goes on from. A run that failed on Chroma
writes none (a batch the store did not confirm may be stored: the next start reads it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from a2a.app.runtime import Runtime
from a2a.app.stack import live_index
from a2a.index import IndexedRecord
from a2a.index.sync import LiveIndex
from a2a.store.pages import StoredRecord
from a2a.tenants.names import DEFAULT_TENANT

log = logging.getLogger(__name__)


class KeptIndex:
    """One `cstp index` run's search index (a2a.index.sync.LiveIndex, used blocking).

    `open` (class method) loads it, or gives None when the store stays below the
    snapshot threshold; `written(stored, vectors)` is the Indexer's listener for each
    batch stored; `writes_done()` once the Indexer is done, before a prune; `pruned()`
    after a prune; `finish()` at the end.
    `stop()`: whether the run was asked to stop (its graph build then ends early).
    """

    def __init__(self, live: LiveIndex, stop: Callable[[], bool]) -> None:
        self._live = live
        self._stop = stop
        self._owned = self._changed = False

    @classmethod
    def open(
        cls,
        runtime: Runtime,
        incoming: int,
        stop: Callable[[], bool] | None = None,
        tenant: str = DEFAULT_TENANT,
    ) -> KeptIndex | None:
        """The loaded index of `runtime`'s store (`tenant`'s snapshot folder), or None when
        the store and the `incoming` records together stay below
        CSTP_INDEX_SNAPSHOT_MIN_RECORDS. Raises StoreUnavailable (the load)."""
        settings, store = runtime.settings, runtime.store
        if store.count() + incoming < max(settings.index_snapshot_min_records, 1):
            return None
        dimension = getattr(runtime.embedder, "dimension", None)
        live = live_index(settings, store, dimension, tenant)
        live.load_now()
        kept = cls(live, stop or (lambda: False))
        kept._grow()  # a store past the threshold whose snapshot had no graph
        return kept

    @property
    def live(self) -> LiveIndex:
        """The index kept (for tests and benches)."""
        return self._live

    def written(self, stored: Sequence[StoredRecord], vectors: npt.NDArray[np.float32]) -> None:
        """Put a batch Chroma just stored (`stored`, in the order of `vectors`) into the
        index, then build the graph if the index just passed its threshold."""
        self._changed = True
        self._live.apply(
            [
                IndexedRecord(s.id, s.decision, vector, s.decision.embedding_text(), s.updated_at)
                for s, vector in zip(stored, vectors, strict=True)
            ]
        )
        self._grow()

    def writes_done(self) -> None:
        """The Indexer's writes are all in the index: take Chroma's marker as the index's
        (embedded: this process is the folder's one writer; LiveIndex.take_own_writes).
        Call before any other write (a prune)."""
        if not self._owned:
            self._live.take_own_writes()
            self._owned = True

    def pruned(self) -> None:
        """After a prune removed records (and rewrote their neighbours' links): catch up
        with Chroma from the marker `writes_done` took (a freshness check: the records
        changed since, then the ids diff). Raises StoreUnavailable."""
        self.writes_done()
        self._live.refresh()
        self._changed = True

    def finish(self) -> None:
        """Finish the graph unless stopped, and write the snapshot when it would hold more
        than the current one (logged; a folder that cannot be written is logged too)."""
        self.writes_done()
        self._grow()
        if self._changed or self._live.snapshot_due():
            self._live.save_snapshot()

    def _grow(self) -> None:
        if self._live.index.wants_graph() and not self._stop():
            self._live.build_graph(self._stop)


__all__ = ["KeptIndex"]
