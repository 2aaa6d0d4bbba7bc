"""Embedded Chroma: model check, one process at a time, update without duplicates."""

from __future__ import annotations

from pathlib import Path

import pytest

from a2a.app.runtime import Runtime
from a2a.embeddings import Embedder
from a2a.errors import EmbeddingModelMismatch, StoreLocked
from a2a.records import DecisionRecord
from a2a.settings import Settings
from a2a.store.chroma import REVISION_KEY, ChromaDecisionStore
from a2a.store.metadata import decode
from tests.conftest import SAMPLE, index_records


def test_collection_built_with_another_model_is_a_start_up_error_naming_both(
    settings: Settings, embedder: Embedder
) -> None:
    other = ChromaDecisionStore(
        data_dir=settings.data_dir / "chroma",
        collection=settings.collection,
        embedding_model="some-other-model",
    )
    other.upsert(SAMPLE[:1], [[1.0] + [0.0] * 383])
    other.close()
    with pytest.raises(EmbeddingModelMismatch) as caught:
        Runtime.open(settings, role="test", embedder=embedder)
    assert "some-other-model" in str(caught.value) and embedder.name in str(caught.value)


def test_second_opener_of_the_embedded_store_is_refused(
    settings: Settings, embedder: Embedder
) -> None:
    first = Runtime.open(settings, role="first holder", embedder=embedder)
    try:
        with pytest.raises(StoreLocked, match="first holder"):
            Runtime.open(settings, role="second", embedder=embedder)
    finally:
        first.close()
    Runtime.open(settings, role="after release", embedder=embedder).close()


def test_reindexing_changed_record_updates_it_in_place(
    store: ChromaDecisionStore, embedder: Embedder
) -> None:
    index_records(store, embedder, SAMPLE)
    changed = SAMPLE[0].model_copy(update={"status": "superseded"})
    summary = index_records(store, embedder, [changed, *SAMPLE[1:]])
    assert (summary.new, summary.updated, summary.unchanged) == (0, 1, len(SAMPLE) - 1)
    assert store.count() == len(SAMPLE)


def test_lock_file_lives_in_the_data_dir(settings: Settings, tmp_path: Path) -> None:
    assert settings.store_lock_path == tmp_path / "data" / "cstp.lock"


def test_record_without_optional_fields_round_trips(
    store: ChromaDecisionStore, embedder: Embedder
) -> None:
    index_records(store, embedder, [DecisionRecord(id="bare", title="Bare")])
    (row,) = store.get(ids=["bare"])
    assert row.id == "bare" and row.decision.title == "Bare"
    # What Chroma holds, read without our decoding: only the three keys, no empty fields.
    raw = store._get_collection(create=False).get(ids=["bare"], include=["metadatas"])
    metadata = raw["metadatas"][0]
    assert decode("bare", metadata)[0].title == "Bare"
    assert set(metadata) == {"content_hash", "record", "updated_at"}


def test_get_returns_records_by_id_or_where_sorted_by_id(
    store: ChromaDecisionStore, embedder: Embedder
) -> None:
    assert store.get() == [] and store.revision() is None
    index_records(store, embedder, SAMPLE)
    assert [r.id for r in store.get(where={"stakes": {"$in": ["low"]}})] == ["d03", "d05"]
    (row,) = store.get(ids=["d04"], documents=True)
    assert row.decision.category == "security"
    assert row.document is not None and row.document.startswith("Encrypt customer exports")
    assert [r.id for r in store.get()] == sorted(r.id for r in SAMPLE)


def test_every_write_changes_the_revision(store: ChromaDecisionStore, embedder: Embedder) -> None:
    index_records(store, embedder, SAMPLE[:2])
    first = store.revision()
    index_records(store, embedder, SAMPLE[2:3])
    second = store.revision()
    assert first and second and first != second
    index_records(store, embedder, SAMPLE[:3])  # nothing changed: nothing written
    assert store.revision() == second


def test_embedded_revision_is_read_once_then_kept_by_this_processs_writes(
    store: ChromaDecisionStore, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder lock makes this process the only writer: after one read, the marker is
    answered from memory, and a write through another store object on the folder changes
    it (and Chroma's copy, which the next process reads): the two share the folder's
    LocalRevisions, as every store object on one folder must (no process-global state)."""
    index_records(store, embedder, SAMPLE[:2])
    other = ChromaDecisionStore(
        data_dir=store._data_dir,
        collection=store.collection_name,
        embedding_model=embedder.name,
        revisions=store.revisions,
    )
    first = other.revision()
    client = other._get_client()

    def no_chroma_call(*args: object, **kwargs: object) -> None:
        raise AssertionError("revision() called Chroma")

    monkeypatch.setattr(client, "get_collection", no_chroma_call)
    assert other.revision() == first
    index_records(store, embedder, SAMPLE[2:3])
    second = other.revision()
    assert second != first
    monkeypatch.undo()
    fresh = chromadb_revision(store)
    assert fresh == second
    other.close()


def chromadb_revision(store: ChromaDecisionStore) -> str:
    """The marker as Chroma holds it (what a new process reads first)."""
    collection = store._get_client().get_collection(store.collection_name)
    return str(collection.metadata[REVISION_KEY])


def test_dates_before_year_1000_are_four_digit_rfc3339() -> None:
    from datetime import UTC, datetime

    from a2a.records.dates import format_date

    assert format_date(datetime(999, 5, 1, tzinfo=UTC)) == "0999-05-01T00:00:00Z"
    assert format_date(datetime(1, 1, 1, tzinfo=UTC)) == "0001-01-01T00:00:00Z"
