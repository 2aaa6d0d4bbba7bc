"""LiveIndex against real embedded Chroma: old stores, other handles' writes, deletions."""

from __future__ import annotations

import gc
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import faiss
import numpy as np
import pytest
from threadpoolctl import threadpool_info

from a2a.errors import StoreUnavailable
from a2a.index import IndexedRecord, SearchIndex
from a2a.index.sync import LiveIndex
from a2a.records import DecisionRecord
from a2a.store.chroma import ChromaDecisionStore
from a2a.store.metadata import to_metadata
from a2a.store.pages import StoredPage
from tests.conftest import SAMPLE
from tests.index.helpers import unit_vectors, write


def _write_without_updated_at(store: ChromaDecisionStore, records: list[DecisionRecord]) -> None:
    """As a store written before `updated_at` existed: metadata without it (the marker
    changed as a write of this process changes it: the folder has no other writer)."""
    collection = store._get_collection(create=True)
    collection.upsert(
        ids=[r.id for r in records],
        embeddings=unit_vectors(len(records), 8, seed=3),
        metadatas=[to_metadata(r) for r in records],
        documents=[r.embedding_text() for r in records],
    )
    store._bump_revision(collection)


def _sample_store(
    tmp_path: Path,
    collection: str,
    count: int,
    kind: type[ChromaDecisionStore] = ChromaDecisionStore,
) -> ChromaDecisionStore:
    """A store in `tmp_path` holding the first `count` SAMPLE records."""
    store = kind(data_dir=tmp_path, collection=collection, embedding_model="t")
    write(store, SAMPLE[:count])
    return store


async def _loaded(store: ChromaDecisionStore) -> LiveIndex:
    """A LiveIndex over `store`, loaded."""
    live = LiveIndex(store)
    await live.current()
    return live


async def _live(
    tmp_path: Path, collection: str, count: int
) -> tuple[ChromaDecisionStore, LiveIndex]:
    """A store holding the first `count` SAMPLE records and a loaded LiveIndex over it."""
    store = _sample_store(tmp_path, collection, count)
    return store, await _loaded(store)


def _ids(index: SearchIndex) -> set[str]:
    with index.reading():
        return {index.id_of(int(r)) for r in np.flatnonzero(index.mask(None))}


async def test_records_without_updated_at_load_and_new_ones_are_found_by_the_id_diff(
    tmp_path: Path,
) -> None:
    store = ChromaDecisionStore(data_dir=tmp_path, collection="old", embedding_model="t")
    _write_without_updated_at(store, SAMPLE[:3])
    live = LiveIndex(store)
    assert _ids(await live.current()) == {"d01", "d02", "d03"}
    _write_without_updated_at(store, SAMPLE[3:5])
    assert _ids(await live.current()) == {"d01", "d02", "d03", "d04", "d05"}
    write(store, [DecisionRecord(id="n1", title="Stamped record")])
    store.delete(["d01"])
    assert _ids(await live.current()) == {"d02", "d03", "d04", "d05", "n1"}
    store.close()


async def test_same_process_writes_are_searchable_before_any_freshness_check(
    tmp_path: Path,
) -> None:
    store, live = await _live(tmp_path, "own", 2)
    record = DecisionRecord(id="w1", title="Written by this process")
    (stored,) = store.upsert([record], unit_vectors(1, 8))
    vector = unit_vectors(1, 8)[0]
    live.apply(
        [IndexedRecord("w1", stored.decision, vector, record.embedding_text(), stored.updated_at)]
    )
    assert "w1" in _ids(live.index)
    assert _ids(await live.current()) == {"d01", "d02", "w1"}
    store.close()


class BrokenStore(ChromaDecisionStore):
    """A real store whose whole-store read hits a bug of ours (not Chroma failing)."""

    def pages(self, **kwargs: object) -> Iterator[StoredPage]:
        raise TypeError("a bug in our own code")


async def test_a_bug_while_loading_is_raised_as_a_fault_not_store_unavailable(
    tmp_path: Path,
) -> None:
    store = _sample_store(tmp_path, "bug", 1, BrokenStore)
    live = LiveIndex(store)
    with pytest.raises(RuntimeError) as caught:
        await live.current()
    assert isinstance(caught.value.__cause__, TypeError)
    assert not isinstance(caught.value, StoreUnavailable)
    store.close()


async def test_a_loaded_index_has_its_keyword_statistics_before_any_query(
    tmp_path: Path,
) -> None:
    store = _sample_store(tmp_path, "warm", 3)
    index = await LiveIndex(store).current()
    assert index.keyword_work("kafka") is not None  # None: computed at the first query
    store.close()


async def test_the_load_leaves_the_garbage_collector_as_it_found_it(tmp_path: Path) -> None:
    store = _sample_store(tmp_path, "collector", 3)
    assert gc.isenabled()
    live = await _loaded(store)
    assert gc.isenabled() and live.index.alive_count == 3
    gc.disable()
    try:
        LiveIndex(store)._load()
        assert not gc.isenabled()
    finally:
        gc.enable()
    store.close()


async def test_a_load_changes_nothing_process_wide(tmp_path: Path) -> None:
    """Library code leaves process-wide state to the entry points (a2a.app.process): a load
    freezes no object (its rows are columns, not objects a full collection walks:
    tests/index/test_columns_memory.py) and limits no thread pool."""
    store = _sample_store(tmp_path, "frozen", 3)
    frozen = gc.get_freeze_count()
    pools = [(p["internal_api"], p["num_threads"]) for p in threadpool_info()]
    graph_threads = faiss.omp_get_max_threads()
    live = await _loaded(store)
    assert live.index.alive_count == 3 and gc.isenabled()
    assert gc.get_freeze_count() == frozen
    assert [(p["internal_api"], p["num_threads"]) for p in threadpool_info()] == pools
    assert faiss.omp_get_max_threads() == graph_threads
    await live.stop()
    store.close()


async def test_records_landed_by_a_write_that_failed_midway_are_seen_by_the_next_query(
    tmp_path: Path,
) -> None:
    # Chunk 1 of 2 lands, chunk 2 fails: Chroma holds a1 (a retry of it is answered
    # "already stored"), so the next query must not keep answering without it.
    store, live = await _live(tmp_path, "mid", 2)
    store._max_batch = 1
    collection = store._get_collection(create=True)
    real_upsert, calls = collection.upsert, []

    def failing_second(**kwargs: object) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise sqlite3.OperationalError("disk I/O error")
        real_upsert(**kwargs)

    collection.upsert = failing_second
    records = [DecisionRecord(id="a1", title="Lands"), DecisionRecord(id="a2", title="Fails")]
    with pytest.raises(StoreUnavailable):
        store.upsert(records, unit_vectors(2, 8))
    assert store.get(ids=["a1"])  # it landed
    assert _ids(await live.current()) == {"d01", "d02", "a1"}
    store.close()
