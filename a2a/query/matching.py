"""When a result is a match: the broad-match threshold, the words shown for it, and the
note for a category filter that names no stored category. One source for the CLI, the
precedents block and the console (served to it as `/console/matching.json`)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Final

#: Cosine distance past which the best hit is likely noise, for the default model
#: (all-minilm-l6-v2-int8). Measured by `cstp eval ... --off-topic bench/off_topic_queries.txt`:
#: the best hits of the answered development queries lie at 0.20-0.63, those of 30
#: off-topic queries at 0.73-0.88; 0.67 lies in the gap (docs/evaluation.md, "No false
#: confidence"). Another model needs its own measurement.
BROAD_MATCH_DISTANCE: Final = 0.67
NO_MATCH: Final = (
    "No relevant precedents found. This appears to be a first-time decision in this problem space."
)
BROAD_MATCH: Final = "Broad match — results may be tangential"
#: Most known categories a category note suggests.
SUGGESTED_CATEGORIES: Final = 5


def suggest_categories(wanted: str, known: Sequence[str]) -> list[str]:
    """Up to SUGGESTED_CATEGORIES of `known` closest to `wanted`: the case-insensitive equal
    ones first, then difflib's close matches (ratio >= 0.6), then the rest by name."""
    folded = wanted.casefold()
    equal = sorted(k for k in known if k.casefold() == folded)
    by_lower = {k.casefold(): k for k in sorted(known)}
    close = [by_lower[c] for c in difflib.get_close_matches(folded, list(by_lower), n=len(known))]
    rest = sorted(known)
    ordered = list(dict.fromkeys([*equal, *close, *rest]))
    return ordered[:SUGGESTED_CATEGORIES]


def category_note(wanted: str, known: Sequence[str]) -> str:
    """The `note` of a queryDecisions result whose `filters.category` is none of the
    stored categories `known` (the match is exact and case-sensitive, CONTRACT.md)."""
    if not known:
        return f'No stored decision has category "{wanted}": the store has no categories yet.'
    suggested = ", ".join(f'"{k}"' for k in suggest_categories(wanted, known))
    return (
        f'No stored decision has category "{wanted}" (categories match exactly, case'
        f" included). Known categories include: {suggested}."
    )
