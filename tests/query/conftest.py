"""Fixtures of the query tests that run on the fast static model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from a2a.embeddings import Embedder, load_embedder
from a2a.store.chroma import ChromaDecisionStore
from tests.conftest import SAMPLE, index_records

FAST = "wordllama-l2-supercat-256"


@pytest.fixture(scope="session")
def fast() -> Embedder:
    """The fast static model (WordLlama), loaded once."""
    return load_embedder(FAST)


@pytest.fixture
def fast_store(tmp_path: Path, fast: Embedder) -> Iterator[ChromaDecisionStore]:
    """A fresh embedded store holding SAMPLE, embedded with `fast`."""
    store = ChromaDecisionStore(
        data_dir=tmp_path / "chroma", collection="decisions", embedding_model=fast.name
    )
    index_records(store, fast, SAMPLE)
    yield store
    store.close()
