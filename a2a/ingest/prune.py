"""`cstp index --prune`: remove records whose file, or whose record in a file, is gone."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from a2a.ingest import ParseError, discover
from a2a.ingest.indexer import Indexer, IndexSummary
from a2a.ingest.loader import source_for
from a2a.store.interface import DecisionStore
from a2a.store.stored import StoredDecision


@dataclass(frozen=True, slots=True)
class Corpus:
    """What the indexed folders hold now: every file (by source) and the ids each yields.

    `unreadable` files failed to parse: their records are left alone, since what they
    hold is unknown.
    """

    files: frozenset[str]
    ids_by_source: Mapping[str, frozenset[str]]
    unreadable: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True, slots=True)
class PruneSummary:
    """Records removed (their ids), and records kept because they were written over the
    protocol (`recorded_by` set) although they name a source."""

    removed: list[str]
    kept_recorded: int


class PruneRefused(Exception):
    """A path given to prune could not be read: pruning would remove everything under it."""


def stale_ids(stored: Iterable[StoredDecision], corpus: Corpus) -> list[str]:
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


def read_corpus(indexer: Indexer, paths: Sequence[Path]) -> Corpus:
    """The files under `paths` and the record ids each yields, parsed as `cstp index` does.

    Raises PruneRefused when a path itself cannot be read (missing, unsupported).
    """
    try:
        files = {source_for(path, root) for path, root in discover(paths)}
    except ParseError as exc:
        raise PruneRefused(f"not pruning: {exc}") from None
    summary = IndexSummary()
    by_source: dict[str, set[str]] = {}
    for record in indexer.load(paths, summary):
        if record.source is not None:
            by_source.setdefault(record.source, set()).add(record.id)
    return Corpus(
        files=frozenset(files | set(by_source)),
        ids_by_source={source: frozenset(ids) for source, ids in by_source.items()},
        unreadable=frozenset(failure.path for failure in summary.failures),
    )


def prune(store: DecisionStore, corpus: Corpus) -> PruneSummary:
    """Delete the stale records of `store` (read page by page, never in one call).

    Raises StoreUnavailable when Chroma fails; nothing is deleted before every page is read.
    """
    stale: list[str] = []
    kept = 0
    for page in store.pages(metadata=True):
        rows = page.decisions()
        stale.extend(stale_ids(rows, corpus))
        kept += sum(1 for r in rows if r.source and r.recorded_by is not None)
    store.delete(stale)
    return PruneSummary(removed=stale, kept_recorded=kept)


def prune_and_report(store: DecisionStore, indexer: Indexer, paths: Sequence[Path]) -> str:
    """Prune `store` to the files under `paths`; one line saying what was done.

    Raises StoreUnavailable when Chroma fails.
    """
    try:
        corpus = read_corpus(indexer, paths)
    except PruneRefused as exc:
        return str(exc)
    summary = prune(store, corpus)
    return (
        f"pruned {len(summary.removed)} record(s) whose file or record is gone"
        f" ({summary.kept_recorded} recorded over the protocol left alone)"
    )
