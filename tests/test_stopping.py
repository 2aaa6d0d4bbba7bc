"""Stopping at a safe point: a signal ends an index run between batches, never inside one."""

from __future__ import annotations

import os
import signal

import pytest

from a2a.embeddings import Embedder
from a2a.ingest.indexer import EMBED_CHUNK_RECORDS, Indexer, IndexSummary
from a2a.ingest.stopping import StopRequest, stop_on_signals
from a2a.records import DecisionRecord
from a2a.store.chroma import ChromaDecisionStore

#: Small batches keep these runs short (the default is a2a.ingest.indexer.BATCH_SIZE).
BATCH = 512


def records(n: int) -> list[DecisionRecord]:
    return [DecisionRecord(id=f"r{i:04d}", title=f"Decision number {i}") for i in range(n)]


def test_stop_requested_while_a_batch_embeds_stores_its_chunks_embedded_and_ends_the_run(
    store: ChromaDecisionStore, embedder: Embedder
) -> None:
    """Reported: a stop threw away the batch being embedded (the whole ADR corpus is one),
    minutes of work; now the chunks already embedded are stored."""
    stop = StopRequest()
    summary = IndexSummary()

    def progress(n: int) -> None:
        stop.signal = signal.SIGTERM  # as the handler does when SIGTERM arrives mid-batch

    Indexer(store, embedder, BATCH).write(records(3 * BATCH), summary, progress, stop=stop.is_set)
    assert summary.interrupted
    assert summary.new == store.count()
    # The first chunk at least, whole chunks only, and not the batches never read.
    assert EMBED_CHUNK_RECORDS <= summary.new <= BATCH
    assert summary.new % EMBED_CHUNK_RECORDS == 0


def test_without_a_stop_request_every_batch_is_written(
    store: ChromaDecisionStore, embedder: Embedder
) -> None:
    summary = IndexSummary()
    Indexer(store, embedder, BATCH).write(records(BATCH + 1), summary, stop=StopRequest().is_set)
    assert not summary.interrupted and store.count() == BATCH + 1


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["sigint", "sigterm"]
)
def test_signal_inside_the_block_is_noted_and_gives_the_shell_exit_code(
    sig: signal.Signals, code: int
) -> None:
    heard: list[signal.Signals] = []
    before = signal.getsignal(sig)
    with stop_on_signals(heard.append) as stop:
        os.kill(os.getpid(), sig)
        os.kill(os.getpid(), sig)
    assert stop.is_set() and stop.signal == sig and stop.exit_code == code
    assert heard == [sig]  # told once, however many signals came
    assert signal.getsignal(sig) is before


def test_each_signal_after_the_first_goes_to_on_second() -> None:
    first: list[signal.Signals] = []
    later: list[signal.Signals] = []
    with stop_on_signals(first.append, later.append) as stop:
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGINT)
    assert stop.signal == signal.SIGINT
    assert (first, later) == ([signal.SIGINT], [signal.SIGTERM, signal.SIGINT])
