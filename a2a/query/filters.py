"""Query filters -> one Chroma `where` clause. Pure: tested by tables."""

from __future__ import annotations

import math
from typing import Any

from a2a.query.params import QueryFilters


def to_where(filters: QueryFilters | None) -> dict[str, Any] | None:
    """The Chroma `where` for `filters`, or None when nothing filters.

    Chroma wants exactly one operator per dict and two or more items under `$and`, so a
    single condition is returned bare. Dates compare as integer epoch seconds
    (`date_epoch`): the lower bound is rounded up and the upper bound down, which keeps
    both inclusive for records stored to the second.
    """
    if filters is None:
        return None
    conditions: list[dict[str, Any]] = []
    if filters.category is not None:
        conditions.append({"category": {"$eq": filters.category}})
    if filters.min_confidence is not None:
        conditions.append({"confidence": {"$gte": float(filters.min_confidence)}})
    if filters.max_confidence is not None:
        conditions.append({"confidence": {"$lte": float(filters.max_confidence)}})
    if (after := filters.after) is not None:
        conditions.append({"date_epoch": {"$gte": math.ceil(after.timestamp())}})
    if (before := filters.before) is not None:
        conditions.append({"date_epoch": {"$lte": math.floor(before.timestamp())}})
    if filters.stakes is not None:
        conditions.append({"stakes": {"$in": sorted(set(filters.stakes))}})
    if filters.status is not None:
        conditions.append({"status": {"$in": sorted(set(filters.status))}})
    if not conditions:
        return None
    return conditions[0] if len(conditions) == 1 else {"$and": conditions}
