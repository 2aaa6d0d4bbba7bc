"""listDecisions order and keyset paging, as a pure function: tables and a property test."""

from __future__ import annotations

import random

import numpy as np
import pytest

from a2a.decisions.paging import Order, Position, page

NAN = float("nan")
# id -> date epoch (NaN: no date)
ROWS = {"a": 30.0, "b": 10.0, "c": 20.0, "d": NAN, "e": 20.0, "f": NAN, "g": 30.0}


def columns(rows: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    return np.array(list(rows.values())), np.array(list(rows), dtype=np.str_)


def walk(
    dates: np.ndarray, ids: np.ndarray, mask: np.ndarray, order: Order, limit: int
) -> list[str]:
    seen, after = [], None
    while True:
        result = page(dates, ids, mask, order, limit, after)
        seen += [str(ids[r]) for r in result.rows]
        if result.next is None:
            return seen
        after = result.next


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        ("dateDesc", ["a", "g", "c", "e", "b", "d", "f"]),
        ("dateAsc", ["b", "c", "e", "a", "g", "d", "f"]),
    ],
    ids=["desc-undated-last-ties-by-id", "asc-undated-last-ties-by-id"],
)
@pytest.mark.parametrize("limit", [1, 2, 3, 7, 100])
def test_pages_follow_date_order_with_undated_last(
    order: Order, expected: list[str], limit: int
) -> None:
    dates, ids = columns(ROWS)
    assert walk(dates, ids, np.ones(len(ids), bool), order, limit) == expected


def test_mask_leaves_rows_out() -> None:
    dates, ids = columns(ROWS)
    mask = np.array([i in {"a", "d", "e"} for i in ROWS])
    assert walk(dates, ids, mask, "dateDesc", 1) == ["a", "e", "d"]


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        (Position(20.0, "c"), ["e", "b", "d", "f"]),
        (Position(20.0, "e"), ["b", "d", "f"]),
        (Position(10.0, "b"), ["d", "f"]),
        (Position(None, "d"), ["f"]),
        (Position(None, "f"), []),
        (Position(25.0, "zzz"), ["c", "e", "b", "d", "f"]),
    ],
    ids=["tie-first", "tie-last", "last-dated", "undated", "end", "position-of-a-removed-row"],
)
def test_rows_after_a_position_in_date_desc(after: Position, expected: list[str]) -> None:
    dates, ids = columns(ROWS)
    result = page(dates, ids, np.ones(len(ids), bool), "dateDesc", 100, after)
    assert [str(ids[r]) for r in result.rows] == expected
    assert result.next is None


def test_next_is_the_last_row_of_a_full_page() -> None:
    dates, ids = columns(ROWS)
    result = page(dates, ids, np.ones(len(ids), bool), "dateAsc", 2)
    assert result.next == Position(20.0, "c")
    undated = page(dates, ids, np.ones(len(ids), bool), "dateAsc", 1, Position(30.0, "g"))
    assert undated.next == Position(None, "d")


def test_empty_columns_give_an_empty_last_page() -> None:
    result = page(np.array([]), np.array([], dtype=np.str_), np.array([], bool), "dateDesc", 5)
    assert len(result.rows) == 0
    assert result.next is None


@pytest.mark.parametrize("order", ["dateDesc", "dateAsc"])
@pytest.mark.parametrize("seed", range(25))
def test_rows_inserted_between_pages_never_make_a_page_repeat_or_skip_an_older_row(
    order: Order, seed: int
) -> None:
    rng = random.Random(seed)
    dates: list[float] = []
    ids: list[str] = []

    def insert(n: int) -> None:
        for _ in range(n):
            ids.append(f"id-{rng.randrange(10**6):06d}-{len(ids)}")
            dates.append(NAN if rng.random() < 0.2 else float(rng.randrange(5)))

    insert(rng.randrange(0, 40))
    before = set(ids)
    seen: list[str] = []
    after = None
    limit = rng.randrange(1, 6)
    while True:
        d, i = np.array(dates, dtype=np.float64), np.array(ids, dtype=np.str_)
        # Odd seeds give the ids as a lookup function, as the search index does.
        column = i if seed % 2 == 0 else (lambda rows, i=i: i[rows])
        result = page(d, column, np.ones(len(i), bool), order, limit, after)
        seen += [str(i[r]) for r in result.rows]
        insert(rng.randrange(0, 4))
        if result.next is None:
            break
        after = result.next
    assert len(seen) == len(set(seen)), "a row repeated"
    assert before <= set(seen), "an older row was skipped"
