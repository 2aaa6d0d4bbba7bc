"""BM25Index alone: the top-k cut, the two scoring paths, repeated terms, compaction order."""

from __future__ import annotations

import numpy as np
import pytest

from a2a.index.bm25 import BM25Index
from a2a.index.topk import top_k

WORDS = ["kafka", "broker", "postgres", "queue", "cache", "shard", "tenant", "index"]
SIZE = 4000


def _documents(seed: int = 3) -> list[list[str]]:
    # Few words and short documents, so many rows score exactly alike (ties at the cut).
    rng = np.random.default_rng(seed)
    return [list(rng.choice(WORDS, size=int(rng.integers(0, 5)))) for _ in range(SIZE)]


@pytest.fixture(scope="module")
def bm25() -> BM25Index:
    index = BM25Index()
    index.add(_documents())
    return index


def _mask(which: str) -> np.ndarray:
    rng = np.random.default_rng(11)
    fraction = {"all": 1.0, "half": 0.5, "tenth": 0.1, "tiny": 0.005, "empty": 0.0}[which]
    return rng.random(SIZE) < fraction


IDS = [f"d{i:05d}" for i in range(SIZE)]


@pytest.mark.parametrize("k", [1, 10, 5000], ids=["k1", "k10", "k-beyond-matches"])
@pytest.mark.parametrize("which", ["all", "half", "tenth", "tiny", "empty"])
def test_best_keeps_every_row_top_k_would_pick_from_all_scores(
    bm25: BM25Index, which: str, k: int
) -> None:
    mask = _mask(which)
    alive = np.ones(SIZE, dtype=bool)
    query = ["kafka", "broker", "kafka"]
    rows, scores = bm25.scores(query, mask, alive, generation=1)
    cut_rows, cut_scores = bm25.best(query, mask, alive, k, generation=1)
    assert set(cut_rows.tolist()) <= set(rows.tolist())
    assert np.all(np.diff(cut_rows) > 0)
    assert top_k(cut_scores, cut_rows, k, IDS, descending=True) == top_k(
        scores, rows, k, IDS, descending=True
    )
    if which != "empty":
        assert len(top_k(scores, rows, k, IDS, descending=True)) == min(k, len(rows)) > 0


def test_looked_up_scores_of_few_rows_equal_the_dense_scores_of_every_row(bm25: BM25Index) -> None:
    alive = np.ones(SIZE, dtype=bool)
    narrow = _mask("tiny")  # few enough passing rows to take the binary-search path
    query = ["kafka", "queue", "tenant"]
    all_rows, all_scores = bm25.scores(query, alive, alive)
    rows, scores = bm25.scores(query, narrow, alive)
    expected = {r: s for r, s in zip(all_rows.tolist(), all_scores.tolist(), strict=True)}
    assert len(rows) > 0
    assert rows.tolist() == [r for r in all_rows.tolist() if narrow[r]]
    assert scores.tolist() == pytest.approx([expected[r] for r in rows.tolist()], abs=1e-12)


def test_a_repeated_query_term_counts_twice(bm25: BM25Index) -> None:
    alive = np.ones(SIZE, dtype=bool)
    once_rows, once = bm25.scores(["shard"], alive, alive)
    twice_rows, twice = bm25.scores(["shard", "shard"], alive, alive)
    assert twice_rows.tolist() == once_rows.tolist()
    assert twice == pytest.approx(2 * once, abs=1e-12)


def test_best_with_k_below_one_or_no_terms_is_empty(bm25: BM25Index) -> None:
    alive = np.ones(SIZE, dtype=bool)
    assert len(bm25.best(["kafka"], alive, alive, 0)[0]) == 0
    assert len(bm25.best([], alive, alive, 10)[0]) == 0
    assert len(bm25.best(["zeppelin"], alive, alive, 10)[0]) == 0


