"""An index run as `cstp index`, `cstp serve --index` and `cstp eval` make it: its progress
and its report, logged (CSTP_LOG_FORMAT) on stderr."""

from __future__ import annotations

import logging
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

from a2a.errors import EmbeddingModelError, EmbeddingsUnavailable, StoreUnavailable
from a2a.ingest.stopping import StopRequest, exit_now
from a2a.tenants.names import DEFAULT_TENANT

if TYPE_CHECKING:  # the indexer loads only when a run starts
    from a2a.app.runtime import Runtime
    from a2a.ingest.indexer import IndexSummary

log = logging.getLogger(__name__)
err = Console(stderr=True, highlight=False, soft_wrap=True)

#: Seconds between two progress lines when no bar is shown (stderr not a terminal).
PROGRESS_LOG_SECONDS = 5.0


def run_index(
    runtime: Runtime,
    paths: list[Path],
    *,
    stop: StopRequest | None = None,
    progress_bar: bool | None = None,
    shared_locks: bool = False,
    prune: bool = False,
    snapshot: bool = False,
    tenant: str | None = None,
) -> IndexSummary:
    """Index `paths` into the runtime's store with its model and log what was done:
    warnings, failures, a one-line summary and, when stopped, how far it got. Progress
    shows as a bar (on a terminal, unless `progress_bar` says otherwise) or a log line
    every PROGRESS_LOG_SECONDS.

    `shared_locks`: take the replicas' locks in a shared Redis, when one is configured
    (Runtime.writer_locks), for the run. `prune`: then remove the records whose
    file, or record in a file, is gone, unless the run was interrupted (a2a.ingest.prune;
    the files are parsed once for both). `snapshot`: keep the search index beside the
    writes and leave its snapshot, with the graph, for the next `cstp serve`
    (a2a.app.kept_index; `tenant`'s snapshot folder, default tenant `default`), also when
    stopped. Raises StoreUnavailable, EmbeddingModelError and EmbeddingsUnavailable (a
    provider failing), having logged what was written before.
    """
    from a2a.app.kept_index import KeptIndex
    from a2a.ingest.indexer import MODEL_PROCESS_MIN_RECORDS, Indexer, IndexSummary
    from a2a.ingest.prune import corpus_of, prune_and_report

    with runtime.writer_locks() if shared_locks else nullcontext() as locks:
        store = runtime.store
        summary = IndexSummary()
        records = Indexer.load(paths, summary)
        stopped = None if stop is None else stop.is_set
        kept = None
        if snapshot:
            kept = KeptIndex.open(runtime, len(records), stopped, tenant or DEFAULT_TENANT)
        indexer = Indexer(
            store,
            runtime.embedder,
            runtime.settings.index_batch_size,
            model_process_min=MODEL_PROCESS_MIN_RECORDS,
            locks=locks,
            written=None if kept is None else kept.written,
        )
        # Taken before the write, which adds the records it refuses to the failures.
        corpus = corpus_of(paths, records, summary.failures) if prune else None
        bar = err.is_terminal if progress_bar is None else progress_bar
        with _progress(len(records), bar) as advance:
            try:
                indexer.write(records, summary, advance, stop=stopped)
            except (StoreUnavailable, EmbeddingModelError, EmbeddingsUnavailable):
                # The batches written so far stay written: say how far the run got. The counts
                # are of confirmed writes; a batch whose write the store did not answer may be
                # stored too (the re-run then finds it unchanged).
                _log_summary(store.location, summary)
                log.error(
                    "stopped %s (a batch the store did not confirm may be stored as well)",
                    _how_far(summary, len(records)),
                )
                raise
        _log_summary(store.location, summary)
        if summary.interrupted:
            if stop is not None and stop.signal is not None:
                log.warning(
                    "interrupted by %s %s", stop.signal.name, _how_far(summary, len(records))
                )
        elif corpus is not None:
            if kept is not None:
                kept.writes_done()
            log.info("%s", prune_and_report(store, corpus, locks))
            if kept is not None:
                kept.pruned()
        if kept is not None:
            kept.finish()
        return summary


@contextmanager
def _progress(total: int, bar: bool) -> Iterator[Callable[[int], None]]:
    """`advance(n)` for n more records done: a rich bar, or throttled log lines."""
    if not bar:
        yield ProgressLog(total, time.monotonic)
        return
    stderr = sys.stderr
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        # Erased when done on a terminal; elsewhere (--progress into a file) its last state stays.
        transient=err.is_terminal,
    ) as progress:
        task = progress.add_task("indexing", total=total)
        # While the bar is live, rich stands in for sys.stderr and prints what is written
        # there above the bar; the log handlers writing to stderr go through it too (a stop
        # is logged then), instead of through the bar's line.
        moved = [
            handler
            for handler in logging.getLogger().handlers
            if isinstance(handler, logging.StreamHandler) and handler.stream is stderr
        ]
        for handler in moved:
            handler.setStream(sys.stderr)
        try:
            yield lambda n: progress.advance(task, n)
        finally:
            for handler in moved:
                handler.setStream(stderr)


class ProgressLog:
    """Logs `indexing: D of T records embedded or unchanged (P%), S s` at most once every
    PROGRESS_LOG_SECONDS of `clock` (seconds), and when the last record is done."""

    def __init__(self, total: int, clock: Callable[[], float]) -> None:
        self.total, self.done, self.clock = total, 0, clock
        self.started = self.last = clock()

    def __call__(self, n: int) -> None:
        self.done += n
        now = self.clock()
        if now - self.last >= PROGRESS_LOG_SECONDS or self.done >= self.total:
            self.last = now
            log.info(
                "indexing: %d of %d records embedded or unchanged (%d%%), %.0f s",
                self.done,
                self.total,
                100 * self.done // max(self.total, 1),
                now - self.started,
            )


def _how_far(summary: IndexSummary, total: int) -> str:
    """How far a run that stopped early got, and how to go on."""
    done = summary.new + summary.updated + summary.unchanged
    return f"after {done} of {total} records; run the same command again to index the rest"


def _log_summary(location: str, summary: IndexSummary) -> None:
    """The warnings, the failures and the one-line summary of an index run."""
    for warning in summary.warnings:
        log.warning("%s", warning)
    for failure in summary.failures:
        log.error("failed: %s", failure)
    log.info(
        "indexed into %s: %d new, %d updated, %d unchanged, %d failed (%d files skipped)",
        location,
        summary.new,
        summary.updated,
        summary.unchanged,
        summary.failed,
        summary.skipped,
    )


def say_stopping(sig: signal.Signals) -> None:
    """What the first SIGINT/SIGTERM of a run says (a2a.ingest.stopping.stop_on_signals)."""
    log.warning(
        "%s: storing what is embedded, then stopping; %s again exits at once",
        sig.name,
        "Ctrl-C" if sig == signal.SIGINT else sig.name,
    )


def exit_on_second(sig: signal.Signals) -> None:
    """A second SIGINT/SIGTERM: exit now (128 + its number), whatever is being embedded.

    The handler runs in the main thread between two bytecodes, so never inside a call into
    Chroma (which holds the GIL until it returns): a write is stored whole or not at all.
    """
    log.warning("%s again: exiting now; run the same command again to index the rest", sig.name)
    err.show_cursor(True)  # the progress bar hid it, and will not get to show it again
    exit_now(128 + int(sig))
