"""`cstp index`'s pipeline: the model embeds the next batch while Chroma writes this one."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

import pytest

from a2a.embeddings import Embedder, load_embedder
from a2a.embeddings.child import ModelProcess
from a2a.ingest.indexer import Indexer, IndexSummary
from a2a.records import DecisionRecord
from a2a.store.chroma import ChromaDecisionStore
from a2a.store.pages import StoredRecord

FAST = "wordllama-l2-supercat-256"
BATCH = 4


def records(n: int) -> list[DecisionRecord]:
    return [DecisionRecord(id=f"r{i:04d}", title=f"Decision {i} on caching") for i in range(n)]


class WaitingStore(ChromaDecisionStore):
    """The embedded store, whose first write waits until the second batch is embedding."""

    def __init__(self, second_batch: threading.Event, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.second_batch = second_batch
        self.seen_during_first_write: bool | None = None

    def upsert(
        self, records: Sequence[DecisionRecord], embeddings: Any, **kwargs: Any
    ) -> list[StoredRecord]:
        if self.seen_during_first_write is None:
            self.seen_during_first_write = self.second_batch.wait(timeout=20)
        return super().upsert(records, embeddings, **kwargs)


class Told:
    """Sets `event` when asked to embed a text of record r0004 (the second batch's first)."""

    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def saw(self, texts: Sequence[str]) -> None:
        if any(text.startswith("Decision 4 ") for text in texts):
            self.event.set()


class TellingEmbedder:
    """The fast model here, telling when it is given the second batch."""

    def __init__(self, inner: Embedder, told: Told) -> None:
        self.inner, self.told = inner, told
        self.name, self.dimension = inner.name, inner.dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.told.saw(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


@pytest.mark.parametrize("where", ["here", "child"])
def test_the_next_batch_is_embedding_while_this_one_is_written(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    second_batch = threading.Event()
    told = Told(second_batch)
    store = WaitingStore(
        second_batch, data_dir=tmp_path, collection="pipeline", embedding_model=FAST
    )
    if where == "child":
        handed = ModelProcess.submit

        def submit(model: ModelProcess, texts: Sequence[str]) -> Any:
            told.saw(texts)
            return handed(model, texts)

        monkeypatch.setattr(ModelProcess, "submit", submit)
        embedder: Any = load_embedder(FAST)
    else:
        embedder = TellingEmbedder(load_embedder(FAST), told)
    summary = IndexSummary()
    indexer = Indexer(store, embedder, BATCH, model_process_min=0 if where == "child" else None)
    indexer.write(records(3 * BATCH), summary)
    assert store.seen_during_first_write is True
    assert (summary.new, store.count()) == (3 * BATCH, 3 * BATCH)
    (page,) = store.pages(ids=["r0009"], embeddings=True)
    assert page.embeddings is not None
    assert page.embeddings[0] == pytest.approx(
        load_embedder(FAST).embed_documents(["Decision 9 on caching"])[0], abs=1e-6
    )


class HeldEmbedder:
    """The fast model; its second call waits (at most 30 s) until `release` is set."""

    def __init__(self) -> None:
        self.inner = load_embedder(FAST)
        self.name, self.dimension = self.inner.name, self.inner.dimension
        self.calls, self.release, self.finished = 0, threading.Event(), threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls == 2:
            self.release.wait(timeout=30)
            self.finished.set()
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def test_a_stop_does_not_wait_for_the_batch_the_model_is_embedding(tmp_path: Path) -> None:
    """Reported: a stop waited for the next batch's embedding, then dropped it (with
    MiniLM and batches of 5,000, minutes before `cstp index` answered SIGTERM)."""
    store = ChromaDecisionStore(data_dir=tmp_path, collection="pipeline", embedding_model=FAST)
    embedder = HeldEmbedder()
    summary, stopped = IndexSummary(), threading.Event()
    try:
        Indexer(store, embedder, BATCH).write(  # type: ignore[arg-type]
            records(3 * BATCH), summary, lambda n: stopped.set(), stop=stopped.is_set
        )
        assert not embedder.finished.is_set()  # returned while batch 2 was still embedding
    finally:
        embedder.release.set()
    assert summary.interrupted and (summary.new, store.count()) == (BATCH, BATCH)


def test_an_abandoned_model_process_ends_at_once_and_cancels_what_waits() -> None:
    model = ModelProcess(FAST)
    first = model.submit(["loading the model takes the child a while"])
    second = model.submit(["never embedded"])
    children = list(model._pool._processes.values())  # type: ignore[union-attr]
    model.abandon()
    # Ended, by the OS's word: its end of the sentinel pipe is closed. Not is_alive(): when
    # the pool's manager thread reaps the child first, CPython's Popen.poll gets ECHILD and
    # answers None for good, so is_alive() stays True for a process long gone (1 run in 3).
    assert children and all(wait([child.sentinel], timeout=0) for child in children)
    assert second.cancelled() or isinstance(second.exception(timeout=10), Exception)
    assert first.done() or first.exception(timeout=10) is not None
    model.close()


def test_a_stop_while_the_model_embeds_ends_the_run_without_waiting_for_it(
    tmp_path: Path,
) -> None:
    """Reported: a SIGTERM while the model embedded the batch to be written next waited
    for that embedding and wrote it (with MiniLM, tens of seconds)."""
    store = ChromaDecisionStore(data_dir=tmp_path, collection="pipeline", embedding_model=FAST)
    embedder = HeldEmbedder()
    summary = IndexSummary()
    first_written: list[float] = []

    def stop() -> bool:
        # The request comes 2 s after the first batch is written: by then this thread
        # waits for the second batch's vectors, which the model holds.
        return bool(first_written) and time.monotonic() - first_written[0] > 2

    try:
        Indexer(store, embedder, BATCH).write(  # type: ignore[arg-type]
            records(3 * BATCH), summary, lambda n: first_written.append(time.monotonic()), stop
        )
        assert not embedder.finished.is_set()
    finally:
        embedder.release.set()
    assert summary.interrupted and (summary.new, store.count()) == (BATCH, BATCH)
