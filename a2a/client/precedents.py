"""Retrieved decisions as a short "Relevant Precedents" block for an agent's prompt (seed 001)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from a2a.query import matching
from a2a.query.matching import BROAD_MATCH, BROAD_MATCH_DISTANCE, NO_MATCH
from a2a.query.results import DecisionSummary, QueryDecisionsResult

#: Most precedents in one block (seed 001, Rules: "Max 5 results").
MAX_PRECEDENTS: Final = 5
# The threshold and the words are shared with the console (a2a.query.matching).
__all__ = [
    "BROAD_MATCH",
    "BROAD_MATCH_DISTANCE",
    "MAX_PRECEDENTS",
    "NO_MATCH",
    "is_broad",
    "match_note",
    "render_precedents",
    "result_note",
    "within",
]


def _one_line(text: str | None, fallback: str) -> str:
    # Stored text is data: collapsing whitespace keeps a title from adding prompt lines.
    line = " ".join((text or "").split())
    return line or fallback


def _entry(decision: DecisionSummary) -> list[str]:
    date = decision.date[:10] if decision.date else "undated"
    category = _one_line(decision.category, "uncategorised")
    confidence = (
        "not recorded" if decision.confidence is None else f"{round(decision.confidence * 10):d}/10"
    )
    if decision.reasons is None:
        alternatives = "not requested (query with includeReasons)"
    else:
        count = decision.reasons.count("alternative")
        alternatives = f"{count} recorded" if count else "none recorded"
    source = f" (source: {_one_line(decision.source, '')})" if decision.source else ""
    return [
        f"**{_one_line(decision.id, '?')}** — {_one_line(decision.title, 'untitled')} "
        f"({category}, {date}) [project]",
        f"- **Confidence**: {confidence}",
        f"- **Alternatives rejected**: {alternatives}{source}",
        f"- **Outcome**: {_one_line(decision.outcome, 'not recorded')}",
    ]


def within(
    decisions: Sequence[DecisionSummary], max_distance: float | None
) -> list[DecisionSummary]:
    """The decisions whose cosine distance is at most `max_distance` (all when it is None).

    A decision without a distance is kept: nothing says it is far.
    """
    if max_distance is None:
        return list(decisions)
    return [d for d in decisions if d.distance is None or d.distance <= max_distance]


def is_broad(
    decisions: Sequence[DecisionSummary], broad_match_distance: float = BROAD_MATCH_DISTANCE
) -> bool:
    """True when the closest decision that carries a distance is past `broad_match_distance`:
    the service's own rule (a2a.query.matching.is_broad, which sets a result's
    `broadMatch`), for a list the caller has cut or merged itself. No decision with a
    distance: False (nothing to judge by).
    """
    return matching.is_broad((d.distance for d in decisions), broad_match_distance)


def result_note(result: QueryDecisionsResult) -> str | None:
    """The line above a queryDecisions result as the service judged it (`cstp query` and
    the console print the same): its `note` (a category no stored decision has), else
    `NO_MATCH` when it holds no decision, `BROAD_MATCH` when it is `broadMatch`, else None.
    """
    if result.note:
        return result.note
    if not result.decisions:
        return NO_MATCH
    return BROAD_MATCH if result.broad_match else None


def match_note(
    decisions: Sequence[DecisionSummary],
    *,
    max_distance: float | None = None,
    broad_match_distance: float = BROAD_MATCH_DISTANCE,
) -> str | None:
    """The line to print above results (seed 001, Rules: "No false confidence").

    `NO_MATCH` when no decision is within `max_distance` (or there are none), `BROAD_MATCH`
    when the closest is past `broad_match_distance`, else None. `cstp query` prints it.
    """
    kept = within(decisions, max_distance)
    if not kept:
        return NO_MATCH
    return BROAD_MATCH if is_broad(kept, broad_match_distance) else None


def render_precedents(
    decisions: Sequence[DecisionSummary],
    limit: int = MAX_PRECEDENTS,
    *,
    max_distance: float | None = None,
    broad_match_distance: float = BROAD_MATCH_DISTANCE,
) -> str:
    """A Markdown block in seed 001's Phase 4 format, at most `limit` (<= 5) precedents.

    Each entry: `**ID** — title (category, date) [project]`, then Confidence (N/10),
    Alternatives rejected (the count of `alternative` reasons: the wire carries reason types
    only), and Outcome. Tags are not on the wire, so no Tags line. Decisions past
    `max_distance` (cosine distance; None keeps all) are left out, as the service does with
    `maxDistance`. "Broad match — results may be tangential" is noted under the header
    when more decisions match than fit, or when the closest decision's distance is past
    `broad_match_distance` (default: the measured `BROAD_MATCH_DISTANCE`). No decision
    left gives the seed's no-match text. Text from the store is collapsed to single lines
    and never interpreted.
    """
    kept = within(decisions, max_distance)
    shown = kept[: max(0, min(limit, MAX_PRECEDENTS))]
    lines = ["---", "**Precedent Search** complete", f"Matches: {len(shown)} project-level"]
    if len(kept) > len(shown) or is_broad(shown, broad_match_distance):
        lines.append(BROAD_MATCH)
    lines += ["---", ""]
    if not shown:
        return "\n".join([*lines, NO_MATCH])
    lines += ["### Relevant Precedents", ""]
    for decision in shown:
        lines += [*_entry(decision), ""]
    return "\n".join(lines).rstrip() + "\n"
