"""Deterministic top-k selection: best values first, ties (at the shown precision) by id."""

from __future__ import annotations

import heapq
from typing import Protocol

import numpy as np
import numpy.typing as npt

#: Decimal places kept in distances and scores; values equal at this precision tie.
DECIMALS = 6
#: How far below the k-th best raw value a value can still round to a tie with it. Rounding
#: moves each by at most half a unit of the 6th place, so two values rounding alike can be a
#: whole unit apart, and float64 can put them a few ulps more than a unit apart
#: (0.3554115 and 0.3554125 both round to 0.355412): two units leave that margin.
REACH = 2 * 10.0**-DECIMALS
#: Up to this many values, one Python sort of (value, id) orders them all: cheaper than the
#: partition and its five numpy calls (13 values, typical after a scan's near-best cut:
#: ~6 us against ~16).
SORT_AT_MOST = 32


class Ids(Protocol):
    """Row -> record id: a list of ids, or the index's id column."""

    def __getitem__(self, row: int, /) -> str: ...


def top_k(
    values: npt.NDArray[np.floating],
    rows: npt.NDArray[np.int64],
    k: int,
    ids: Ids,
    *,
    descending: bool,
) -> list[tuple[int, float]]:
    """The `k` best `(row, value)` pairs, values rounded to DECIMALS, ties by `ids[row]`.

    `values[i]` belongs to `rows[i]`. Past SORT_AT_MOST values, uses argpartition (O(n))
    to find the k-th value, then orders only the survivors; rows tied with the k-th value
    are chosen by smallest id, so the same store and request always give the same list.
    """
    if k < 1 or len(values) == 0:
        return []
    if len(values) > 4 * k:
        # Cut to the raw k best plus everything within rounding reach of the k-th (rounding
        # moves a value by at most half a unit of the 6th place), before rounding anything.
        raw = -values if descending else values
        kth = np.partition(raw, k - 1)[k - 1]
        near = np.flatnonzero(raw <= kth + REACH)
        values, rows = values[near], rows[near]
    # The method, not np.round: its Python wrapper costs more than rounding ten values.
    keys = values.astype(np.float64, copy=False).round(DECIMALS)
    if descending:
        np.negative(keys, out=keys)
    if len(keys) > k and len(keys) > SORT_AT_MOST:
        kth = keys[np.argpartition(keys, k - 1)[k - 1]]
        better = np.flatnonzero(keys < kth)
        tied = np.flatnonzero(keys == kth)
        if len(better) + len(tied) > k:
            need = k - len(better)
            tied = np.asarray(heapq.nsmallest(need, tied.tolist(), key=lambda i: ids[int(rows[i])]))
        chosen = np.concatenate([better, tied]).astype(np.int64)
        keys, rows = keys[chosen], rows[chosen]
    chosen_rows: list[int] = rows.tolist()
    values_kept: list[float] = keys.tolist()
    sign = -1.0 if descending else 1.0
    if len(set(values_kept)) == len(values_kept):
        # No tie: the ids would never be compared (reading 40 of them costs ~20 us).
        by_value = sorted(zip(values_kept, chosen_rows, strict=True))
        return [(row, sign * key + 0.0) for key, row in by_value[:k]]
    ids_kept = [ids[r] for r in chosen_rows]
    ordered = sorted(zip(values_kept, ids_kept, chosen_rows, strict=True))
    return [(row, sign * key + 0.0) for key, _, row in ordered[:k]]
