"""Whole-store reads page by page: one reader or several, the same pages in order."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import cast

import chromadb
import numpy as np
import pytest
from chromadb.config import Settings as ChromaSettings

from a2a.errors import StoreUnavailable
from a2a.records import DecisionRecord
from a2a.store.chroma import HNSW_CONFIGURATION, MODEL_KEY, ChromaDecisionStore
from a2a.store.pages import StoredPage
from tests.index.helpers import write

MODEL = "test-model"


def records(n: int) -> list[DecisionRecord]:
    return [DecisionRecord(id=f"r{i:03d}", title=f"Decision number {i}") for i in range(n)]


def page_ids(store: ChromaDecisionStore, page_size: int, readers: int) -> list[list[str]]:
    return [
        page.ids
        for page in store.pages(
            documents=True, embeddings=True, page_size=page_size, readers=readers
        )
    ]


@pytest.mark.parametrize("count", [0, 1, 9, 10, 11, 31], ids=lambda n: f"{n}-records")
@pytest.mark.parametrize("readers", [2, 3], ids=lambda n: f"{n}-readers")
def test_several_readers_yield_the_pages_of_one_reader_in_the_same_order(
    tmp_path: Path, count: int, readers: int
) -> None:
    store = ChromaDecisionStore(data_dir=tmp_path, collection="paging", embedding_model=MODEL)
    write(store, records(count))
    one = page_ids(store, page_size=5, readers=1)
    assert page_ids(store, page_size=5, readers=readers) == one
    assert [i for page in one for i in page] == sorted(r.id for r in records(count))
    assert all(len(page) == 5 for page in one[:-1])
    store.close()


def test_several_readers_carry_documents_and_embeddings_of_each_row(tmp_path: Path) -> None:
    store = ChromaDecisionStore(data_dir=tmp_path, collection="paging", embedding_model=MODEL)
    written = records(12)
    write(store, written)
    by_id = {r.id: r for r in written}
    for page in store.pages(documents=True, embeddings=True, page_size=5, readers=2):
        assert page.documents == [by_id[i].embedding_text() for i in page.ids]
        assert page.embeddings is not None and page.embeddings.shape == (len(page.ids), 8)
        assert np.allclose(np.linalg.norm(page.embeddings, axis=1), 1.0, atol=1e-5)
    store.close()


def test_leaving_a_several_reader_read_early_stops_it(tmp_path: Path) -> None:
    store = ChromaDecisionStore(data_dir=tmp_path, collection="paging", embedding_model=MODEL)
    write(store, records(30))
    # A generator: closing it is what a caller leaving a `for` loop early does.
    pages = cast(Generator[StoredPage], store.pages(page_size=5, readers=2))
    assert next(pages).ids == [f"r{i:03d}" for i in range(5)]
    pages.close()
    assert store.count() == 30
    store.close()


def test_new_collections_get_the_sparser_hnsw_graph(tmp_path: Path) -> None:
    store = ChromaDecisionStore(data_dir=tmp_path, collection="fresh", embedding_model=MODEL)
    write(store, records(3))
    hnsw = store._get_collection(create=False).configuration["hnsw"]
    assert {key: hnsw[key] for key in HNSW_CONFIGURATION} == HNSW_CONFIGURATION
    store.close()


def test_a_collection_made_with_chromas_defaults_keeps_them_and_takes_writes(
    tmp_path: Path,
) -> None:
    client = chromadb.PersistentClient(
        path=str(tmp_path), settings=ChromaSettings(anonymized_telemetry=False)
    )
    client.create_collection(
        "older",
        configuration={"hnsw": {"space": "cosine"}},
        metadata={MODEL_KEY: MODEL},
        embedding_function=None,
    )
    store = ChromaDecisionStore(data_dir=tmp_path, collection="older", embedding_model=MODEL)
    write(store, records(7))
    write(store, records(9))
    hnsw = store._get_collection(create=False).configuration["hnsw"]
    assert (hnsw["ef_construction"], hnsw["max_neighbors"]) == (100, 16)
    assert [r.id for r in store.get()] == [r.id for r in records(9)]
    store.close()


def test_a_torn_page_is_read_again_and_a_lasting_one_is_chroma_unavailable(
    tmp_path: Path,
) -> None:
    """Bug seen under load: a Chroma server page of just-written records came back with ids
    and metadata but no embeddings, and the index load died on IndexError (-32603)."""
    store = ChromaDecisionStore(data_dir=tmp_path, collection="paging", embedding_model=MODEL)
    write(store, records(3))
    collection = store._guarded(store._get_collection, create=False)
    include = ["metadatas", "documents", "embeddings"]
    calls = 0

    def torn_first(**kwargs: object) -> dict[str, object]:
        nonlocal calls
        calls += 1
        result = dict(collection.get(**kwargs))
        if calls == 1:
            result["embeddings"] = np.zeros((0,), dtype=np.float32)
        return result

    page = store._page(torn_first, include=include, limit=10, offset=0)
    assert calls == 2 and page.ids == ["r000", "r001", "r002"]
    assert page.embeddings is not None and page.embeddings.shape == (3, 8)

    def always_torn(**kwargs: object) -> dict[str, object]:
        return {**collection.get(**kwargs), "documents": ["only one"]}

    with pytest.raises(StoreUnavailable, match="torn page: 3 ids but 1 documents"):
        store._page(always_torn, include=include, limit=10, offset=0)
    store.close()
