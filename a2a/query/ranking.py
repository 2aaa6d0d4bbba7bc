"""Ordering of results: deterministic for the same store and request."""

from __future__ import annotations

from collections.abc import Iterable

from a2a.store import Hit

#: Decimal places kept in `distance`; ties at this precision are broken by id.
DISTANCE_DECIMALS = 6


def rank_by_distance(hits: Iterable[Hit], limit: int) -> list[Hit]:
    """The `limit` closest hits: distance ascending (rounded as shown), then id ascending.

    Rounding before sorting keeps the order consistent with the numbers the client sees,
    so two results that look tied are always in id order.
    """
    rounded = (
        Hit(id=h.id, metadata=h.metadata, distance=round(h.distance, DISTANCE_DECIMALS))
        for h in hits
    )
    return sorted(rounded, key=lambda h: (h.distance, h.id))[:limit]
