"""Recency order: similarity x half-life decay, undated last, ties by distance then id."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from a2a.query.recency import by_recency, recency_score
from a2a.query.results import Hits

NOW = datetime(2026, 6, 30, tzinfo=UTC).timestamp()


def hit(record_id: str, date: str | None) -> tuple[object, ...]:
    return (record_id, "t", None, None, None, None, None, date, None, None)


@pytest.mark.parametrize(
    ("distance", "age", "half_life", "expected"),
    [(0.0, 0.0, 30, 1.0), (0.4, 30.0, 30, 0.4), (1.0, 60.0, 30, 0.125), (0.2, -5.0, 7, 0.9)],
    ids=["fresh-identical", "one-half-life", "two-half-lives", "future-is-age-0"],
)
def test_recency_score_halves_similarity_every_half_life(
    distance: float, age: float, half_life: float, expected: float
) -> None:
    assert recency_score(distance, age, half_life) == pytest.approx(expected)


def test_hits_are_reordered_undated_last_with_raw_distances_scores_and_a_limit() -> None:
    hits = Hits(
        shown=[
            hit("old-close", "2024-06-30T00:00:00Z"),
            hit("undated", None),
            hit("new-far", "2026-06-29T00:00:00Z"),
            hit("b-tie", "2026-05-31T00:00:00Z"),
            hit("a-tie", "2026-05-31T00:00:00Z"),
        ],
        distances=[0.1, 0.0, 0.9, 0.5, 0.5],
        scores=[5.0, 4.0, 3.0, 2.0, 1.0],
    )
    ordered = by_recency(hits, NOW, 30, limit=4)
    assert [s[0] for s in ordered.shown] == ["new-far", "a-tie", "b-tie", "old-close"]
    assert ordered.distances == [0.9, 0.5, 0.5, 0.1]
    assert ordered.scores == [3.0, 1.0, 2.0, 5.0]
    everything = by_recency(hits, NOW, 30, limit=10)
    assert everything.shown[-1][0] == "undated" and everything.reasons is None


def test_candidates_hold_the_exact_top_of_every_passing_row() -> None:
    import numpy as np

    from a2a.index import IndexedRecord, SearchIndex
    from a2a.query.recency import recent_candidates
    from a2a.records import DecisionRecord

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = SearchIndex()
    records = []
    for n in range(300):
        days = None if n % 7 == 0 else int(rng.integers(0, 800))
        date = None if days is None else datetime.fromtimestamp(NOW - days * 86400, UTC)
        stored = DecisionRecord(id=f"r{n:03d}", title="t", date=date)
        records.append(IndexedRecord(stored.id, stored, vectors[n], "t"))
    index.upsert(records)
    query = vectors[5]
    rows = np.arange(300, dtype=np.int64)
    with index.reading():
        chosen = recent_candidates(index, query, rows, NOW, 30, limit=5)
        everything = Hits(index.shown(rows.tolist()), index.distances(query, rows.tolist()))
        subset = Hits(index.shown(chosen.tolist()), index.distances(query, chosen.tolist()))
    assert len(chosen) == 36
    best = [s[0] for s in by_recency(everything, NOW, 30, 5).shown]
    assert [s[0] for s in by_recency(subset, NOW, 30, 5).shown] == best
