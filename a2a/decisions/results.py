"""Results of the decision methods as sent on the wire (CONTRACT.md)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from a2a.decisions.calibration import Calibration
from a2a.query.results import DecisionMetadata
from a2a.records import DecisionRecord
from a2a.store.metadata import format_date


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    def to_wire(self) -> dict[str, Any]:
        """JSON-ready dict in the wire's camelCase."""
        return self.model_dump(by_alias=True, mode="json")


class RecordDecisionResult(_Wire):
    """`id` of the stored decision; `created` false when an identical one was already there."""

    id: str
    created: bool


class ReasonResult(_Wire):
    """One reason of a decision: its type and text."""

    type: str
    text: str


class DecisionResult(DecisionMetadata):
    """A whole decision record (cstp.getDecision): the summary fields plus its text.

    Dates are RFC 3339 UTC (`...Z`); fields the record lacks are null, lists are `[]`.
    """

    recorded_at: str | None
    context: str | None
    decision: str | None
    reasons: list[ReasonResult]
    tags: list[str]
    lessons: str | None
    reviewed_at: str | None

    @classmethod
    def of(cls, record: DecisionRecord) -> DecisionResult:
        """The wire form of `record`."""

        def moment(value: Any) -> str | None:
            return None if value is None else format_date(value)

        return cls(
            id=record.id,
            title=record.title,
            category=record.category,
            confidence=record.confidence,
            stakes=record.stakes,
            status=record.status,
            outcome=record.outcome,
            date=moment(record.date),
            source=record.source,
            recorded_by=record.recorded_by,
            recorded_at=moment(record.recorded_at),
            context=record.context,
            decision=record.decision,
            reasons=[ReasonResult(type=r.type, text=r.text) for r in record.reasons],
            tags=list(record.tags),
            lessons=record.lessons,
            reviewed_at=moment(record.reviewed_at),
        )

    def to_wire(self) -> dict[str, Any]:
        """JSON-ready dict in the wire's camelCase."""
        return self.model_dump(by_alias=True, mode="json")


class ListDecisionsResult(_Wire):
    """One page of summaries (no distance) in date order, and the cursor of the next page."""

    decisions: list[DecisionMetadata]
    next_cursor: str | None


class BinResult(_Wire):
    """A reliability bin: [from, to) (the last one closed), its count and mean values."""

    from_: float = Field(alias="from")
    to: float
    count: int
    mean_confidence: float | None
    success_rate: float | None


class CategoryResult(_Wire):
    """Scored decisions of one category and their Brier score."""

    category: str | None
    decisions: int
    brier_score: float


class CalibrationResult(_Wire):
    """cstp.getCalibration: scored decisions, Brier score (null when none), bins, categories."""

    decisions: int
    brier_score: float | None
    bins: list[BinResult]
    by_category: list[CategoryResult]

    @classmethod
    def of(cls, calibration: Calibration) -> CalibrationResult:
        """The wire form of `calibration`."""
        return cls(
            decisions=calibration.decisions,
            brier_score=calibration.brier_score,
            bins=[
                BinResult.model_validate(
                    {
                        "from": b.low,
                        "to": b.high,
                        "count": b.count,
                        "meanConfidence": b.mean_confidence,
                        "successRate": b.success_rate,
                    }
                )
                for b in calibration.bins
            ],
            by_category=[
                CategoryResult(
                    category=c.category, decisions=c.decisions, brier_score=c.brier_score
                )
                for c in calibration.by_category
            ],
        )
