"""`cstp index`: files -> decision records -> embeddings -> the store, reporting what changed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from a2a.decisions.reviews import keep_reviews
from a2a.embeddings import Embedder
from a2a.ingest import LoadedFile, ParseError, discover, load_file
from a2a.records import DecisionRecord
from a2a.store import ChromaDecisionStore

#: Records embedded and written per store call.
BATCH_SIZE = 32


@dataclass
class IndexSummary:
    """Counts of one index run, plus what failed and what was noticed (path: message).

    new/updated/unchanged count records; skipped (no decision in them) and failed count files.
    """

    new: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0
    #: True when a stop request (SIGINT/SIGTERM) ended the run between two batches.
    interrupted: bool = False
    failures: list[ParseError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> int:
        """Files that could not be read or parsed."""
        return len(self.failures)

    @property
    def exit_code(self) -> int:
        """0 when every file was indexed, 1 when some failed."""
        return 1 if self.failures else 0


class Indexer:
    """Indexes decision files into a store; unchanged records are not embedded again."""

    def __init__(self, store: ChromaDecisionStore, embedder: Embedder) -> None:
        self._store = store
        self._embedder = embedder

    def load(self, paths: Sequence[Path], summary: IndexSummary) -> list[DecisionRecord]:
        """Every record in `paths`, later files winning on a repeated id.

        Unreadable files go to `summary.failures`; they never stop the others.
        """
        by_id: dict[str, DecisionRecord] = {}
        files: list[tuple[Path, Path]] = []
        for path in paths:
            try:
                files.extend(discover([path]))
            except ParseError as exc:
                summary.failures.append(exc)
        for path, root in files:
            try:
                loaded: LoadedFile = load_file(path, root)
            except ParseError as exc:
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
        """Embed and upsert new and changed records in batches; `progress(n)` after each.

        `stop()` is asked before each batch: when true, the run ends there with
        `summary.interrupted` set, so a batch is either written whole or not started.
        """
        for start in range(0, len(records), BATCH_SIZE):
            if stop is not None and stop():
                summary.interrupted = True
                return
            batch = records[start : start + BATCH_SIZE]
            stored = self._store.content_hashes([r.id for r in batch])
            changed = [r for r in batch if stored.get(r.id) != r.content_hash()]
            summary.unchanged += len(batch) - len(changed)
            summary.updated += sum(1 for r in changed if r.id in stored)
            summary.new += sum(1 for r in changed if r.id not in stored)
            if changed:
                changed = keep_reviews(self._store, changed)
                documents = [r.embedding_text() for r in changed]
                self._store.upsert(changed, self._embedder.embed_documents(documents), documents)
            if progress is not None:
                progress(len(batch))

    def index(self, paths: Sequence[Path]) -> IndexSummary:
        """Load and write everything under `paths`; raises StoreUnavailable if Chroma fails."""
        summary = IndexSummary()
        self.write(self.load(paths, summary), summary)
        return summary
