"""Building a SearchIndex from a real store, as the service does, for the index tests."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from a2a.index import IndexedRecord, SearchIndex
from a2a.records import DecisionRecord
from a2a.records.filters import QueryFilters
from a2a.store.chroma import ChromaDecisionStore
from a2a.store.metadata import to_where

#: Dimension and categories of the graph tests' records (`graph_records`).
DIM = 32
CATEGORIES = ("architecture", "security", "process", "tooling", "data")


def unit_vectors(count: int, dim: int, seed: int = 0) -> npt.NDArray[np.float32]:
    """`count` random L2-normalised float32 vectors."""
    vectors = np.random.default_rng(seed).standard_normal((count, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def write(store: ChromaDecisionStore, records: list[DecisionRecord], dim: int = 8) -> None:
    """Upsert `records` with random vectors (the embedder is not what is under test)."""
    store.upsert(records, unit_vectors(len(records), dim))


def index_of(store: ChromaDecisionStore) -> SearchIndex:
    """A SearchIndex of every record in `store`, read page by page."""
    index = SearchIndex()
    for page in store.pages(documents=True, embeddings=True):
        assert page.documents is not None and page.embeddings is not None
        index.upsert(
            [
                IndexedRecord(r.id, r.decision, e, d, r.updated_at)
                for r, e, d in zip(page.rows(), page.embeddings, page.documents, strict=True)
            ]
        )
    return index


def passing_both_ways(
    store: ChromaDecisionStore, index: SearchIndex, filters: dict[str, Any] | None
) -> set[str]:
    """The ids `filters` (wire form; None: no filter) selects, asserted to be the same
    from Chroma's `where` and from the index's mask."""
    parsed = None if filters is None else QueryFilters.model_validate(filters)
    from_chroma = {row.id for row in store.get(where=to_where(parsed), metadata=False)}
    with index.reading():
        from_index = {index.id_of(int(row)) for row in np.flatnonzero(index.mask(parsed))}
    assert from_index == from_chroma, filters
    return from_index


def clustered(count: int, seed: int) -> npt.NDArray[np.float32]:
    """Unit vectors around 60 centres: text embeddings' structure, which graphs exploit
    (uniformly random vectors in many dimensions have none, and no graph finds their
    neighbours well)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((60, DIM)).astype(np.float32)
    vectors = centres[rng.integers(0, 60, count)] + 0.35 * rng.standard_normal((count, DIM))
    vectors = vectors.astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def graph_records(count: int, seed: int = 1, prefix: str = "r") -> list[IndexedRecord]:
    """`count` records of `clustered` vectors, ids `prefix` + 5 digits, categories and
    confidences cycling through CATEGORIES and 0.0-0.9."""
    vectors = clustered(count, seed)
    return [
        IndexedRecord(
            f"{prefix}{i:05d}",
            DecisionRecord(
                id=f"{prefix}{i:05d}",
                title=f"{prefix}{i:05d}",
                category=CATEGORIES[i % 5],
                confidence=(i % 10) / 10,
            ),
            vectors[i],
            "",
        )
        for i in range(count)
    ]
