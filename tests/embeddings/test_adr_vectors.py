"""The ADR vectors kept in tests/data are the default model's, for every ADR of the corpus.

The session's ADR store is indexed with them (tests/adr_vectors.py); these tests fail, naming
the command that rebuilds them, when the corpus or the model no longer matches.
"""

from __future__ import annotations

import numpy as np
import pytest

from a2a.embeddings import Embedder
from tests.adr_vectors import VECTORS_FILE, StoredVectors, corpus_texts, load_vectors, text_key
from tests.conftest import ADR_CORPUS, ADR_RECORDS, require_shared

REBUILD = "rebuild them: .venv/bin/python -m tests.adr_vectors"


@pytest.fixture(scope="module")
def texts() -> list[str]:
    require_shared()
    return corpus_texts(ADR_CORPUS)


def test_the_file_holds_a_vector_for_every_adr_and_no_other(texts: list[str]) -> None:
    assert len(texts) == ADR_RECORDS
    stored = load_vectors()
    assert set(stored) == {text_key(t) for t in texts}, f"{VECTORS_FILE} is stale; {REBUILD}"


def test_the_model_still_gives_the_stored_vectors(texts: list[str], embedder: Embedder) -> None:
    # The shortest, a middle one and the longest (the most windows): 1 to 16 model calls.
    by_length = sorted(texts, key=len)
    sample = [by_length[0], by_length[len(by_length) // 2], by_length[-1]]
    stored = load_vectors()
    fresh = np.asarray(embedder.embed_documents(sample), dtype=np.float32)
    kept = np.stack([stored[text_key(t)] for t in sample])
    np.testing.assert_allclose(fresh, kept, atol=1e-6, err_msg=f"the model changed; {REBUILD}")


def test_a_text_not_in_the_file_is_embedded_by_the_model(embedder: Embedder) -> None:
    model = StoredVectors(embedder)
    text = "Keep decision records in Chroma next to their structured metadata"
    assert model.embed_documents([text]) == embedder.embed_documents([text])
    assert model.missed == 1
    assert model.embed_documents([text]) == embedder.embed_documents([text])
    assert model.missed == 1  # answered from what it embedded the first time
