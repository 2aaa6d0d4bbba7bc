"""Typo tolerance for keyword queries: an unknown query term -> the nearest indexed term.

Pure functions over a term -> document-frequency mapping; a2a.index.bm25 applies them to
its own vocabulary. Only terms absent from the vocabulary are corrected, so a query whose
terms are all indexed scores exactly as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

#: Shortest term corrected (shorter terms are too often other words one edit away).
MIN_LENGTH: Final = 4
#: Terms of at least this length may be two edits away; shorter ones one.
TWO_EDITS_FROM: Final = 6


def max_edits(term: str) -> int:
    """Edits allowed for `term`: 0 below MIN_LENGTH, 1 below TWO_EDITS_FROM, else 2."""
    if len(term) < MIN_LENGTH:
        return 0
    return 1 if len(term) < TWO_EDITS_FROM else 2


def edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of `a` and `b` (insert, delete, substitute: 1 each), or
    `limit + 1` as soon as it is known to exceed `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other))
            )
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def nearest(term: str, frequencies: Mapping[str, int]) -> str | None:
    """The vocabulary term closest to `term` within `max_edits(term)` that starts with the
    same letter (typos rarely hit the first one), or None. Ties: the more frequent term,
    then the alphabetically first. A scan of the vocabulary: ~20-25 ms per 50k terms."""
    limit = max_edits(term)
    if limit == 0:
        return None
    best: tuple[int, int, str] | None = None
    for word, frequency in frequencies.items():
        if word[:1] != term[:1] or abs(len(word) - len(term)) > limit:
            continue
        distance = edit_distance(term, word, limit)
        if distance <= limit:
            key = (distance, -frequency, word)
            if best is None or key < best:
                best = key
    return best[2] if best else None
