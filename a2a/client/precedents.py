"""Retrieved decisions as a short "Relevant Precedents" block for an agent's prompt (seed 001)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from a2a.query.results import DecisionSummary

#: Most precedents in one block (seed 001, Rules: "Max 5 results").
MAX_PRECEDENTS: Final = 5
_NO_MATCH: Final = (
    "No relevant precedents found. This appears to be a first-time decision in this problem space."
)


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


def render_precedents(decisions: Sequence[DecisionSummary], limit: int = MAX_PRECEDENTS) -> str:
    """A Markdown block in seed 001's Phase 4 format, at most `limit` (<= 5) precedents.

    Each entry: `**ID** — title (category, date) [project]`, then Confidence (N/10),
    Alternatives rejected (the count of `alternative` reasons: the wire carries reason types
    only), and Outcome. Tags are not on the wire, so no Tags line. More decisions than fit
    add "Broad match — results may be tangential". No decisions gives the seed's
    no-match text. Text from the store is collapsed to single lines and never interpreted.
    """
    shown = list(decisions)[: max(0, min(limit, MAX_PRECEDENTS))]
    lines = ["---", "**Precedent Search** complete", f"Matches: {len(shown)} project-level"]
    if len(decisions) > len(shown):
        lines.append("Broad match — results may be tangential")
    lines += ["---", ""]
    if not shown:
        return "\n".join([*lines, _NO_MATCH])
    lines += ["### Relevant Precedents", ""]
    for decision in shown:
        lines += [*_entry(decision), ""]
    return "\n".join(lines).rstrip() + "\n"
