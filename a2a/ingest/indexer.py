"""`cstp index`: files -> decision records -> embeddings -> the store, reporting what changed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from contextlib import nullcontext
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from a2a.decisions.reindexing import keep_stored
from a2a.decisions.replica_locks import WriterLocks
from a2a.embeddings import MODELS, Embedder
from a2a.embeddings.background import BackgroundModel, ModelThread
from a2a.embeddings.child import ModelProcess
from a2a.errors import FileParseError
from a2a.ingest import LoadedFile, discover, load_file
from a2a.records import DecisionRecord
from a2a.store.interface import DecisionStore
from a2a.store.pages import StoredRecord

#: Records embedded and written per batch (capped by Chroma's max batch size, 5,461
#: embedded). Chroma's per-call cost is large: at 10k records, batches of 5,000 indexed
#: 1.3-1.5x faster than batches of 512 (and 64 were 1.6x slower than 512). A stop never
#: cuts a batch's write in half (it takes seconds); see EMBED_CHUNK_RECORDS.
BATCH_SIZE = 5000
#: Runs of at least this many records embed in a child process (a2a.embeddings.child),
#: in parallel with Chroma's GIL-holding write (docs/scaling-measurements.md: with the
#: leaner metadata, 100k records with wordllama at 1,127 records/s against 432). Smaller
#: runs keep the model in this process (no child start-up: ~1-3 s).
MODEL_PROCESS_MIN_RECORDS = 10_000

#: A batch's changed records go to the model in chunks of at most this many records and
#: about EMBED_CHUNK_CHARS characters of text (a longer record is a chunk of its own). The
#: vectors come back chunk by chunk: the progress bar moves with them, and a stop stores
#: the chunks already embedded and throws away only the one in progress (the 409 ADRs are
#: 19 chunks of 6-37 ADRs, one every 5-7 s on a busy 2-core machine). A chunk holds enough
#: text for the model's batches to fill every core (MiniLM: 16 windows of ~1,000 characters
#: a call), and costs little: 150 ADRs took 55.9 CPU-seconds in chunks against 53.6 in one
#: call (chunks of 32,000 characters: 59.4).
EMBED_CHUNK_RECORDS = 64
EMBED_CHUNK_CHARS = 64_000
#: Seconds between two checks for a stop request while the model embeds a chunk.
STOP_POLL_SECONDS = 0.2
#: One float32 row per embedded text.
Vectors = npt.NDArray[np.float32]


@dataclass
class IndexSummary:
    """Counts of one index run, plus what failed and what was noticed (path: message).

    new/updated/unchanged count records; skipped (no decision in them) counts files; failed
    counts files that could not be read and records refused (their id names a decision
    recorded over the protocol).
    """

    new: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0
    #: True when a stop request (SIGINT/SIGTERM) ended the run before every record was written.
    interrupted: bool = False
    failures: list[FileParseError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> int:
        """Files that could not be read or parsed, and records refused."""
        return len(self.failures)

    @property
    def exit_code(self) -> int:
        """0 when every file was indexed, 1 when some failed."""
        return 1 if self.failures else 0


@dataclass(frozen=True, slots=True)
class Indexer:
    """Indexes decision files into `store`; unchanged records are not embedded again.

    - `batch_size`: records per batch (CSTP_INDEX_BATCH_SIZE), capped by the store's own
      limit; smaller batches use less memory and answer a stop request sooner.
    - `model_process_min`: a `write` of at least this many records runs the embedder's
      model (by its name, a key of a2a.embeddings.MODELS) in a child process; None never
      does (an embedder of another name always runs here).
    - `clock`: the time (UTC) of the history entry a changed file adds to its record
      (a2a.decisions.reindexing.carry_stored).
    - `locks`: the changed records' locks, shared with the replicas of the service on a
      Redis, held while each batch's stored records are read and rewritten (None: no
      shared Redis).
    - `written(stored, vectors)`: called after each batch Chroma stored, with the records
      as stored (StoredRecord: content hash, `updated_at`) and their vectors, in order
      (`cstp index` keeps its search index with it: a2a.app.kept_index).
    """

    store: DecisionStore
    embedder: Embedder
    batch_size: int = BATCH_SIZE
    _: KW_ONLY
    model_process_min: int | None = None
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    locks: WriterLocks | None = None
    written: Callable[[Sequence[StoredRecord], Vectors], None] | None = None

    @staticmethod
    def load(paths: Sequence[Path], summary: IndexSummary) -> list[DecisionRecord]:
        """Every record in `paths`, later files winning on a repeated id.

        Unreadable files go to `summary.failures`; they never stop the others.
        """
        by_id: dict[str, DecisionRecord] = {}
        files: list[tuple[Path, Path]] = []
        for path in paths:
            try:
                files.extend(discover([path]))
            except FileParseError as exc:
                summary.failures.append(exc)
        for path, root in files:
            try:
                loaded: LoadedFile = load_file(path, root)
            except FileParseError as exc:
                summary.failures.append(exc)
                continue
            summary.warnings.extend(f"{loaded.source}: {w}" for w in loaded.warnings)
            summary.skipped += not loaded.records
            for record in loaded.records:
                if record.id in by_id:
                    summary.warnings.append(
                        f"{loaded.source}: id {record.id!r} also in {by_id[record.id].source}; "
                        "this one kept"
                    )
                by_id[record.id] = record
        return list(by_id.values())

    def write(
        self,
        records: Sequence[DecisionRecord],
        summary: IndexSummary,
        progress: Callable[[int], None] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> None:
        """Embed and upsert new and changed records in batches; `progress(n)` as n more
        records are embedded or found unchanged (the write of their batch comes after).

        The model embeds batch i+1 while this thread writes batch i to Chroma: the next
        batch is read and compared (content hashes) and handed to the model first,
        since Chroma's embedded write holds the GIL and no Python code here runs during it.
        For large runs the model is in a child process (see `model_process_min`), else on
        a thread here. A batch goes to the model in chunks (EMBED_CHUNK_RECORDS).

        `stop()` is asked before each batch is read and every STOP_POLL_SECONDS while the
        model embeds. Once it is true, the chunks already embedded are written (a write is
        never cut), the run ends with `summary.interrupted` set, and the model is abandoned
        at once: the chunk in progress and the ones after it are dropped. The summary counts
        only what was written; an error does not wait for the model either.
        Raises StoreUnavailable when Chroma fails, and what the model raises.
        """
        size = self.batch_size
        if records:
            size = min(size, self.store.max_batch_size())
        with self._model(len(records)) as model:
            try:
                whole = self._pipeline(records, size, model, summary, progress, stop)
            except BaseException:
                model.abandon()
                raise
            if not whole:
                summary.interrupted = True
                model.abandon()

    def _pipeline(
        self,
        records: Sequence[DecisionRecord],
        size: int,
        model: BackgroundModel,
        summary: IndexSummary,
        progress: Callable[[int], None] | None,
        stop: Callable[[], bool] | None,
    ) -> bool:
        """Read, embed and write every batch; False when a stop left some records unwritten."""
        stopped = stop or (lambda: False)
        whole, read = True, 0
        pending: _Batch | None = None
        for start in range(0, len(records), size):
            if stopped():
                break
            batch = self._read(records[start : start + size], model)
            read += len(batch.records)
            if pending is not None:
                whole &= self._write_batch(pending, summary, progress, stopped)
            pending = batch
        if pending is not None:
            whole &= self._write_batch(pending, summary, progress, stopped)
        return whole and read == len(records)

    def _model(self, count: int) -> BackgroundModel:
        """The model of a write of `count` records: in a child process when the run is
        large enough (see `model_process_min`), else the embedder on a thread here."""
        minimum, name = self.model_process_min, self.embedder.name
        if minimum is None or count < minimum or name not in MODELS:
            return ModelThread(self.embedder)
        return ModelProcess(name)

    def _read(self, records: Sequence[DecisionRecord], model: BackgroundModel) -> _Batch:
        """A batch compared with the store's content hashes, its changed records handed to
        the model chunk by chunk (their embedded text is the file's alone)."""
        stored = self.store.content_hashes([r.id for r in records])
        changed = _changed(records, stored)
        texts = [r.embedding_text() for r in changed]
        chunks = [_Chunk(changed[part], model.submit(texts[part])) for part in _chunk_slices(texts)]
        return _Batch(records, len(records) - len(changed), stored, chunks)

    def _write_batch(
        self,
        job: _Batch,
        summary: IndexSummary,
        progress: Callable[[int], None] | None,
        stopped: Callable[[], bool],
    ) -> bool:
        """Write `job`'s records as their vectors arrive, chunk by chunk, in one store call:
        all of them (True), or, once `stopped()`, those of the chunks already embedded
        (False)."""
        tell = progress or (lambda n: None)
        if job.unchanged:
            tell(job.unchanged)
        embedded: list[DecisionRecord] = []
        vectors: list[Vectors] = []
        for chunk in job.chunks:
            got = _vectors_of(chunk.vectors, stopped)
            if got is None:
                break
            embedded.extend(chunk.records)
            vectors.append(got)
            tell(len(chunk.records))
        refused = self._store_changed(embedded, np.concatenate(vectors)) if embedded else []
        refused_ids = {record.id for record, _ in refused}
        written = [r for r in embedded if r.id not in refused_ids]
        summary.failures.extend(
            FileParseError(
                record.source or record.id,
                f"id {record.id!r} names a decision {agent!r} recorded over the protocol; "
                "not replaced (give this record another id)",
            )
            for record, agent in refused
        )
        summary.unchanged += job.unchanged
        summary.updated += sum(1 for r in written if r.id in job.stored)
        summary.new += sum(1 for r in written if r.id not in job.stored)
        return len(vectors) == len(job.chunks)

    def _store_changed(
        self, changed: Sequence[DecisionRecord], vectors: Vectors
    ) -> list[tuple[DecisionRecord, str]]:
        """Write `changed` (records from files, in the order of `vectors`), each with what
        the service stored on it (a2a.decisions.reindexing.keep_stored), read afresh under
        their locks and written before the locks go; the records refused, with the agent
        of the decision their id names."""
        held = self.locks.hold_all(r.id for r in changed) if self.locks else nullcontext()
        with held:
            kept = keep_stored(self.store, changed, self.clock())
            if kept.refused:
                refused = {record.id for record, _ in kept.refused}
                vectors = vectors[[r.id not in refused for r in changed]]
            if kept.records:
                stored = self.store.upsert(kept.records, vectors)
                if self.written is not None:
                    self.written(stored, vectors)
        return kept.refused


def _changed(batch: Sequence[DecisionRecord], stored: dict[str, str]) -> list[DecisionRecord]:
    """The records of `batch` whose content hash is not the one `stored` for their id, each
    with the hash as its `origin_hash` (what the store writes): computed once, not twice."""
    changed = []
    for record in batch:
        digest = record.content_hash()
        if stored.get(record.id) != digest:
            changed.append(record.model_copy(update={"origin_hash": digest}))
    return changed


def _chunk_slices(texts: Sequence[str]) -> list[slice]:
    """`texts` cut, in order, into runs of at most EMBED_CHUNK_RECORDS texts whose lengths
    add up to at most EMBED_CHUNK_CHARS (a longer text alone)."""
    slices: list[slice] = []
    start, chars = 0, 0
    for end, text in enumerate(texts):
        if end > start and (
            end - start == EMBED_CHUNK_RECORDS or chars + len(text) > EMBED_CHUNK_CHARS
        ):
            slices.append(slice(start, end))
            start, chars = end, 0
        chars += len(text)
    if start < len(texts):
        slices.append(slice(start, len(texts)))
    return slices


def _vectors_of(vectors: Future[Vectors], stopped: Callable[[], bool]) -> Vectors | None:
    """The chunk's vectors once the model has them; None when `stopped()` comes first
    (asked every STOP_POLL_SECONDS). Raises what the model raised."""
    while not vectors.done():
        if stopped():
            return None
        try:
            return vectors.result(timeout=STOP_POLL_SECONDS)
        except TimeoutError:
            continue
    return vectors.result()


@dataclass(frozen=True)
class _Chunk:
    """Changed records of one batch and their vectors being computed (one model call)."""

    records: Sequence[DecisionRecord]
    vectors: Future[Vectors]


@dataclass(frozen=True)
class _Batch:
    """One batch on its way to Chroma: all its records, how many of them are unchanged,
    the stored content hashes, the chunks of changed records being embedded."""

    records: Sequence[DecisionRecord]
    unchanged: int
    stored: dict[str, str]
    chunks: list[_Chunk]
