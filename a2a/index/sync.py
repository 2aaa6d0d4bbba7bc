"""LiveIndex: the SearchIndex loaded from Chroma at start and kept fresh at each query."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import anyio
import numpy as np
import numpy.typing as npt

from a2a.concurrency import Lane
from a2a.errors import EmbeddingModelMismatch, SnapshotRefused, StoreUnavailable
from a2a.index.search_index import (
    GRAPH_MIN_FRACTION,
    GRAPH_MIN_ROWS,
    IndexedRecord,
    SearchIndex,
)
from a2a.index.snapshot import SnapshotStamp, load_index, snapshot_count, write_snapshot
from a2a.index.staleness import chroma_known_down, mark_stale, may_answer_stale
from a2a.index.vectors import VectorDtype
from a2a.store.chroma import READERS
from a2a.store.interface import DecisionStore
from a2a.store.pages import StoredPage

log = logging.getLogger(__name__)

#: Load retries wait this long at first, doubling up to BACKOFF_MAX (seconds).
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 10.0
#: Threads of an index's own background lane: its load or check, and a snapshot or graph
#: (one of each at a time).
BACKGROUND_THREADS = 3
Status = Literal["warming", "ready", "chroma unreachable", "evicted"]


class LiveIndex:
    """A SearchIndex of one Chroma collection, loaded once and refreshed incrementally.

    Load: every record, paged (DecisionStore.pages), retried with backoff while
    Chroma is down. Freshness: each query calls `current()`, which reads the collection's
    revision marker (one cheap Chroma call for a server, concurrent queries sharing one
    check that started after they arrived; a dict lookup on the event loop for an
    embedded folder, whose only writer is this process); when it changed, only records
    whose `updated_at` is at or after the watermark are read, and only those whose
    `updated_at` or content hash differ are fetched whole. Deletions show as a count
    below the index's, and are found by diffing ids. The watermark is the start of the
    last refresh minus `margin_ms`, which covers writers' clock skew and a write slower
    than that.
    Records without `updated_at` (written before it existed) are loaded at start and
    found by the id diff when new, but an in-place change of one is seen only at restart.

    Snapshots (a2a.index.snapshot), with `snapshots` (a folder) and `model`: the load maps
    the folder's current snapshot and catches up from its stamp through the freshness
    check above (`refresh`), instead of reading every record; a missing, refused or
    unloadable snapshot is logged and the index read from Chroma. Once loaded with at
    least `snapshot_min_records` records and changes since the snapshot (or none), a new
    snapshot is written at once (under the read lock: writes wait for it), before any
    graph build, so a restart maps it instead of reading Chroma; a folder this process
    cannot write is logged, and used read-only. The HNSW graph (a2a.index.graph) is built
    after the load or once the index grows past `graph_min_rows`; until it is, every
    search scans exactly. Once built, the snapshot is written again with it. A `stop()`
    during a build ends it within BUILD_STEP_ROWS rows and writes the snapshot with the
    nodes added so far (a partial graph), which the next build goes on from. Loads,
    checks, snapshot writes and graph builds run on `background` (the service's
    background lane, a2a.concurrency; default: a lane of this index's own).

    A batch command (`cstp index`, a2a.app.kept_index) uses the blocking steps instead:
    `load_now`, `apply`/`forget` for what it writes, `take_own_writes`, then
    `index.build_graph` and `save_snapshot`.
    """

    def __init__(
        self,
        store: DecisionStore,
        *,
        timeout_seconds: float = 10.0,
        margin_ms: int = 10_000,
        vector_dtype: VectorDtype = "float32",
        clock_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
        snapshots: Path | None = None,
        model: str | None = None,
        dimension: int | None = None,
        snapshot_min_records: int = 0,
        graph_min_rows: int | None = GRAPH_MIN_ROWS,
        graph_min_fraction: float = GRAPH_MIN_FRACTION,
        stale_seconds: float = 300.0,
        background: Lane | None = None,
    ) -> None:
        """`stale_seconds`: how long after the last successful check with Chroma a call
        inside a2a.index.staleness.stale_allowed() is answered from the loaded index while
        Chroma cannot be reached (0: never; CSTP_STALE_READS_SECONDS)."""
        self._store = store
        self._background = background or Lane(BACKGROUND_THREADS, name="cstp-index")
        exact = self._exact_vectors if vector_dtype != "float32" else None
        self._index_options = {
            "exact_vectors": exact,
            "graph_min_rows": graph_min_rows,
            "graph_min_fraction": graph_min_fraction,
            "graph_inline": False,
        }
        self.index = SearchIndex(vector_dtype, **self._index_options)  # type: ignore[arg-type]
        self._snapshots = snapshots if model is not None else None
        self._model, self._dimension = model, dimension
        self._snapshot_min_records = snapshot_min_records
        self._snapshot_revision: str | None = None
        #: Whether the current snapshot holds a graph (one built since is worth a new one:
        #: each load would build it again).
        self._snapshot_graph = False
        #: Nodes of the partial graph the current snapshot holds (0: none).
        self._snapshot_partial = 0
        #: Set by `stop()`: a graph build in progress ends at its next step.
        self._stopping = threading.Event()
        self._saver: asyncio.Task[None] | None = None
        self._timeout = timeout_seconds
        self._margin_ms = margin_ms
        self._clock_ms = clock_ms
        self._revision: str | None = None
        self._watermark_ms = 0
        self._loaded = False
        #: True from an unload until the next load ends (status `evicted`).
        self._evicted = False
        self._attempts = 0
        self._retry_now: asyncio.Event | None = None
        self._failure: StoreUnavailable | None = None
        self._fault: BaseException | None = None
        self._loader: asyncio.Task[None] | None = None
        self._changed: asyncio.Event | None = None
        self._check: asyncio.Task[None] | None = None
        self._check_started = 0.0
        self._stale_seconds = stale_seconds
        #: Epoch seconds of the last successful check with Chroma (load or refresh).
        self._checked_at: float | None = None
        #: True when the last check with Chroma failed.
        self._failing = False

    @property
    def status(self) -> Status:
        """`ready` once loaded; before that `warming`, or `chroma unreachable` between retries;
        `evicted` after `unload()` until a call loads it again (not warming: the replica is
        as ready as before, that call only waits for the load)."""
        if self._loaded:
            return "ready"
        if self._failure is not None:
            return "chroma unreachable"
        return "evicted" if self._evicted else "warming"

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start loading in the background (idempotent); call from the event loop.

        Changes nothing process-wide: the thread limits of BLAS and faiss are the entry
        point's (a2a.app.process.configure_process, called by `cstp serve` and `cstp index`).
        """
        if self._loader is None:
            self._changed = asyncio.Event()
            self._retry_now = asyncio.Event()
            self._loader = asyncio.get_running_loop().create_task(self._load_until_done())

    async def settle(self, seconds: float) -> None:
        """Wait up to `seconds` for the load to finish or fail (a small store is then ready
        when the service starts answering); returns quietly either way."""
        self.start()
        if self._loaded or self._failure is not None or self._fault is not None:
            return  # nothing to wait for (most calls): no cancel scope
        assert self._changed is not None
        with anyio.move_on_after(seconds):
            while not self._loaded and self._failure is None and self._fault is None:
                self._changed.clear()
                await self._changed.wait()

    async def stop(self) -> None:
        """Stop loading (the thread of a Chroma call in flight finishes on its own) and
        any graph build (within BUILD_STEP_ROWS rows; the snapshot is then written with
        the nodes added so far, and the next build goes on from them)."""
        self._stopping.set()
        if self._loader is not None and not self._loader.done():
            self._loader.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.gather(self._loader, return_exceptions=True)
        if self._saver is not None:  # a snapshot being written is finished, not cut short
            with anyio.CancelScope(shield=True):
                await asyncio.gather(self._saver, return_exceptions=True)

    async def maintained(self) -> None:
        """Wait until what the load started on the background lane is done: the snapshot
        written after it, the graph build and the snapshot with the graph (benches and
        tests; `stop()` would end the build instead)."""
        while self._saver is not None and not self._saver.done():
            await asyncio.gather(self._saver, return_exceptions=True)

    async def unload(self) -> None:
        """Drop the loaded index to free its memory (a tenant's index evicted past
        CSTP_INDEX_MEMORY_MIB); the next `current()` loads it again, from the snapshot when
        one is current. A snapshot that is due is written first, so that reload is fast.

        Call it only while no call is using this index: one waiting in `current()` for a
        load would wait for a loader this stops.
        """
        await self.stop()
        if self._loaded and self._wants_snapshot():
            await self._background.run(self.save_snapshot)
        if self._check is not None:
            with anyio.CancelScope(shield=True):
                await asyncio.gather(self._check, return_exceptions=True)
        self.index = SearchIndex(self.index.vector_dtype, **self._index_options)  # type: ignore[arg-type]
        self._loaded, self._evicted = False, True
        self._loader = self._saver = self._check = None
        self._changed = self._retry_now = None
        self._revision, self._watermark_ms = None, 0
        self._snapshot_revision, self._snapshot_partial = None, 0
        self._stopping.clear()
        self._failure = self._fault = None
        self._attempts = 0
        self._checked_at, self._failing = None, False

    def memory_bytes(self) -> int:
        """About the bytes the loaded index holds (SearchIndex.memory_bytes), 0 when not
        loaded: what eviction past CSTP_INDEX_MEMORY_MIB counts (a2a.app.tenants)."""
        return self.index.memory_bytes() if self._loaded else 0

    @property
    def stale_since(self) -> float | None:
        """Epoch seconds of the last successful check with Chroma while this index answers
        stale reads (the last check failed, within the stale window), else None."""
        return self._checked_at if self._failing and self.stale_window_open() else None

    @property
    def holds_collection(self) -> bool:
        """True when loaded and its collection existed in Chroma at the last successful
        check (a tenant that exists; the default tenant's index of a store that has no
        default collection does not)."""
        return self._loaded and self._revision is not None

    def stale_window_open(self) -> bool:
        """True when a stale read may be answered now: loaded, stale reads on, and the last
        successful check with Chroma within the window."""
        checked = self._checked_at
        return (
            self._loaded
            and self._stale_seconds > 0
            and checked is not None
            and time.time() - checked <= self._stale_seconds
        )

    def stale_read(self) -> bool:
        """For a call whose Chroma read just failed: True (and the call marked stale) when
        it may be answered from the index instead (stale_allowed, window open)."""
        self._failing = True
        if not (may_answer_stale() and self.stale_window_open()):
            return False
        assert self._checked_at is not None
        mark_stale(self._checked_at)
        return True

    async def current(self, marker: str | None = None) -> SearchIndex:
        """The index, loaded and fresh with every write acknowledged before this call.

        Waits while the index loads. Raises StoreUnavailable when Chroma cannot be read
        (the load failing, or the freshness check): CSTP -32003. Inside
        a2a.index.staleness.stale_allowed(), a loaded index is returned instead while the
        stale window is open, and the call is marked stale (mark_stale). `marker`: the
        collection's change marker as Chroma gave it after this call came (a listing of
        every collection, ChromaDecisionStore.collection_markers): when the index is at
        it, that read was the freshness check.
        """
        try:
            index = await self._current(marker)
        except StoreUnavailable:
            if not self.stale_read():
                raise
            return self.index
        return index

    async def _current(self, marker: str | None = None) -> SearchIndex:
        self.start()
        assert self._changed is not None and self._retry_now is not None
        self.raise_fault()
        if not self._loaded and self._failure is not None:
            # Chroma was down at the last attempt: try again now rather than after the
            # backoff, and answer from that attempt (Chroma may be back).
            attempts = self._attempts
            self._retry_now.set()
            with anyio.move_on_after(self._timeout):
                while self._attempts == attempts:
                    self._changed.clear()
                    await self._changed.wait()
            if not self._loaded:
                raise self._failure or StoreUnavailable("Chroma did not answer in time")
        while not self._loaded:
            self._changed.clear()
            await self._changed.wait()
            self.raise_fault()
            if not self._loaded and self._failure is not None:
                raise self._failure
        await self._fresh(marker)
        if self.index.wants_graph():  # grew past graph_min_rows since the load
            self._maintain()
        return self.index

    def raise_fault(self) -> None:
        """Raise why the load cannot succeed, if it cannot: EmbeddingModelMismatch (the
        collection was built with another model: CSTP -32003, not retryable) as itself,
        any other fault as ours (-32603)."""
        if isinstance(self._fault, EmbeddingModelMismatch):
            raise self._fault
        if self._fault is not None:
            raise RuntimeError("the search index could not be loaded") from self._fault

    def apply(self, records: Sequence[IndexedRecord]) -> None:
        """Index records this process has just written to Chroma (after it acknowledged).

        Same-process reads see them at once, without waiting for a freshness check.
        """
        self.index.upsert(records)

    def forget(self, ids: Sequence[str]) -> None:
        """Drop records this process has just deleted from Chroma (cstp.deleteDecision)."""
        self.index.remove(ids)

    def _exact_vectors(self, ids: list[str]) -> npt.NDArray[np.float32]:
        """The float32 embeddings Chroma stores for `ids`, in that order (compact vectors'
        exact re-scoring). Raises StoreUnavailable when Chroma cannot be read."""
        found: dict[str, npt.NDArray[np.float32]] = {}
        for page in self._store.pages(ids=ids, metadata=False, embeddings=True):
            assert page.embeddings is not None
            found.update(zip(page.ids, page.embeddings, strict=True))
        dim = self.index.dimension or 0
        return np.asarray([found.get(i, np.zeros(dim, np.float32)) for i in ids], np.float32)

    # -- loading ---------------------------------------------------------------------------

    async def _load_until_done(self) -> None:
        delay = BACKOFF_FIRST
        while True:
            try:
                await self._background.run(self._load)
            except StoreUnavailable as exc:
                log.warning("search index load failed, retrying in %.1f s: %s", delay, exc)
                self._signal(exc)
                assert self._retry_now is not None
                with anyio.move_on_after(delay):
                    await self._retry_now.wait()
                self._retry_now.clear()
                delay = min(delay * 2, BACKOFF_MAX)
                continue
            except EmbeddingModelMismatch as exc:  # configuration: every call says so (-32003)
                log.error("search index not loaded: %s", exc)
                self._fault = exc
                self._signal(None)
                return
            except Exception as exc:  # our bug: queries fail loudly (-32603), never wait forever
                log.exception("search index load failed")
                self._fault = exc
                self._signal(None)
                return
            self._loaded, self._evicted = True, False
            self._checked(ok=True)
            self._signal(None)
            self._maintain()
            return

    def _maintain(self) -> None:
        """Start, on the background lane, what the loaded index lacks (none while one runs):
        its graph once it is past `graph_min_rows` (searches scan exactly meanwhile), then
        a snapshot when one is due."""
        if self._saver is not None and not self._saver.done():
            return
        if self.index.wants_graph() or self._wants_snapshot():
            self._saver = asyncio.get_running_loop().create_task(
                self._background.run(self._build_and_save)
            )

    def _build_and_save(self) -> None:
        try:
            self._build_and_save_now()
        except Exception:  # our bug: logged; searches go on (exact until a graph exists)
            log.exception("search index graph or snapshot failed")

    def _build_and_save_now(self) -> None:
        index = self.index
        if self._wants_snapshot():
            # First, without waiting for the graph (minutes at 1M): a restart meanwhile then
            # maps this snapshot instead of reading every record from Chroma again.
            self.save_snapshot()
        if index.wants_graph():
            self.build_graph()
        if self._wants_snapshot():
            self.save_snapshot()

    def build_graph(self, stop: Callable[[], bool] | None = None) -> bool:
        """Build the index's graph now (blocking) if it wants one, ending early once
        `stop()` (default: `stop()` or `stop_soon()` was called) is true, the nodes added
        kept as its partial graph; logs what was done. True when the index has its graph
        (or wants none)."""
        index = self.index
        partial = index.partial_graph
        resumed = 0 if partial is None else len(partial)
        started = time.perf_counter()
        built = index.build_graph(stop or self._stopping.is_set)
        elapsed = time.perf_counter() - started
        if built:
            log.info(
                "search index graph built: %d rows in %.1f s%s",
                len(index),
                elapsed,
                f" (gone on from {resumed} rows of a stopped build)" if resumed else "",
            )
        else:
            now = index.partial_graph
            done = 0 if now is None else len(now)
            log.info(
                "search index graph build stopped after %d of %d rows (%.1f s)%s",
                done,
                len(index),
                elapsed,
                "; the next build goes on from them" if done else "",
            )
        return built

    def stop_soon(self) -> None:
        """Ask a blocking graph build (`build_graph`) to end at its next step, from any
        thread or a signal handler (a batch command's first Ctrl-C)."""
        self._stopping.set()

    def snapshot_due(self) -> bool:
        """Whether a snapshot would hold more than the current one: the index is past
        `snapshot_min_records`, and its marker moved, or it has a graph (or more of a
        partial one) that the snapshot lacks."""
        return self._wants_snapshot()

    def _wants_snapshot(self) -> bool:
        return (
            self._snapshots is not None
            and self.index.alive_count >= self._snapshot_min_records
            and (
                self._snapshot_revision is None
                or self._snapshot_revision != self._revision
                or (self.index.graph is not None and not self._snapshot_graph)
                or self._partial_nodes() > self._snapshot_partial
            )
        )

    def _partial_nodes(self) -> int:
        partial = self.index.partial_graph
        return 0 if partial is None or self.index.graph is not None else len(partial)

    def save_snapshot(self) -> Path | None:
        """Write the index as the current snapshot (blocking); its folder, or None when
        snapshots are off or the folder cannot be written (logged)."""
        if self._snapshots is None or self._model is None:
            return None
        # The stamp is taken before the rows are read: the snapshot then holds at least
        # what the stamp says, and a catch-up from it re-reads anything newer.
        stamp = SnapshotStamp(
            self._revision, self._watermark_ms, self._model, self.index.dimension or 0
        )
        started = time.perf_counter()
        graph, partial = self.index.graph is not None, self._partial_nodes()
        try:
            folder = write_snapshot(self.index, stamp, self._snapshots)
        except OSError as exc:
            log.warning("search index snapshot not written to %s: %s", self._snapshots, exc)
            return None
        self._snapshot_revision, self._snapshot_graph = stamp.revision, graph
        self._snapshot_partial = partial
        log.info(
            "search index snapshot written: %d records in %.1f s to %s%s",
            self.index.alive_count,
            time.perf_counter() - started,
            folder,
            ", with its graph"
            if graph
            else (f", with a partial graph of {partial} rows" if partial else ", without a graph"),
        )
        return folder

    def _signal(self, failure: StoreUnavailable | None) -> None:
        self._failure = failure
        self._attempts += 1
        if self._changed is not None:
            self._changed.set()

    def load_now(self) -> None:
        """Load the index now, blocking: from the current snapshot when there is one (and
        catch up from its stamp), else from Chroma. For a batch command (`cstp index`),
        which has no event loop; a service calls `start()`. Raises StoreUnavailable."""
        self._load()
        self._loaded, self._evicted = True, False
        self._checked(ok=True)

    def take_own_writes(self) -> bool:
        """Take Chroma's current marker as the index's after writes this process made and
        put into the index (`apply`, `forget`) since it was loaded at the marker, while it
        was the collection's one writer: an embedded store (its marker kept in memory by
        this process, the folder locked). A snapshot written next then holds what Chroma
        does, and the next start reads nothing from Chroma. False, with nothing changed,
        for a Chroma server (other writers): the next start catches up from the index's
        watermark. Blocking (the first marker read of a collection is a Chroma call)."""
        if not self._loaded or not self._store.revision_in_memory:
            return False
        start_ms = self._clock_ms()
        self._revision = self._store.revision()
        self._watermark_ms = start_ms - self._margin_ms
        return True

    def _load(self) -> None:
        if self._snapshots is not None and self._load_snapshot(self._snapshots):
            return
        started = time.perf_counter()
        start_ms = self._clock_ms()
        revision = self._store.revision()
        self.index.clear()
        # Chroma's reads release the GIL: READERS threads read pages ahead of this one,
        # which indexes them as they come (docs/scaling-measurements.md has the load times
        # at 100k).
        # The index keeps its rows in columns, not objects: a full garbage collection after
        # the load costs what it did before it (docs/scaling.md, Memory), so the collector
        # is neither paused nor the rows frozen (both process-wide).
        for page in self._store.pages(documents=True, embeddings=True, readers=READERS):
            self.index.upsert(_records(page))
        # Here, not at the first keyword query: the first queries after a start, which a
        # replica joining a load balancer gets at once, then cost what later ones do.
        self.index.warm()
        self._revision, self._watermark_ms = revision, start_ms - self._margin_ms
        log.info(
            "search index loaded: %d records in %.1f s",
            self.index.alive_count,
            time.perf_counter() - started,
        )

    def _load_snapshot(self, root: Path) -> bool:
        """Load the current snapshot in `root` and catch up from its stamp; False when there
        is none or it is refused (logged: the caller reads Chroma instead)."""
        started = time.perf_counter()
        assert self._model is not None
        try:
            loaded = load_index(
                root, model=self._model, dimension=self._dimension, **self._index_options
            )
        except SnapshotRefused as exc:
            log.warning("search index snapshot refused, rebuilding from Chroma: %s", exc)
            return False
        if loaded is None:
            log.info("no search index snapshot in %s: loading from Chroma", root)
            return False
        index, stamp = loaded
        if index.vector_dtype != self.index.vector_dtype:
            log.warning(
                "search index snapshot refused, rebuilding from Chroma: it holds %s vectors, "
                "CSTP_INDEX_VECTOR_DTYPE asks for %s",
                index.vector_dtype,
                self.index.vector_dtype,
            )
            return False
        mapped = time.perf_counter() - started
        self.index = index
        self._revision, self._watermark_ms = stamp.revision, stamp.watermark_ms
        self._snapshot_revision, self._snapshot_graph = stamp.revision, index.graph is not None
        self._snapshot_partial = self._partial_nodes()
        before = index.alive_count
        trusted = self._marker_is_stamps(stamp.revision)
        if trusted:
            # Embedded, with this process the folder's one writer: every write changes the
            # marker before its data and after it (ChromaDecisionStore.upsert), so a marker
            # equal to the stamp's means Chroma holds what the snapshot does. Chroma is not
            # read: embedded Chroma keeps each collection it reads in memory for good (its
            # HNSW: 14-20 MiB per 10k records at 256 dimensions), which would count every
            # tenant ever reloaded against the replica's RSS (docs/scaling.md, Tenants).
            self._checked(ok=True)
        else:
            # The same path as every query's freshness check: records changed since the
            # stamp's watermark, then the ids diff (deletions, records without updated_at).
            self.refresh(force=True)
        log.info(
            "search index loaded from snapshot %s: %d records (%+d caught up) in %.1f s "
            "(%.1f s mapping and checking it)%s%s",
            root,
            index.alive_count,
            index.alive_count - before,
            time.perf_counter() - started,
            mapped,
            ", with its graph" if index.graph is not None else "",
            "; Chroma's marker is its stamp: nothing read" if trusted else "",
        )
        return True

    def known_count(self) -> int | None:
        """How many records Chroma holds, known without asking it (blocking: the first
        marker read of a collection is a Chroma call): embedded only, from the loaded index
        when it is at the marker, else from the snapshot whose stamp is the marker; None
        otherwise (ask Chroma). Embedded Chroma keeps what it reads in memory for good."""
        revision = self._store.revision()
        if not revision or not self._store.revision_in_memory:
            return None
        if self._loaded and not self._evicted and self._revision == revision:
            return self.index.alive_count
        if self._snapshots is not None:
            found = snapshot_count(self._snapshots)
            if found is not None and found[0] == revision:
                return found[1]
        return None

    def _marker_is_stamps(self, revision: str | None) -> bool:
        """Whether Chroma's revision marker is `revision` (a snapshot's stamp) and can be
        trusted to say that nothing changed since: an embedded store (its marker kept in
        memory by its one writing process, changed before and after every write), and a
        marker a write set (not None or empty: a collection no write of this version
        changed yet)."""
        if not revision:
            return False
        return self._store.revision() == revision and self._store.revision_in_memory

    # -- freshness -------------------------------------------------------------------------

    def _checked(self, *, ok: bool) -> None:
        self._failing = not ok
        if ok:
            self._checked_at = time.time()

    def _check_done(self, check: asyncio.Task[None]) -> None:
        failed = check.cancelled() or check.exception() is not None
        self._checked(ok=not failed)

    async def _fresh(self, marker: str | None = None) -> None:
        if marker is not None and marker == self._revision:
            self._checked(ok=True)
            return  # Chroma gave the index's marker after the call came: no check, no hop
        if self._store.revision_in_memory and self._store.revision() == self._revision:
            self._checked(ok=True)
            return  # this process is the only writer and nothing changed: no thread hop
        check = self._check
        if chroma_known_down() and self.stale_window_open():
            # The call found Chroma down already (an org-level call's tenant listing): a
            # stale answer now, not a second wait (one deadline a call).
            raise StoreUnavailable("Chroma is down")
        if (
            self._failing
            and check is not None
            and not check.done()
            and may_answer_stale()
            and self.stale_window_open()
        ):
            # Chroma failed the last check and the next is under way: a stale answer now,
            # rather than a wait of up to a deadline for each read while Chroma is away.
            raise StoreUnavailable("Chroma failed the last check; the next is under way")
        arrived = time.monotonic()
        while True:
            check = self._check
            if check is not None and not check.done():
                if self._check_started >= arrived:
                    return await self._wait(check)
                # It started before we came: wait for it (within the deadline), then our own.
                await asyncio.wait([check], timeout=self._timeout)
                if not check.done():
                    raise StoreUnavailable(f"Chroma did not answer within {self._timeout:g} s")
                failure = None if check.cancelled() else check.exception()
                if isinstance(failure, StoreUnavailable):
                    # Chroma failed after we came: report it now rather than spend a second
                    # deadline on our own check (a call never waits past one deadline).
                    raise StoreUnavailable(str(failure)) from failure
                continue
            self._check_started = time.monotonic()
            self._check = asyncio.get_running_loop().create_task(self._background.run(self.refresh))
            # Also retrieves the failure of a check nobody waits for any longer.
            self._check.add_done_callback(self._check_done)
            return await self._wait(self._check)

    async def _wait(self, check: asyncio.Task[None]) -> None:
        try:
            await asyncio.wait_for(asyncio.shield(check), self._timeout)
        except TimeoutError:
            raise StoreUnavailable(f"Chroma did not answer within {self._timeout:g} s") from None

    def refresh(self, force: bool = False) -> None:
        """Bring the index up to date with Chroma (blocking; one caller at a time).

        `force`: compare with Chroma even when its revision marker is the index's (a
        snapshot's catch-up: a record written without changing the marker, by a writer
        killed between its write and the marker's, is found too).
        Raises StoreUnavailable when Chroma cannot be read.
        """
        revision = self._store.revision()
        if revision == self._revision and not force:
            return
        start_ms = self._clock_ms()
        if revision is None:  # the collection is gone
            self.index.clear()
        else:
            self._apply_changes()
            self._reconcile_ids()
        self._revision, self._watermark_ms = revision, start_ms - self._margin_ms

    def _apply_changes(self) -> None:
        changed = self._store.changed_since(self._watermark_ms)
        with self.index.reading():
            stale = [
                row.id
                for row in changed
                if self.index.updated_at(row.id) != row.updated_at
                or self.index.content_hash(row.id) != row.decision.origin_hash
            ]
        for page in self._store.pages(ids=stale, documents=True, embeddings=True):
            self.index.upsert(_records(page))

    def _reconcile_ids(self) -> None:
        if self._store.count() == self.index.alive_count:
            return
        stored = set(self._store.ids())
        with self.index.reading():
            indexed = {self.index.id_of(int(r)) for r in np.flatnonzero(self.index.mask(None))}
        self.index.remove(sorted(indexed - stored))
        missing = sorted(stored - indexed)
        for page in self._store.pages(ids=missing, documents=True, embeddings=True):
            self.index.upsert(_records(page))


def _records(page: StoredPage) -> list[IndexedRecord]:
    assert page.documents is not None and page.embeddings is not None
    vectors: npt.NDArray[np.float32] = page.embeddings
    return [
        IndexedRecord(r.id, r.decision, vectors[n], d, r.updated_at)
        for n, (r, d) in enumerate(zip(page.rows(), page.documents, strict=True))
    ]
