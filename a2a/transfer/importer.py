"""`cstp import`: the lines of an export file back into a collection, embedded with the
configured model and written as `cstp index` writes (the store's upsert: the revision
marker moves, so every replica's index sees the records)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import nullcontext
from dataclasses import KW_ONLY, dataclass, field
from typing import BinaryIO, Final

import numpy as np
import numpy.typing as npt

from a2a.decisions.replica_locks import WriterLocks
from a2a.embeddings import Embedder
from a2a.embeddings.background import BackgroundModel, ModelThread
from a2a.errors import ImportLineError
from a2a.records import DecisionRecord
from a2a.store.interface import DecisionStore
from a2a.store.pages import StoredRecord
from a2a.transfer.lines import (
    MAX_LINE_BYTES,
    DecisionLine,
    LinksLine,
    parse_line,
    record_of,
    wire_of,
)

#: Records read, compared and written per batch (capped by the store's own limit): one
#: Chroma write each, well within CSTP_CHROMA_TIMEOUT_SECONDS on a Chroma server (5,000
#: records a write, `cstp index`'s batch, timed out there at 10 s on a busy machine).
BATCH_SIZE: Final = 1000
#: Records a model call embeds at most: the progress moves and a stop is heard between them.
EMBED_CHUNK: Final = 256
#: Seconds between two checks for a stop request while the model embeds.
STOP_POLL_SECONDS: Final = 0.2


@dataclass
class ImportSummary:
    """What an import did, by record: `created` (id not stored), `unchanged` (stored with
    the same content), `conflict` (stored with other content, kept; `conflicts` lists
    (line number, id)), `replaced` (other content overwritten, --replace), and the
    lines refused (`bad`, in line order once the run ends)."""

    created: int = 0
    unchanged: int = 0
    replaced: int = 0
    conflicts: list[tuple[int, str]] = field(default_factory=list)
    bad: list[ImportLineError] = field(default_factory=list)
    #: True when a stop request ended the run before every record was written.
    interrupted: bool = False

    @property
    def conflict(self) -> int:
        """Records kept as stored because the file's differ."""
        return len(self.conflicts)

    @property
    def exit_code(self) -> int:
        """0 when every line was imported or found unchanged, 1 when some were bad or in
        conflict (as `cstp index` exits 1 when some files failed)."""
        return 1 if self.bad or self.conflicts else 0

    def line(self) -> str:
        """`N created, N unchanged, N conflict, N replaced, N bad`."""
        return (
            f"{self.created} created, {self.unchanged} unchanged, {self.conflict} conflict, "
            f"{self.replaced} replaced, {len(self.bad)} bad"
        )


@dataclass(frozen=True)
class Scan:
    """The first reading of a file: the line number of each good id (the first line
    naming it), and the links of the good lines that have any."""

    good: dict[str, int]
    links: dict[str, LinksLine]


