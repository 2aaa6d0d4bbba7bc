"""Date order and keyset paging for cstp.listDecisions, as a pure function over columns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

Order = Literal["dateDesc", "dateAsc"]


@dataclass(frozen=True, slots=True)
class Position:
    """Where a page ended: the last row's date (UTC epoch seconds, None = no date) and id."""

    date: float | None
    id: str


@dataclass(frozen=True, slots=True)
class Page:
    """Rows of one page in order (indices into the columns), and where the next one starts.

    `next` is None when nothing follows the page.
    """

    rows: npt.NDArray[np.int64]
    next: Position | None


def page(
    date_epoch: npt.NDArray[np.float64],
    ids: npt.NDArray[np.str_],
    mask: npt.NDArray[np.bool_],
    order: Order,
    limit: int,
    after: Position | None = None,
) -> Page:
    """The `limit` (>= 1) rows passing `mask` that follow `after` in `order`.

    The order is (has a date first, date descending for `dateDesc` or ascending for
    `dateAsc`, id ascending); `date_epoch` is NaN for a row without a date, so those come
    last in either order (CONTRACT.md, cstp.listDecisions). Keyset paging: rows are picked
    by comparing with `after`, never by offset, so a row added between two calls never
    makes a later page repeat or skip a row that was there before.
    """
    rows = np.flatnonzero(mask)
    dates, keys = date_epoch[rows], ids[rows]
    dated = ~np.isnan(dates)
    if after is not None:
        follows = _follows(dates, dated, keys, order, after)
        rows, dates, keys, dated = rows[follows], dates[follows], keys[follows], dated[follows]
    sort_date = np.where(dated, -dates if order == "dateDesc" else dates, 0.0)
    # lexsort's last key is the primary one.
    ranked = rows[np.lexsort((keys, sort_date, ~dated))]
    chosen = ranked[:limit]
    if len(ranked) <= limit:
        return Page(rows=chosen, next=None)
    last = int(chosen[-1])
    last_date = float(date_epoch[last])
    return Page(
        rows=chosen,
        next=Position(date=None if np.isnan(last_date) else last_date, id=str(ids[last])),
    )


def _follows(
    dates: npt.NDArray[np.float64],
    dated: npt.NDArray[np.bool_],
    keys: npt.NDArray[np.str_],
    order: Order,
    after: Position,
) -> npt.NDArray[np.bool_]:
    """True for rows that come after `after` in `order`."""
    later_id = keys > after.id
    if after.date is None:
        nulls: npt.NDArray[np.bool_] = ~dated & later_id
        return nulls
    with np.errstate(invalid="ignore"):
        beyond = dates < after.date if order == "dateDesc" else dates > after.date
        same = dates == after.date
    follows: npt.NDArray[np.bool_] = ~dated | (dated & beyond) | (same & later_id)
    return follows
