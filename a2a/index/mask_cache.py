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

import numpy as np
import numpy.typing as npt

from a2a.index.columns import BoolArray
from a2a.records.filters import QueryFilters

#: Masks kept per index generation (each is one byte per row: 1 MB at 1M rows).
MASKS_KEPT = 32
#: The passing rows (int64) are kept beside a mask when at most this fraction of rows pass:
#: no more bytes than the mask, and they spare a narrow query two passes over every row.
ROWS_KEPT_BELOW = 1 / 8

Selection = tuple[BoolArray, "npt.NDArray[np.int64] | None"]


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
    """Up to `kept` selections of one index generation, least recently used evicted first.

    A selection is a mask and, when few rows pass (ROWS_KEPT_BELOW), its passing rows
    ascending (else None). Both are returned read-only (shared by every reader): copy one
    before changing it. Thread-safe. A selection built for an older generation is never
    returned: `get` with a new generation empties the cache first.
    """

    def __init__(self, kept: int = MASKS_KEPT) -> None:
        self._kept = kept
        self._generation = -1
        self._selections: OrderedDict[Hashable, Selection] = OrderedDict()
        self._lock = threading.Lock()

    def get(
        self, generation: int, filters: QueryFilters | None, build: Callable[[], BoolArray]
    ) -> Selection:
        """The selection of `filters` at `generation`, its mask built with `build()` on a
        miss."""
        key = filter_key(filters)
        with self._lock:
            if generation != self._generation:
                self._selections.clear()
                self._generation = generation
            found = self._selections.get(key)
            if found is not None:
                self._selections.move_to_end(key)
                return found
        mask = build()
        mask.flags.writeable = False
        rows = None
        if np.count_nonzero(mask) <= ROWS_KEPT_BELOW * len(mask):
            rows = np.flatnonzero(mask).astype(np.int64)
            rows.flags.writeable = False
        selection = (mask, rows)
        with self._lock:
            if generation == self._generation:
                self._selections[key] = selection
                while len(self._selections) > self._kept:
                    self._selections.popitem(last=False)
        return selection


__all__ = ["MASKS_KEPT", "ROWS_KEPT_BELOW", "MaskCache", "Selection", "filter_key"]
