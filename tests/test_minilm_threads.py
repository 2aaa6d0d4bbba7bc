"""MiniLM's calls run one thread each (a2a.embeddings.minilm_onnx): the same vectors in
parallel batches, from concurrent callers, and as with onnxruntime's split over cores."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from a2a.embeddings.minilm_onnx import BATCH_SIZE, MiniLMOnnxEmbedder

TEXTS = [
    f"Decision {n}: " + " ".join(["adopt Postgres for the ledger"] * (1 + n % 5))
    for n in range(3 * BATCH_SIZE + 5)
]


@pytest.fixture(scope="module")
def model() -> MiniLMOnnxEmbedder:
    return MiniLMOnnxEmbedder()


def test_documents_embedded_in_parallel_batches_keep_their_order(
    model: MiniLMOnnxEmbedder,
) -> None:
    batched = np.asarray(model.embed_documents(TEXTS))
    alone = np.asarray([model.embed_query(text) for text in TEXTS])
    assert batched.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(batched, alone, atol=1e-6)
    # Texts differ in length, so sorted batches reorder them: each must get its own back.
    assert not np.allclose(batched[0], batched[1], atol=1e-3)


def test_concurrent_queries_get_their_own_vectors(model: MiniLMOnnxEmbedder) -> None:
    alone = [model.embed_query(text) for text in TEXTS]
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(model.embed_query, TEXTS))
    np.testing.assert_allclose(np.asarray(together), np.asarray(alone), atol=1e-6)


def test_one_thread_a_call_gives_the_vectors_of_a_split_call(model: MiniLMOnnxEmbedder) -> None:
    split = MiniLMOnnxEmbedder(threads=2)
    np.testing.assert_allclose(
        np.asarray(split.embed_documents(TEXTS[:20])),
        np.asarray(model.embed_documents(TEXTS[:20])),
        atol=1e-6,
    )
