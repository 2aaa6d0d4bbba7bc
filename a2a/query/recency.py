"""Recency: queryDecisions' order by similarity x half-life decay (CONTRACT.md, Lifecycle).

A pure function over a query's hits, so it is tested by tables (tests/query/test_recency.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TypeVar

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

    def key(n: int) -> tuple[bool, float, float, str]:
        shown, distance = hits.shown[n], hits.distances[n]
        date = shown[_DATE]
        if date is None:
            return (True, 0.0, distance, shown[0])
        age = (now_epoch - datetime.fromisoformat(date).timestamp()) / DAY_SECONDS
        return (False, -recency_score(distance, age, half_life_days), distance, shown[0])

    order = sorted(range(len(hits.shown)), key=key)[:limit]
    return Hits(
        shown=[hits.shown[n] for n in order],
        distances=[hits.distances[n] for n in order],
        reasons=_pick(hits.reasons, order),
        scores=_pick(hits.scores, order),
        explains=_pick(hits.explains, order),
    )


def _pick(values: Sequence[T] | None, order: list[int]) -> list[T] | None:
    return None if values is None else [values[n] for n in order]
