"""cstp.findSimilarDecisions result as sent on the wire."""

from __future__ import annotations

from pydantic import Field

from a2a.records.summary import DecisionMetadata
from a2a.results import FederatedResult, absent_when_none
from a2a.similarity.scoring import Profile, ScoreComponents

#: Why a probe matches nothing at all: similarity compares only these fields (seed 000), so a
#: record without them (an ADR, say) has no neighbours.
NO_STRUCTURE = "the probe has no tags, category or stakes"


class SimilarDecision(DecisionMetadata):
    """One prior decision like the probe: metadata only, as in cstp.queryDecisions.

    `score` is in [0, 1], higher is closer: the weighted sum of `scoreComponents`, each in
    [0, 1] (tag Jaccard, category match 0/1, stakes match 0/1), all rounded to 6 places.
    `distance` is always null (no embedding is involved); `tags` are the record's own, as
    stored (`[]` when it has none); `date` is RFC 3339 UTC.
    """

    distance: None = None
    tags: list[str]
    score: float = Field(ge=0, le=1)
    score_components: ScoreComponents


class FindSimilarDecisionsResult(FederatedResult):
    """The result object: decisions (score descending, ties by id), count, time, agent id.

    `reason` is there only when the list is empty for a cause the caller can act on
    (NO_STRUCTURE); it is left off the wire otherwise.
    """

    decisions: list[SimilarDecision]
    total: int
    query_time_ms: int = Field(description="milliseconds of server wall time for the call")
    agent: str
    reason: str | None = absent_when_none(
        description="why no decision can match, e.g. " + repr(NO_STRUCTURE)
    )
    broad_match: bool | None = absent_when_none(
        description="true when no decision returned lies within the embedding model's topical"
        " distance; absent otherwise. Structural matches carry no distance,"
        " so it is absent from this method's results today",
    )


def no_match_reason(probe: Profile) -> str | None:
    """NO_STRUCTURE when `probe` has none of the fields similarity compares, else None."""
    return None if probe.tags or probe.category or probe.stakes else NO_STRUCTURE