def test_a_new_generation_recomputes_statistics_for_tombstones() -> None:
    index = BM25Index()
    index.add([["kafka"], ["kafka", "queue"], ["postgres"]])
    alive = np.ones(3, dtype=bool)
    _, before = index.scores(["kafka"], alive, alive, generation=1)
    alive[2] = False  # N drops from 3 to 2, avgdl rises from 4/3 to 3/2
    _, stale = index.scores(["kafka"], alive, alive, generation=1)
    _, fresh = index.scores(["kafka"], alive, alive, generation=2)
    _, uncached = index.scores(["kafka"], alive, alive)
    assert stale.tolist() == before.tolist()  # same generation: the cached statistics
    assert fresh.tolist() == uncached.tolist() != before.tolist()


def test_take_refuses_rows_out_of_order(bm25: BM25Index) -> None:
    with pytest.raises(ValueError):
        bm25.take(np.asarray([5, 3, 9], dtype=np.int64))
    taken = bm25.take(np.asarray([3, 5, 9], dtype=np.int64))
    assert len(taken) == 3


def test_best_bounded_by_the_rarest_term_agrees_with_all_scores_on_random_queries() -> None:
    # Varied term rarity and lengths: the bound comes from different terms, and rows tied
    # with it (or within rounding of it) must survive the cut.
    rng = np.random.default_rng(5)
    vocabulary = [f"t{i}" for i in range(40)]
    weights = 1.0 / np.arange(1, 41)
    documents = [
        list(rng.choice(vocabulary, size=int(rng.integers(0, 9)), p=weights / weights.sum()))
        for _ in range(SIZE)
    ]
    index = BM25Index()
    index.add(documents)
    alive = rng.random(SIZE) < 0.9
    checked = 0
    for _ in range(200):
        query = list(rng.choice(vocabulary, size=int(rng.integers(1, 5))))
        mask = alive & (rng.random(SIZE) < rng.choice([1.0, 0.5, 0.1, 0.02]))
        k = int(rng.choice([1, 3, 10, 50]))
        rows, scores = index.scores(query, mask, alive, generation=2)
        cut_rows, cut_scores = index.best(query, mask, alive, k, generation=2)
        expected = top_k(scores, rows, k, IDS, descending=True)
        assert top_k(cut_scores, cut_rows, k, IDS, descending=True) == expected
        assert np.all(np.diff(cut_rows) > 0)
        checked += len(expected) > 0
    assert checked > 150


def test_values_a_rounding_unit_apart_that_round_alike_tie_by_id_past_the_cut() -> None:
    """0.3554115 and 0.3554125 both round to 0.355412 (half to even) yet lie a little more
    than 1e-6 apart in float64: the cut before rounding must keep both, so the tie goes
    to the smaller id, as it does over every value."""
    values = np.asarray([0.3554125, 0.3554115, 0.1, 0.2, 0.05, 0.01])
    rows = np.arange(len(values), dtype=np.int64)
    ids = ["z", "a", "c", "d", "e", "f"]
    assert top_k(values, rows, 1, ids, descending=True) == [(1, 0.355412)]
    assert top_k(1 - values, rows, 1, ids, descending=False) == [(1, 0.644588)]


def test_work_counts_postings_rows_and_weights_not_yet_computed() -> None:
    index = BM25Index()
    index.add([["kafka"], ["kafka", "queue"], ["postgres"], []])
    alive = np.ones(4, dtype=bool)
    assert index.work(["kafka"], generation=1) is None  # no statistics for it yet
    index.scores(["queue"], alive, alive, generation=1)
    # 4 rows and kafka's 2 postings at 3 each, kafka's 2 weights at 11 each (not yet queried)
    assert index.work(["kafka", "kafka", "zeppelin"], generation=1) == 3 * 4 + 2 * (3 + 11)
    index.scores(["kafka"], alive, alive, generation=1)
    assert index.work(["kafka"], generation=1) == 3 * 4 + 2 * 3
    assert index.work(["kafka"], generation=2) is None  # a write since