@dataclass(frozen=True, slots=True)
class Importer:
    """Imports export files (a2a.transfer.lines) into `store`, embedding with `embedder`.

    - `replace`: a record stored with other content is overwritten (else kept: conflict);
    - `batch_size`: records per read-compare-write round (capped by the store's limit);
    - `locks`: the replicas' locks in a shared Redis (Runtime.writer_locks), held while a
      batch's stored records are read again and written (None: no shared Redis).
    """

    store: DecisionStore
    embedder: Embedder
    _: KW_ONLY
    replace: bool = False
    batch_size: int = BATCH_SIZE
    locks: WriterLocks | None = None

    def scan(self, file: BinaryIO, summary: ImportSummary) -> Scan:
        """Read every line once: the good ones' ids and links; the bad ones, a repeated
        id and a link to an id neither in the file nor stored, into `summary.bad`. A line
        refused takes the links to it down with it (unless its id is stored)."""
        good: dict[str, int] = {}
        links: dict[str, LinksLine] = {}
        for number, raw in _lines(file):
            try:
                line = parse_line(raw, number)
            except ImportLineError as bad:
                summary.bad.append(bad)
                continue
            if line.id in good:
                reason = f"id: {line.id!r} is already on line {good[line.id]}"
                summary.bad.append(ImportLineError(number, [reason]))
                continue
            good[line.id] = number
            if line.targets():
                links[line.id] = line.links
        self._unknown_targets(good, links, summary)
        summary.bad.sort(key=lambda bad: bad.number)
        return Scan(good, links)

    def run(
        self,
        file: BinaryIO,
        summary: ImportSummary,
        *,
        scan: Scan | None = None,
        progress: Callable[[int], None] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> None:
        """Import the good lines of `file` (seekable; `scan` of it, else scanned now):
        each compared with the stored record of its id and written when new (or replaced),
        in batches, each embedded on a thread while the batch before it is written.
        `progress(n)` as n more records are done; `stop()` is asked between batches and
        while the model embeds: once true, the batches embedded are written and the run
        ends with `summary.interrupted`. Raises StoreUnavailable when Chroma fails, and
        what the model raises."""
        if scan is None:
            scan = self.scan(file, summary)
        file.seek(0)
        tell = progress or (lambda n: None)
        stopped = stop or (lambda: False)
        size = min(self.batch_size, self.store.max_batch_size()) if scan.good else 1
        # The model embeds on a thread of this process, never in a child as `cstp index`
        # does for large runs: a second copy of the model (~150 MiB with WordLlama) would
        # take the import of 100k records past its memory budget (bench/moving_bench.py),
        # for little: on a Chroma server the thread's work overlaps the writes anyway.
        with ModelThread(self.embedder) as model:
            try:
                pending: _Batch | None = None
                for records in _batches(_good_records(file, scan), size):
                    if stopped():
                        summary.interrupted = True
                        break
                    batch = self._read(records, model, summary, tell)
                    if pending is not None:
                        self._write(pending, summary, tell, stopped)
                    pending = batch
                if pending is not None:
                    self._write(pending, summary, tell, stopped)
            except BaseException:
                model.abandon()
                raise
            if summary.interrupted:
                model.abandon()

    def _unknown_targets(
        self, good: dict[str, int], links: dict[str, LinksLine], summary: ImportSummary
    ) -> None:
        """Refuse the lines linking to an id that is neither a good line's nor stored, or
        whose line or stored record does not name this one back, until none does (a
        refused line's id is unknown to the lines linking to it). Links are kept on both
        ends (a2a.decisions.links) and an import writes only its own lines: a one-sided
        link would be left dangling by a later delete."""
        # Every target, not only those outside the file: a line refused below may name a
        # decision that is stored.
        targets = sorted({t for line in links.values() for t in _targets(line)})
        stored = {row.id: row.decision for row in self.store.get(ids=targets)}
        refused = True
        while refused:
            refused = False
            for record_id, line in links.items():
                if record_id not in good:
                    continue
                reasons = [
                    f"links.{name}[{n}]: {why}"
                    for name, ids in _named(line)
                    for n, target in enumerate(ids)
                    if (why := _unknown(record_id, name, target, good, links, stored))
                ]
                if reasons:
                    summary.bad.append(ImportLineError(good.pop(record_id), reasons))
                    refused = True

    def _read(
        self,
        records: list[tuple[int, DecisionRecord]],
        model: BackgroundModel,
        summary: ImportSummary,
        tell: Callable[[int], None],
    ) -> _Batch:
        """A batch compared with what is stored: the unchanged and conflicting records
        counted now, the others handed to the model."""
        stored = _by_id(self.store.get(ids=[r.id for _, r in records]))
        writes: list[tuple[int, DecisionRecord]] = []
        for number, record in records:
            old = stored.get(record.id)
            if old is not None and wire_of(old.decision) == wire_of(record):
                summary.unchanged += 1
            elif old is not None and not self.replace:
                summary.conflicts.append((number, record.id))
            else:
                writes.append((number, record))
        tell(len(records) - len(writes))
        texts = [record.embedding_text() for _, record in writes]
        chunks = [
            model.submit(texts[start : start + EMBED_CHUNK])
            for start in range(0, len(texts), EMBED_CHUNK)
        ]
        seen = {record.id: _version(stored.get(record.id)) for _, record in writes}
        return _Batch(writes, seen, chunks)

    def _write(
        self,
        batch: _Batch,
        summary: ImportSummary,
        tell: Callable[[int], None],
        stopped: Callable[[], bool],
    ) -> None:
        """Store the batch's records as their vectors arrive; once `stopped()`, those of
        the chunks already embedded. Under the replicas' locks, each record is read again:
        one written meanwhile by someone else is compared afresh."""
        vectors: list[npt.NDArray[np.float32]] = []
        for chunk in batch.chunks:
            got = _vectors_of(chunk, stopped)
            if got is None:
                summary.interrupted = True
                break
            vectors.append(got)
        count = sum(len(v) for v in vectors)
        writes = batch.writes[:count]
        if not writes:
            return
        matrix = np.concatenate(vectors)
        ids = [record.id for _, record in writes]
        with self.locks.hold_all(ids) if self.locks else nullcontext():
            now = _by_id(self.store.get(ids=ids))
            keep = []
            for n, (number, record) in enumerate(writes):
                old = now.get(record.id)
                if _version(old) == batch.seen[record.id]:
                    keep.append(n)
                elif old is not None and wire_of(old.decision) == wire_of(record):
                    summary.unchanged += 1
                elif old is not None and not self.replace:
                    summary.conflicts.append((number, record.id))
                else:
                    keep.append(n)
            chosen = [writes[n][1] for n in keep]
            self.store.upsert(chosen, matrix[keep])
        replaced = sum(1 for record in chosen if now.get(record.id) is not None)
        summary.replaced += replaced
        summary.created += len(chosen) - replaced
        tell(len(writes))


@dataclass(frozen=True)
class _Batch:
    """Records on their way to Chroma (line number, record), the version of each as read
    (`_version`), and their vectors being computed, chunk by chunk."""

    writes: list[tuple[int, DecisionRecord]]
    seen: dict[str, int | None]
    chunks: list[Future[npt.NDArray[np.float32]]]


def _version(stored: StoredRecord | None) -> int | None:
    """What tells a stored record from another write of its id: its `updated_at`
    (-1 for a record stored before writes were stamped), None when absent."""
    if stored is None:
        return None
    return -1 if stored.updated_at is None else stored.updated_at


def _by_id(rows: Sequence[StoredRecord]) -> dict[str, StoredRecord]:
    return {row.id: row for row in rows}


def _lines(file: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """(number from 1, bytes) of each line that is not blank; a line past MAX_LINE_BYTES
    is cut there (parse_line refuses it) and the rest of it skipped."""
    number = 0
    while raw := file.readline(MAX_LINE_BYTES):
        number += 1
        if len(raw) == MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while (rest := file.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
        if raw.strip():
            yield number, raw


def _good_records(file: BinaryIO, scan: Scan) -> Iterator[tuple[int, DecisionRecord]]:
    """(line number, record) of each line the scan kept, read again."""
    for number, raw in _lines(file):
        try:
            line: DecisionLine = parse_line(raw, number)
        except ImportLineError:
            continue
        if scan.good.get(line.id) == number:
            yield number, record_of(line)


def _batches(
    records: Iterator[tuple[int, DecisionRecord]], size: int
) -> Iterator[list[tuple[int, DecisionRecord]]]:
    batch: list[tuple[int, DecisionRecord]] = []
    for item in records:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


#: The list on a link's target that holds its other end, by the wire name of the link.
_OTHER_END: Final = {
    "supersedes": ("superseded_by",),
    "supersededBy": ("supersedes",),
    "relatedTo": ("related_to", "related_from"),
}


def _unknown(
    record_id: str,
    name: str,
    target: str,
    good: dict[str, int],
    links: dict[str, LinksLine],
    stored: dict[str, DecisionRecord],
) -> str | None:
    """Why the link `name` from `record_id` to `target` cannot be imported, or None: the
    target is neither a good line nor stored, or its line (else its stored record) does
    not hold the other end."""
    if target in good:
        line = links.get(target, LinksLine())
        if record_id in getattr(line, _LINE_END[name]):
            return None
        return f"{target!r} (line {good[target]}) does not link back"
    other = stored.get(target)
    if other is None:
        return "no decision with this id"
    if not any(record_id in getattr(other, end) for end in _OTHER_END[name]):
        return f"not in the file, and the stored {target!r} does not link back"
    return None


#: The list on a link's target line that holds its other end, by the wire name of the link.
_LINE_END: Final = {
    "supersedes": "superseded_by",
    "supersededBy": "supersedes",
    "relatedTo": "related_to",
}


def _named(links: LinksLine) -> list[tuple[str, list[str]]]:
    return [
        ("supersedes", links.supersedes),
        ("supersededBy", links.superseded_by),
        ("relatedTo", links.related_to),
    ]


def _targets(links: LinksLine) -> list[str]:
    return [*links.supersedes, *links.superseded_by, *links.related_to]


def _vectors_of(
    vectors: Future[npt.NDArray[np.float32]], stopped: Callable[[], bool]
) -> npt.NDArray[np.float32] | None:
    """The chunk's vectors once the model has them; None when `stopped()` comes first."""
    while True:
        try:
            return vectors.result(timeout=STOP_POLL_SECONDS)
        except TimeoutError:
            if stopped():
                return None
