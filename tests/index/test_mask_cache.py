"""The filter cache: a repeated filter reuses its mask until the next write, never after."""

from __future__ import annotations

import numpy as np
import pytest

from a2a.index import IndexedRecord, SearchIndex
from a2a.index.mask_cache import MASKS_KEPT, MaskCache
from a2a.query.params import QueryFilters
from a2a.store.stored import StoredDecision


def _record(record_id: str, category: str, confidence: float) -> IndexedRecord:
    decision = StoredDecision(record_id, category=category, confidence=confidence)
    return IndexedRecord(record_id, decision, [1.0, 0.0], record_id)


def _passing(index: SearchIndex, filters: QueryFilters | None) -> list[str]:
    with index.reading():
        return [index.id_of(int(r)) for r in np.flatnonzero(index.mask(filters))]


SECURITY = QueryFilters.model_validate({"category": "security", "minConfidence": 0.5})


def test_a_repeated_filter_gets_the_same_read_only_mask() -> None:
    index = SearchIndex()
    index.upsert([_record("a", "security", 0.9), _record("b", "security", 0.1)])
    with index.reading():
        first = index.mask(SECURITY)
        again = index.mask(
            QueryFilters.model_validate({"minConfidence": 0.5, "category": "security"})
        )
        assert again is first
        assert index.mask(None) is not first
    assert first.tolist() == [True, False]
    with pytest.raises(ValueError, match="read-only"):
        first[1] = True


def test_every_write_is_seen_by_the_next_mask() -> None:
    index = SearchIndex()
    index.upsert([_record("a", "security", 0.9)])
    assert _passing(index, SECURITY) == ["a"]
    index.upsert([_record("b", "security", 0.7)])
    assert _passing(index, SECURITY) == ["a", "b"]
    index.upsert([_record("a", "security", 0.2)])  # an update moves "a" out of the filter
    assert _passing(index, SECURITY) == ["b"]
    index.remove(["b"])
    assert _passing(index, SECURITY) == []
    index.clear()
    index.upsert([_record("c", "security", 0.6)])
    assert _passing(index, SECURITY) == ["c"]


def test_the_least_recently_used_mask_is_evicted_past_the_bound() -> None:
    cache, built = MaskCache(kept=2), []

    def build(value: bool) -> np.ndarray:
        built.append(value)
        return np.array([value])

    low = QueryFilters.model_validate({"minConfidence": 0.1})
    mid = QueryFilters.model_validate({"minConfidence": 0.2})
    high = QueryFilters.model_validate({"minConfidence": 0.3})
    cache.get(1, low, lambda: build(True))
    cache.get(1, mid, lambda: build(False))
    cache.get(1, low, lambda: build(True))  # a hit: `low` is now the most recent
    cache.get(1, high, lambda: build(True))  # evicts `mid`
    cache.get(1, low, lambda: build(True))
    cache.get(1, mid, lambda: build(False))
    assert built == [True, False, True, False]
    cache.get(2, low, lambda: build(True))  # a new generation builds again
    assert built == [True, False, True, False, True]
    assert MASKS_KEPT >= 8
