"""When a result is a match: the broad-match line of each model and the one rule over it,
the words shown for it, and the note for a category filter that names no stored category.

The service sets `broadMatch` on queryDecisions and findSimilarDecisions results by
`is_broad` (a2a.app.steps); `cstp query`, the precedents block and the console show the
words from that field, never a rule of their own (CONTRACT.md, "broadMatch").
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

#: Cosine distance past which the best hit is likely noise, per bundled model, measured by
#: `cstp eval ../shared/data/adr ../shared/data/queries-dev.jsonl --off-topic
#: bench/off_topic_queries.txt --model NAME` (docs/evaluation.md, "No false confidence"):
#: - all-minilm-l6-v2-int8: answered best hits 0.195-0.625, 30 off-topic queries'
#:   0.727-0.883; 0.67 lies in the gap;
#: - wordllama-l2-supercat-256: answered 0.205-0.708, off-topic 0.577-0.885 (they
#:   overlap); 0.65 has the best Youden's J (98% of answered within, 3% of off-topic).
#: Chroma's own ONNX model downloads its weights on first use, so it is not measured here:
#: CSTP_BROAD_MATCH_DISTANCE sets its line, as any other model's.
MEASURED_LINES: Final[Mapping[str, float]] = {
    "all-minilm-l6-v2-int8": 0.67,
    "wordllama-l2-supercat-256": 0.65,
}
#: The default model's line (the precedents block's default for a caller's own lists).
BROAD_MATCH_DISTANCE: Final = MEASURED_LINES["all-minilm-l6-v2-int8"]
NO_MATCH: Final = (
    "No relevant precedents found. This appears to be a first-time decision in this problem space."
)
BROAD_MATCH: Final = "Broad match — results may be tangential"


def broad_match_line(model: str, configured: float | None = None) -> float | None:
    """The cosine distance past which `model`'s result lists are broad matches:
    `configured` (CSTP_BROAD_MATCH_DISTANCE) when set, else the model's measured line,
    else None (no line: no list is called broad)."""
    return configured if configured is not None else MEASURED_LINES.get(model)


def is_broad(distances: Iterable[float | None], line: float | None) -> bool:
    """The one rule: True when some result carries a distance and none lies within `line`
    (the closest is farther). The closest, not the first: in keyword and hybrid modes the
    first by score may be farther than another result. No line, no results, or no result
    with a distance (findSimilarDecisions' are structural): False, nothing to judge by."""
    known = [d for d in distances if d is not None]
    return line is not None and bool(known) and min(known) > line


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
