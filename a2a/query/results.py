"""cstp.queryDecisions result as sent on the wire (F002 section Response; CONTRACT.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
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


#: Validates a whole result list in one call (cheaper than a model per summary).
_SUMMARIES = TypeAdapter(list[DecisionSummary])
#: Field name -> wire name, from the models' own aliases (the one source of the camelCase).
_SUMMARY_WIRE = {name: f.alias or name for name, f in DecisionSummary.model_fields.items()}
_RESULT_WIRE = {name: f.alias or name for name, f in QueryDecisionsResult.model_fields.items()}
_RESULT_FIELDS = {name: name for name in QueryDecisionsResult.model_fields}


@dataclass(frozen=True, slots=True)
class QueryAnswer:
    """An answer of cstp.queryDecisions as the query service computed it, before any model.

    `summaries`: one dict per result, keyed by every DecisionSummary field name
    (snake_case), values of the types the models hold; the service's own rows, not input.
    `to_wire()` is what the JSON-RPC method sends, built straight from them: for 10 results
    ~20 us against ~55 us through the models and a dump (validated, the same bytes;
    tests/query/test_service.py). `result()` gives the validated QueryDecisionsResult, for
    callers in Python (the CLI, the evaluation).
    """

    summaries: list[dict[str, Any]]
    query: str
    query_time_ms: int
    agent: str

    def to_wire(self) -> dict[str, Any]:
        """QueryDecisionsResult.to_wire() of `result()`, without building the models."""
        decisions = [
            _without_absent({wire: summary[name] for name, wire in _SUMMARY_WIRE.items()})
            for summary in self.summaries
        ]
        return self._fields(decisions, _RESULT_WIRE)

    def result(self) -> QueryDecisionsResult:
        """The answer as a validated QueryDecisionsResult."""
        decisions = _SUMMARIES.validate_python(self.summaries)
        return QueryDecisionsResult(**self._fields(decisions, _RESULT_FIELDS))

    def _fields(self, decisions: list[Any], names: dict[str, str]) -> dict[str, Any]:
        """The result's fields under `names` (field name -> key): wire or field names."""
        values = {
            "decisions": decisions,
            "total": len(decisions),
            "query": self.query,
            "query_time_ms": self.query_time_ms,
            "agent": self.agent,
        }
        return {names[name]: value for name, value in values.items()}


def _without_absent(decision: dict[str, Any]) -> dict[str, Any]:
    """`decision` without `reasons`, `score` and `explain` where they are None (in place)."""
    for optional in ("reasons", "score", "explain"):
        if decision[optional] is None:
            del decision[optional]
    return decision
