"""The filter cache: masks of recent filters, kept until the index next changes.

Agents repeat their filters (the same category, stakes and confidence floor across many
queries), as Lucene's query cache and Elasticsearch's filter cache exploit. A mask costs
~0.05-0.1 ms to build at 100k rows and ~0.3-0.9 ms at 1M (bench/scale_bench.py); a hit
costs one dict lookup.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from a2a.index.columns import BoolArray
from a2a.query.params import QueryFilters

#: Masks kept per index generation (each is one byte per row: 1 MB at 1M rows).
MASKS_KEPT = 32


def filter_key(filters: QueryFilters | None) -> Hashable:
    """A hashable key equal for equal filters (lists as tuples; None for no filter)."""
    if filters is None:
        return None
    return (
        filters.category,
        filters.min_confidence,
        filters.max_confidence,
        filters.date_after,
        filters.date_before,
        None if filters.stakes is None else tuple(filters.stakes),
        None if filters.status is None else tuple(filters.status),
    )


class MaskCache:
    """Up to `kept` masks of one index generation, least recently used evicted first.

    Masks are returned read-only (shared by every reader): copy one before changing it.
    Thread-safe. A mask built for an older generation is never returned: `get` with a new
    generation empties the cache first.
    """

    def __init__(self, kept: int = MASKS_KEPT) -> None:
        self._kept = kept
        self._generation = -1
        self._masks: OrderedDict[Hashable, BoolArray] = OrderedDict()
        self._lock = threading.Lock()

    def get(
        self, generation: int, filters: QueryFilters | None, build: Callable[[], BoolArray]
    ) -> BoolArray:
        """The mask of `filters` at `generation`, built with `build()` on a miss."""
        key = filter_key(filters)
        with self._lock:
            if generation != self._generation:
                self._masks.clear()
                self._generation = generation
            mask = self._masks.get(key)
            if mask is not None:
                self._masks.move_to_end(key)
                return mask
        mask = build()
        mask.flags.writeable = False
        with self._lock:
            if generation == self._generation:
                self._masks[key] = mask
                while len(self._masks) > self._kept:
                    self._masks.popitem(last=False)
        return mask


__all__ = ["MASKS_KEPT", "MaskCache", "filter_key"]
