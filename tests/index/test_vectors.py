"""VectorMatrix.scores: both plans and every block boundary give each passing row's product."""

from __future__ import annotations

import numpy as np
import pytest

from a2a.index.vectors import GATHER_BELOW, GATHER_BLOCK, VectorMatrix
from tests.index.helpers import unit_vectors


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize(
    "passing",
    [1, GATHER_BLOCK - 1, GATHER_BLOCK, GATHER_BLOCK + 1, 2 * GATHER_BLOCK + 7, 9_000],
)
def test_each_passing_row_gets_its_own_inner_product(dtype: str, passing: int) -> None:
    """Gathered in blocks of GATHER_BLOCK rows (below GATHER_BELOW of the rows passing) or
    scored all at once (9,000 of 20,000): one product per passing row, the row's own, to
    the stored dtype's precision."""
    size, dim = 20_000, 32
    vectors = unit_vectors(size, dim, seed=2)
    matrix = VectorMatrix(dtype=dtype)  # type: ignore[arg-type]
    matrix.append(vectors, np.arange(size, dtype=np.int64))
    rng = np.random.default_rng(passing)
    chosen = np.sort(rng.choice(size, passing, replace=False)).astype(np.int64)
    mask = np.zeros(size, dtype=bool)
    mask[chosen] = True
    query = unit_vectors(1, dim, seed=3)[0].astype(np.float32)
    stored = vectors.astype(dtype).astype(np.float64)
    expected = stored[chosen] @ query.astype(np.float64)
    assert (passing < GATHER_BELOW * size) == (passing != 9_000)
    for given in (None, chosen):
        rows, scores = matrix.scores(query, mask, given)
        order = np.argsort(rows)
        assert rows[order].tolist() == chosen.tolist()
        assert scores[order] == pytest.approx(expected, abs=1e-5)
