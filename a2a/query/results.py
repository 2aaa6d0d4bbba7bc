"""cstp.queryDecisions result as sent on the wire (F002 section Response; CONTRACT.md)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class DecisionMetadata(BaseModel):
    """The metadata every result shows of a decision; None where the record lacks a field."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    id: str
    title: str | None
    category: str | None
    confidence: float | None
    stakes: str | None
    status: str | None
    outcome: str | None
    date: str | None
    source: str | None
    #: Agent id of the writer for records written over the protocol, None for files.
    recorded_by: str | None = None


class DecisionSummary(DecisionMetadata):
    """One matching decision: metadata only, never the decision's full text (F002 non-goals).

    `distance` is cosine distance in [0, 2] to the query, lower is closer, in every mode
    (keyword hits too); `date` is RFC 3339 UTC. `reasons` (reason types) is present only
    when the call asked for it; `score` (higher is better) only in keyword and hybrid
    modes; `explain` (the score's components) only when asked for.
    """

    distance: float | None = Field(ge=0, le=2)
    reasons: list[str] | None = None
    score: float | None = None
    explain: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        """JSON-ready dict; `reasons`, `score` and `explain` left out when not produced."""
        return _without_absent(self.model_dump(by_alias=True))


class QueryDecisionsResult(BaseModel):
    """The result object: decisions, their count, the query as sent, server time, agent id."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    decisions: list[DecisionSummary]
    total: int
    query: str
    query_time_ms: int = Field(description="milliseconds of server wall time for the query")
    agent: str

    def to_wire(self) -> dict[str, Any]:
        """JSON-ready dict in the wire's camelCase (one dump for the whole result)."""
        data = self.model_dump(by_alias=True)
        for decision in data["decisions"]:
            _without_absent(decision)
        return data


def _without_absent(decision: dict[str, Any]) -> dict[str, Any]:
    """`decision` without `reasons`, `score` and `explain` where they are None (in place)."""
    for optional in ("reasons", "score", "explain"):
        if decision[optional] is None:
            del decision[optional]
    return decision
