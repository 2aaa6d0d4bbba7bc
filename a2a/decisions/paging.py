"""Date order and keyset paging for cstp.listDecisions, as a pure function over columns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

Order = Literal["dateDesc", "dateAsc"]
Rows = npt.NDArray[np.int64]
#: Ids of given rows, in the same order; an array of ids is looked up by position.
IdsOf = Callable[[Rows], npt.NDArray[np.str_]]


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

    rows: Rows
    next: Position | None


def page(
    date_epoch: npt.NDArray[np.float64],
    ids: npt.NDArray[np.str_] | IdsOf,
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

    `ids` is the id column, or a function giving the ids of some rows: ids are read only
    for rows that tie on date with `after` or with the page's last row, so a page of a
    100k-row index reads a few ids, not 100k.
    """

    def ids_of(wanted: Rows) -> npt.NDArray[np.str_]:
        return page_ids(ids, wanted)

    rows = np.flatnonzero(mask)
    key = _sort_key(date_epoch[rows], order)
    if after is not None:
        rows, key = _following(rows, key, ids_of, order, after)
    if len(rows) > limit + 1:
        # Only rows whose key is at most the (limit+1)-th smallest can be on this page.
        bound = np.partition(key, limit)[limit]
        rows, key = rows[key <= bound], key[key <= bound]
    ranked = rows[np.lexsort((ids_of(rows), key))]
    chosen = ranked[:limit]
    if len(ranked) <= limit:
        return Page(rows=chosen, next=None)
    last = int(chosen[-1])
    last_date = float(date_epoch[last])
    last_id = str(ids_of(np.array([last], dtype=np.int64))[0])
    return Page(
        rows=chosen, next=Position(date=None if np.isnan(last_date) else last_date, id=last_id)
    )


def _sort_key(dates: npt.NDArray[np.float64], order: Order) -> npt.NDArray[np.float64]:
    """Ascending key of the date order: the date (negated for dateDesc), +inf when none."""
    key = -dates if order == "dateDesc" else dates.copy()
    key[np.isnan(key)] = np.inf
    return key


def _following(
    rows: Rows, key: npt.NDArray[np.float64], ids_of: IdsOf, order: Order, after: Position
) -> tuple[Rows, npt.NDArray[np.float64]]:
    """The rows (and keys) that come after `after`: a greater key, or the same key and a
    greater id."""
    cut = _sort_key(np.array([np.nan if after.date is None else after.date]), order)[0]
    tie = key == cut
    follows = key > cut
    follows[tie] = ids_of(rows[tie]) > after.id
    return rows[follows], key[follows]


def page_ids(ids: npt.NDArray[np.str_] | IdsOf, rows: Rows) -> npt.NDArray[np.str_]:
    """The ids of `rows`, from an id column or an IdsOf function."""
    return ids(rows) if callable(ids) else ids[rows]
