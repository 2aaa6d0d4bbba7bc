"""Recency: queryDecisions' order by similarity x half-life decay (CONTRACT.md, Lifecycle).

A pure function over a query's hits, so it is tested by tables (tests/query/test_recency.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from a2a.index import SearchIndex
from a2a.query.results import Hits

T = TypeVar("T")

DAY_SECONDS = 86_400.0
#: Position of the RFC 3339 date in a hit's `shown` tuple (id, then SUMMARY_FIELDS).
_DATE = 7


def recency_score(distance: float, age_days: float, half_life_days: float) -> float:
    """`(1 - distance / 2) * 0.5 ** (age_days / half_life_days)`: similarity in [0, 1]
    halved every `half_life_days` of age (a date in the future counts as age 0)."""
    decay: float = 0.5 ** (max(age_days, 0.0) / half_life_days)
    return (1 - distance / 2) * decay


def by_recency(hits: Hits, now_epoch: float, half_life_days: float, limit: int) -> Hits:
    """The first `limit` of `hits` by recency score, descending; undated hits last (by
    distance); ties by distance, then id. Each hit keeps its raw cosine distance (and its
    score and explanation, when it has them)."""

    def key(n: int) -> tuple[bool, float, float]:
        shown, distance = hits.shown[n], hits.distances[n]
        # Recency ranks by distance: never asked without the query's vector
        # (a2a.query.service.QueryService.vector_optional).
        assert distance is not None
        return recency_key(shown[_DATE], distance, now_epoch, half_life_days)

    order = sorted(range(len(hits.shown)), key=lambda n: (*key(n), hits.shown[n][0]))[:limit]
    return Hits(
        shown=[hits.shown[n] for n in order],
        distances=[hits.distances[n] for n in order],
        reasons=_pick(hits.reasons, order),
        scores=_pick(hits.scores, order),
        explains=_pick(hits.explains, order),
    )


def recency_key(
    date: str | None, distance: float, now_epoch: float, half_life_days: float
) -> tuple[bool, float, float]:
    """The order of recencyHalfLifeDays for a hit dated `date` (RFC 3339, None: undated) at
    cosine `distance`: dated hits first, by recency score descending, then by distance."""
    if date is None:
        return (True, 0.0, distance)
    age = (now_epoch - datetime.fromisoformat(date).timestamp()) / DAY_SECONDS
    return (False, -recency_score(distance, age, half_life_days), distance)


def recent_candidates(
    index: SearchIndex,
    vector: npt.NDArray[np.float32],
    rows: npt.NDArray[np.int64],
    now_epoch: float,
    half_life_days: float,
    limit: int,
) -> npt.NDArray[np.int64]:
    """The rows (ascending) among `rows` that can be in the first `limit` by recency score:
    the best `4 * limit + 16` by the score, computed over every row in numpy (undated rows
    ranked after every dated one, by distance); `by_recency` orders them exactly. Call under
    the index's read lock."""
    keep = min(len(rows), limit * 4 + 16)
    if keep == len(rows):
        return rows
    distance = np.asarray(index.distances(vector, rows.tolist()), dtype=np.float64)
    dates = index.columns.date_epoch[rows]
    age = np.maximum((now_epoch - np.nan_to_num(dates)) / DAY_SECONDS, 0.0)
    score = (1 - distance / 2) * 0.5 ** (age / half_life_days)
    # Scores are in [0, 1]; an undated row is below all of them, the closer the higher.
    score = np.where(np.isnan(dates), -1.0 - distance, score)
    best = np.argpartition(-score, keep - 1)[:keep]
    return np.sort(rows[best])


def _pick(values: Sequence[T] | None, order: list[int]) -> list[T] | None:
    return None if values is None else [values[n] for n in order]
