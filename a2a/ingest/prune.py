"""`cstp index --prune`: remove records whose file, or whose record in a file, is gone."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from a2a.decisions.lifecycle import MAX_ATTEMPTS
from a2a.decisions.links import detached, neighbours
from a2a.decisions.replica_locks import WriterLocks
from a2a.errors import FileParseError, PruneRefused
from a2a.ingest import discover
from a2a.ingest.loader import source_for
from a2a.records import DecisionRecord
from a2a.store.interface import DecisionStore


@dataclass(frozen=True, slots=True)
class Corpus:
    """What the indexed folders hold now: every file (by source) and the ids each yields.

    `unreadable` files failed to parse: their records are left alone, since what they
    hold is unknown. `refused` says why nothing may be pruned (a path given could not be
    read, so pruning would remove everything under it), or is None.
    """

    files: frozenset[str]
    ids_by_source: Mapping[str, frozenset[str]]
    unreadable: frozenset[str] = field(default_factory=frozenset)
    refused: str | None = None


@dataclass(frozen=True, slots=True)
class PruneSummary:
    """Records removed (their ids), and records kept because they were written over the
    protocol (`recorded_by` set) although they name a source."""

    removed: list[str]
    kept_recorded: int


def stale_ids(stored: Iterable[DecisionRecord], corpus: Corpus) -> list[str]:
    """Ids of stored records that came from a file (`source` set, `recorded_by` not) whose
    file is gone, or whose file no longer yields that id. Pure: tested by tables.
    """
    stale = []
    for record in stored:
        record_id, source = record.id, record.source
        if source is None or record.recorded_by is not None:
            continue
        if source in corpus.unreadable:
            continue
        if source not in corpus.files or record_id not in corpus.ids_by_source.get(source, ()):
            stale.append(record_id)
    return stale


def corpus_of(
    paths: Sequence[Path], records: Iterable[DecisionRecord], failures: Iterable[FileParseError]
) -> Corpus:
    """The corpus of `paths` from what `Indexer.load(paths, ...)` gave: its records and
    its failures (taken before a write adds refused records). `cstp index --prune` passes
    the records it indexed, so each file is parsed once; the folders are walked again.
    """
    try:
        files = {source_for(path, root) for path, root in discover(paths)}
    except FileParseError as exc:
        return Corpus(frozenset(), {}, refused=f"not pruning: {exc}")
    by_source: dict[str, set[str]] = {}
    for record in records:
        if record.source is not None:
            by_source.setdefault(record.source, set()).add(record.id)
    return Corpus(
        files=frozenset(files | set(by_source)),
        ids_by_source={source: frozenset(ids) for source, ids in by_source.items()},
        unreadable=frozenset(failure.path for failure in failures),
    )


def prune(
    store: DecisionStore,
    corpus: Corpus,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    locks: WriterLocks | None = None,
) -> PruneSummary:
    """Delete the stale records of `store` (read page by page, never in one call), each
    as cstp.deleteDecision does: first taken out of every link of the decisions that stay
    (`unlink`), so none is left pointing at a removed id.

    With `locks` (the replicas' locks in a shared Redis) the stale records and every
    record linked to them are locked, read afresh and rewritten before the locks go, as
    cstp.deleteDecision does; when their links changed meanwhile, the new set is locked.
    Raises StoreUnavailable when Chroma fails; nothing is deleted before every page is read.
    Raises PruneRefused, nothing deleted, when `corpus.refused` says why, or when the set
    changed MAX_ATTEMPTS times.
    """
    if corpus.refused is not None:
        raise PruneRefused(corpus.refused)
    stale: list[str] = []
    gone: list[DecisionRecord] = []
    kept = 0
    for page in store.pages(metadata=True):
        rows = [row.decision for row in page.rows()]
        ids = stale_ids(rows, corpus)
        stale.extend(ids)
        wanted = set(ids)
        gone.extend(row for row in rows if row.id in wanted)
        kept += sum(1 for r in rows if r.source and r.recorded_by is not None)
    summary = PruneSummary(removed=stale, kept_recorded=kept)
    if locks is None or not stale:
        unlink(store, gone, clock())
        store.delete(stale)
        return summary
    for _ in range(MAX_ATTEMPTS):
        wanted = set(stale) | _linked(gone)
        with locks.hold_all(wanted):
            gone = _records(store, stale)  # afresh, now that no replica writes them
            if _linked(gone) - wanted:
                continue  # linked to others meanwhile: lock the new set
            unlink(store, gone, clock())
            store.delete(stale)
            return summary
    raise PruneRefused(
        f"nothing pruned: the links of the records to prune changed {MAX_ATTEMPTS} times while"
        " they were being locked; run it again when fewer agents update them"
    )


def _records(store: DecisionStore, ids: Sequence[str]) -> list[DecisionRecord]:
    """The stored records of `ids` (those that exist), read page by page."""
    return [row.decision for page in store.pages(ids=ids, metadata=True) for row in page.rows()]


def _linked(records: Iterable[DecisionRecord]) -> set[str]:
    """The ids `records` link to or from."""
    return {i for record in records for i in neighbours(record)}


def unlink(store: DecisionStore, gone: Sequence[DecisionRecord], at: datetime) -> None:
    """Rewrite the decisions that link to or from `gone` (records about to be removed) and
    are not removed themselves, without those links; their vectors are kept as stored.

    One that loses its last superseder gets back its earlier status, noted in its history
    with `by` null: the service (a2a.decisions.links.detached).
    """
    linked = _linked(gone) - {record.id for record in gone}
    if not linked:
        return
    records: list[DecisionRecord] = []
    vectors: list[np.ndarray] = []
    for page in store.pages(ids=sorted(linked), metadata=True, embeddings=True):
        assert page.embeddings is not None
        records.extend(row.decision for row in page.rows())
        vectors.extend(page.embeddings)
    by_id = {record.id: record for record in records}
    for record in gone:
        near = [by_id[i] for i in sorted(neighbours(record) & by_id.keys())]
        by_id.update((r.id, r) for r in detached(near, record, at=at, by=None))
    store.upsert([by_id[r.id] for r in records], np.asarray(vectors))


def prune_and_report(store: DecisionStore, corpus: Corpus, locks: WriterLocks | None = None) -> str:
    """Prune `store` to `corpus` (`corpus_of` the indexed paths); one line saying what was done.

    Raises StoreUnavailable when Chroma fails.
    """
    try:
        summary = prune(store, corpus, locks=locks)
    except PruneRefused as exc:
        return str(exc)
    return (
        f"pruned {len(summary.removed)} record(s) whose file or record is gone"
        f" ({summary.kept_recorded} recorded over the protocol left alone)"
    )
