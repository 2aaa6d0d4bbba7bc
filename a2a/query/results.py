"""cstp.queryDecisions result as sent on the wire (F002 section Response; CONTRACT.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from a2a.records.summary import SUMMARY_FIELDS, DecisionMetadata
from a2a.results import FederatedResult, absent_when_none


class DecisionSummary(DecisionMetadata):
    """One matching decision: metadata only, never the decision's full text (F002 non-goals).

    `distance` is cosine distance in [0, 2] to the query, lower is closer, in every mode
    (keyword hits too); `date` is RFC 3339 UTC. `reasons` (reason types) is present only
    when the call asked for it; `score` (higher is better) only in keyword and hybrid
    modes; `explain` (the score's components) only when asked for.
    """

    distance: float | None = Field(ge=0, le=2)
    reasons: list[str] | None = absent_when_none()
    score: float | None = absent_when_none()
    explain: dict[str, Any] | None = absent_when_none()


class QueryDecisionsResult(FederatedResult):
    """The result object: decisions, their count, the query as sent, server time, agent id;
    `note` and `broadMatch` only when they say something (a2a.app.steps.with_broad_match)."""

    decisions: list[DecisionSummary]
    total: int
    query: str
    query_time_ms: int = Field(description="milliseconds of server wall time for the query")
    agent: str
    # The notes and their wording: docs/query-notes.md.
    note: str | None = absent_when_none(
        description="present only when the answer needs a word of explanation: today, a"
        " filters.category that no stored decision has (categories match exactly); it names"
        " the closest known categories",
    )
    broad_match: bool | None = absent_when_none(
        description="true when no decision returned lies within the embedding model's topical"
        " distance: the nearest there is, not a match; absent otherwise",
    )


#: The fields of what `SearchIndex.shown` gives of a hit: its id, then SUMMARY_FIELDS.
_SHOWN = ("id", *SUMMARY_FIELDS)


@dataclass(frozen=True, slots=True)
class Hits:
    """The decisions a query returns, best first, field by field as the service computed
    them: the same position in each sequence is the same decision.

    `shown`: (id, *SUMMARY_FIELDS values) per hit (SearchIndex.shown). `distances`: cosine
    distance in [0, 2]; None for a keyword hit while the embedding provider is down.
    `reasons` (reason types), `scores` and `explains`: None when the call did not produce
    them (DecisionSummary leaves them out of the wire).
    """

    shown: Sequence[tuple[Any, ...]]
    distances: Sequence[float | None]
    reasons: Sequence[list[str]] | None = None
    scores: Sequence[float | None] | None = None
    explains: Sequence[dict[str, Any]] | None = None

    def summaries(self) -> list[DecisionSummary]:
        """One DecisionSummary per hit, best first (validated: pydantic-core's validation
        is ~4x faster than `model_construct`'s Python loop)."""
        summaries = []
        for n, (shown, distance) in enumerate(zip(self.shown, self.distances, strict=False)):
            values = dict(zip(_SHOWN, shown, strict=True))
            values["distance"] = distance
            for key, column in (
                ("reasons", self.reasons),
                ("score", self.scores),
                ("explain", self.explains),
            ):
                if column is not None:
                    values[key] = column[n]
            summaries.append(DecisionSummary.model_validate(values))
        return summaries
