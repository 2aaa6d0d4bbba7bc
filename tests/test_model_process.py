"""The model in a child process (a2a.embeddings.child): same vectors, same stop and error
semantics as the model in this process."""

from __future__ import annotations

import signal
from pathlib import Path

import numpy as np
import pytest

from a2a.embeddings import EmbeddingModelError, load_embedder
from a2a.embeddings.child import ModelProcess
from a2a.indexer import Indexer, IndexSummary
from a2a.records import DecisionRecord
from a2a.stopping import StopRequest
from a2a.store import ChromaDecisionStore

FAST = "wordllama-l2-supercat-256"
BATCH = 4


def records(n: int) -> list[DecisionRecord]:
    return [
        DecisionRecord(id=f"r{i:04d}", title=f"Decision number {i} on queues") for i in range(n)
    ]


@pytest.fixture
def fast_store(tmp_path: Path) -> ChromaDecisionStore:
    return ChromaDecisionStore(data_dir=tmp_path, collection="child", embedding_model=FAST)


def test_the_child_gives_the_vectors_the_model_gives_here() -> None:
    texts = ["Use Postgres for the ledger", "Queue writes through Kafka"]
    with ModelProcess(FAST) as model:
        vectors = model.embed(texts)
    here = np.asarray(load_embedder(FAST).embed_documents(texts), dtype=np.float32)
    assert vectors.dtype == np.float32 and vectors.shape == (2, 256)
    np.testing.assert_allclose(vectors, here, atol=1e-6)


def test_a_run_with_the_model_in_a_child_stores_every_record_and_skips_unchanged_ones(
    fast_store: ChromaDecisionStore,
) -> None:
    embedder = load_embedder(FAST)
    indexer = Indexer(fast_store, embedder, BATCH, model_process_min=0)
    first, again = IndexSummary(), IndexSummary()
    indexer.write(records(10), first)
    indexer.write(records(10), again)
    assert (first.new, again.unchanged, again.new, fast_store.count()) == (10, 10, 0, 10)
    (page,) = fast_store.pages(ids=["r0003"], embeddings=True)
    assert page.embeddings is not None
    here = embedder.embed_documents([records(10)[3].embedding_text()])
    np.testing.assert_allclose(page.embeddings[0], here[0], atol=1e-6)


def test_a_stop_ends_the_run_after_the_batch_being_written(
    fast_store: ChromaDecisionStore,
) -> None:
    stop, summary = StopRequest(), IndexSummary()

    def progress(n: int) -> None:
        stop.signal = signal.SIGTERM  # as the handler does when SIGTERM arrives mid-batch

    indexer = Indexer(fast_store, load_embedder(FAST), BATCH, model_process_min=0)
    indexer.write(records(3 * BATCH), summary, progress, stop=stop.is_set)
    assert summary.interrupted
    assert (summary.new, fast_store.count()) == (BATCH, BATCH)


def test_a_model_that_cannot_load_in_the_child_raises_its_error_here() -> None:
    with ModelProcess("no-such-model") as model, pytest.raises(EmbeddingModelError):
        model.embed(["text"])
