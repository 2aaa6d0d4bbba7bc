"""top_k against the definition it implements: best rounded value first, ties by id."""

from __future__ import annotations

import numpy as np
import pytest

from a2a.index.topk import SORT_AT_MOST, top_k


def _by_definition(
    values: np.ndarray, rows: np.ndarray, k: int, ids: list[str], descending: bool
) -> list[tuple[int, float]]:
    sign = -1.0 if descending else 1.0
    keyed = sorted(
        (sign * round(float(v), 6), ids[int(r)], int(r)) for v, r in zip(values, rows, strict=True)
    )
    return [(row, sign * key + 0.0) for key, _, row in keyed[:k]]


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize(
    "count", [1, 9, 10, 11, SORT_AT_MOST - 1, SORT_AT_MOST, SORT_AT_MOST + 1, 41, 400]
)
def test_both_paths_give_the_best_rounded_values_ties_by_id(count: int, descending: bool) -> None:
    """Up to SORT_AT_MOST values one Python sort orders them; past it a partition cuts them
    first. Values drawn from 7 levels (a tie at every rank), ids in an order unrelated to
    the rows, so a tie broken by row rather than by id would show."""
    rng = np.random.default_rng(count)
    ids = [f"id-{(r * 7919) % 1000:04d}" for r in range(1000)]
    rows = np.sort(rng.choice(1000, count, replace=False)).astype(np.int64)
    values = rng.integers(0, 7, count) / 7 + rng.choice([0.0, 3e-7], count)
    for k in (1, 3, 10):
        got = top_k(values, rows, k, ids, descending=descending)
        assert got == _by_definition(values, rows, k, ids, descending)
        assert len(got) == min(k, count)
