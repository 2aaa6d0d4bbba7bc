"""Stores written by the earlier format (every field flat, the text as Chroma's document)
still read, filter and re-index like stores written now."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from a2a.embeddings import Embedder
from a2a.records.filters import QueryFilters
from a2a.store.chroma import ChromaDecisionStore
from a2a.store.metadata import to_metadata, to_where
from tests.conftest import SAMPLE, index_records
from tests.index.helpers import index_of, passing_both_ways, unit_vectors, write
from tests.index.test_filter_crosscheck import EDGES, FILTERS
from tests.store.earlier_format import write_earlier_format


def test_records_of_the_earlier_format_read_back_with_their_fields_and_text(
    store: ChromaDecisionStore,
) -> None:
    write_earlier_format(store, SAMPLE, unit_vectors(len(SAMPLE), 8))
    rows = store.get(documents=True)
    assert [row.id for row in rows] == sorted(r.id for r in SAMPLE)
    by_id = {r.id: r for r in SAMPLE}
    for row in rows:
        assert row.updated_at == 1
        assert row.decision.model_dump() == by_id[row.id].model_dump()
        assert row.document == by_id[row.id].embedding_text()


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Half the records in the earlier format, half written now, and the index of them."""
    store = ChromaDecisionStore(
        data_dir=tmp_path_factory.mktemp("chroma"), collection="mixed", embedding_model="t"
    )
    records = SAMPLE + EDGES
    write_earlier_format(store, records[::2], unit_vectors(len(records[::2]), 8))
    write(store, records[1::2])
    yield store, index_of(store)
    store.close()


@pytest.mark.parametrize("filters", FILTERS, ids=[str(f) for f in FILTERS])
def test_mask_and_chroma_where_agree_on_a_store_of_both_formats(
    mixed: Any, filters: dict[str, Any] | None
) -> None:
    store, index = mixed
    assert passing_both_ways(store, index, filters) or filters is not None


def test_reindexing_an_earlier_format_store_skips_unchanged_and_rewrites_changed_records(
    store: ChromaDecisionStore, embedder: Embedder
) -> None:
    texts = [r.embedding_text() for r in SAMPLE]
    write_earlier_format(store, SAMPLE, np.asarray(embedder.embed_documents(texts)))
    summary = index_records(store, embedder, SAMPLE)
    assert (summary.new, summary.updated, summary.unchanged) == (0, 0, len(SAMPLE))

    old = SAMPLE[0]
    assert old.category is not None and old.tags
    changed = old.model_copy(update={"title": "Renamed", "category": None, "tags": ["moved"]})
    summary = index_records(store, embedder, [changed, *SAMPLE[1:]])
    assert (summary.updated, summary.unchanged) == (1, len(SAMPLE) - 1)

    (row,) = store.get(ids=[old.id], documents=True)
    assert (row.decision.title, row.decision.category, row.decision.tags) == (
        "Renamed",
        None,
        ["moved"],
    )
    assert row.document == changed.embedding_text()
    # A filtered key the record lost is gone, so no Chroma `where` sees the old value; the
    # earlier format's other keys may stay behind, never read (the JSON wins).
    where = to_where(QueryFilters.model_validate({"category": old.category}))
    assert old.id not in {r.id for r in store.get(where=where, metadata=False)}
    raw = store._get_collection(create=False).get(ids=[old.id], include=["metadatas"])
    assert "category" not in raw["metadatas"][0]
    assert set(to_metadata(changed)) < set(raw["metadatas"][0])
