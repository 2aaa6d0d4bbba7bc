"""cstp.queryDecisions result as sent on the wire (F002 section Response; CONTRACT.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from a2a.records.summary import SUMMARY_FIELDS, DecisionMetadata
from a2a.rpc.wire import WireModel


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


class QueryDecisionsResult(WireModel):
    """The result object: decisions, their count, the query as sent, server time, agent id."""

    decisions: list[DecisionSummary]
    total: int
    query: str
    query_time_ms: int = Field(description="milliseconds of server wall time for the query")
    agent: str
    note: str | None = Field(
        default=None,
        description="present only when the answer needs a word of explanation: today, a"
        " filters.category that no stored decision has (categories match exactly); it names"
        " the closest known categories (docs/query-notes.md)",
    )

    def to_wire(self) -> dict[str, Any]:
        """JSON-ready dict in the wire's camelCase (one dump for the whole result); `note`
        left out when there is none."""
        data = self.model_dump(by_alias=True)
        if data["note"] is None:
            del data["note"]
        for decision in data["decisions"]:
            _without_absent(decision)
        return data


#: Result field name -> wire name, from the model's own aliases.
_RESULT_WIRE = {name: f.alias or name for name, f in QueryDecisionsResult.model_fields.items()}
#: The wire names of what `SearchIndex.shown` gives of a hit: its id, then SUMMARY_FIELDS.
_SHOWN_WIRE = tuple(
    DecisionSummary.model_fields[name].alias or name for name in ("id", *SUMMARY_FIELDS)
)


@dataclass(frozen=True, slots=True)
class Hits:
    """The decisions a query returns, best first, field by field as the service computed
    them: the same position in each sequence is the same decision.

    `shown`: (id, *SUMMARY_FIELDS values) per hit (SearchIndex.shown). `distances`: cosine
    distance in [0, 2]. `reasons` (reason types), `scores` and `explains`: None when the
    call did not produce them (DecisionSummary leaves them out of the wire).
    """

    shown: Sequence[tuple[Any, ...]]
    distances: Sequence[float]
    reasons: Sequence[list[str]] | None = None
    scores: Sequence[float | None] | None = None
    explains: Sequence[dict[str, Any]] | None = None

    def to_wire(self) -> list[dict[str, Any]]:
        """One JSON object per hit, keys in DecisionSummary's wire order (its dump's)."""
        wire = [
            _decision(shown, distance)
            for shown, distance in zip(self.shown, self.distances, strict=False)
        ]
        for key, values in (
            ("reasons", self.reasons),
            ("score", self.scores),
            ("explain", self.explains),
        ):
            if values is not None:
                for decision, value in zip(wire, values, strict=False):
                    decision[key] = value
        return wire


@dataclass(frozen=True, slots=True)
class QueryAnswer:
    """An answer of cstp.queryDecisions as the query service computed it, before any model.

    `to_wire()` is what the JSON-RPC method sends, built straight from the hits, each
    decision's object once: for 10 results ~10 us against ~55 us through the models and a
    dump (the same bytes; tests/query/test_service.py). `result()` gives the validated
    QueryDecisionsResult, for callers in Python (the CLI, the evaluation).
    """

    hits: Hits
    query: str
    query_time_ms: int
    agent: str
    note: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """QueryDecisionsResult.to_wire() of `result()`, without building the models."""
        decisions = self.hits.to_wire()
        values = {
            "decisions": decisions,
            "total": len(decisions),
            "query": self.query,
            "query_time_ms": self.query_time_ms,
            "agent": self.agent,
        }
        if self.note is not None:
            values["note"] = self.note
        return {_RESULT_WIRE[name]: value for name, value in values.items()}

    def result(self) -> QueryDecisionsResult:
        """The answer as a validated QueryDecisionsResult."""
        return QueryDecisionsResult.model_validate(self.to_wire())


def _decision(shown: tuple[Any, ...], distance: float) -> dict[str, Any]:
    """A hit's wire object up to its distance, keys in DecisionSummary's wire order (its
    dump's; tests/query/test_service.py checks it against the model)."""
    decision = dict(zip(_SHOWN_WIRE, shown, strict=True))
    decision["tenant"] = None
    decision["distance"] = distance
    return decision


def _without_absent(decision: dict[str, Any]) -> dict[str, Any]:
    """`decision` without `reasons`, `score` and `explain` where they are None (in place)."""
    for optional in ("reasons", "score", "explain"):
        if decision[optional] is None:
            del decision[optional]
    return decision
