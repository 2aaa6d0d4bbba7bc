"""The filter cache: a repeated filter reuses its mask until the next write, never after."""

from __future__ import annotations

import numpy as np
import pytest

from a2a.index import IndexedRecord, SearchIndex
from a2a.index.mask_cache import MASKS_KEPT, MaskCache
from a2a.records import DecisionRecord
from a2a.records.filters import QueryFilters


def _record(record_id: str, category: str, confidence: float) -> IndexedRecord:
    decision = DecisionRecord(
        id=record_id, title=record_id, category=category, confidence=confidence
    )
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


def test_a_narrow_selection_keeps_its_rows_and_searches_as_the_mask_alone() -> None:
    vectors = np.random.default_rng(4).standard_normal((400, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = SearchIndex()
    index.upsert(
        [
            IndexedRecord(
                f"r{i:03d}",
                DecisionRecord(
                    id=f"r{i:03d}", title=f"r{i:03d}", category="rare" if i % 40 == 0 else "common"
                ),
                vectors[i],
                "",
            )
            for i in range(400)
        ]
    )
    rare = QueryFilters.model_validate({"category": "rare"})
    with index.reading():
        mask, rows = index.selection(rare)
        assert rows is not None and rows.tolist() == list(range(0, 400, 40))
        assert not rows.flags.writeable
        assert index.selection(None)[1] is None  # every row passes: the mask alone
        query = vectors[7]
        assert index.semantic(query, mask, 5, rows) == index.semantic(query, mask, 5)
        assert [m.id for m in index.semantic(query, mask, 10, rows)] == sorted(
            (f"r{r:03d}" for r in range(0, 400, 40)),
            key=lambda i: (round(1 - float(vectors[int(i[1:])] @ query), 6), i),
        )


def test_keyword_search_given_the_passing_rows_answers_as_with_the_mask_alone() -> None:
    """The passing rows a selection keeps spare BM25 two passes over the mask; the answer
    is the same: rare rows only, by term frequency, the tie at the cut taken by id."""
    vector = np.ones(4, dtype=np.float32) / 2
    index = SearchIndex()
    index.upsert(
        [
            IndexedRecord(
                f"r{i:03d}",
                DecisionRecord(
                    id=f"r{i:03d}", title=f"r{i:03d}", category="rare" if i % 40 == 0 else "common"
                ),
                vector,
                " ".join(["alpha"] * (i % 7 + 1) + ["beta"]),
            )
            for i in range(400)
        ]
    )
    with index.reading():
        mask, rows = index.selection(QueryFilters.model_validate({"category": "rare"}))
        assert rows is not None
        given = index.keyword("alpha", mask, 5, rows)
        alone = index.keyword("alpha", mask, 5)
    assert [(m.id, m.row, m.score) for m in given] == [(m.id, m.row, m.score) for m in alone]
    # term frequencies of the rare rows: r160 7, r040 and r320 6, r200 5, r080 and r360 4
    assert [m.id for m in given] == ["r160", "r040", "r320", "r200", "r080"]
