"""Results of the decision methods as sent on the wire (CONTRACT.md)."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field
from pydantic.alias_generators import to_camel
from pydantic.dataclasses import dataclass

from a2a.records import DecisionRecord
from a2a.records.dates import date_text, format_date
from a2a.records.summary import DecisionMetadata, summary_fields
from a2a.results import DecisionsResult, Result, WireModel


class RecordDecisionResult(WireModel):
    """`id` of the stored decision; `created` false when an identical one was already there."""

    id: str
    created: bool


class ReasonResult(WireModel):
    """One reason of a decision: its type and text."""

    type: str
    text: str


class ChangeResult(WireModel):
    """One entry of a decision's history: when (RFC 3339 UTC), by which agent, why, and
    each changed field's `[old, new]` by its wire name."""

    at: str
    by: str | None
    reason: str
    changes: dict[str, tuple[Any, Any]]


class LinksResult(WireModel):
    """Ids of the decisions linked to one: those it supersedes, those superseding it, and
    those related to it either way (its own `relatedTo` first)."""

    supersedes: list[str]
    superseded_by: list[str]
    related_to: list[str]


class DecisionResult(DecisionMetadata):
    """A whole decision record (cstp.getDecision): the summary fields plus its text.

    Dates are RFC 3339 UTC (`...Z`); fields the record lacks are null, lists are `[]`.
    `history` oldest first; `supersededBy` the latest decision superseding it, or null.
    """

    recorded_at: str | None
    context: str | None
    decision: str | None
    reasons: list[ReasonResult]
    tags: list[str]
    lessons: str | None
    reviewed_at: str | None
    superseded_by: str | None = None
    links: LinksResult = Field(
        default_factory=lambda: LinksResult(supersedes=[], superseded_by=[], related_to=[])
    )
    history: list[ChangeResult] = Field(default_factory=list)

    @classmethod
    def of(cls, record: DecisionRecord) -> DecisionResult:
        """The wire form of `record`."""

        return cls(
            **summary_fields(record),
            recorded_at=date_text(record.recorded_at),
            context=record.context,
            decision=record.decision,
            reasons=[ReasonResult(type=r.type, text=r.text) for r in record.reasons],
            tags=list(record.tags),
            lessons=record.lessons,
            reviewed_at=date_text(record.reviewed_at),
            superseded_by=record.superseded_by[-1] if record.superseded_by else None,
            links=LinksResult(
                supersedes=list(record.supersedes),
                superseded_by=list(record.superseded_by),
                related_to=list(dict.fromkeys([*record.related_to, *record.related_from])),
            ),
            history=[
                ChangeResult(
                    at=format_date(entry.at),
                    by=entry.by,
                    reason=entry.reason,
                    changes=dict(entry.changes),
                )
                for entry in record.history
            ],
        )


class DeleteDecisionResult(WireModel):
    """cstp.deleteDecision: the id, and `deleted` (always true: a failure is an error)."""

    id: str
    deleted: bool


class ListDecisionsResult(DecisionsResult):
    """One page of summaries (no distance) in date order, and the cursor of the next page."""

    decisions: list[DecisionMetadata]
    next_cursor: str | None


class BinResult(WireModel):
    """A reliability bin: [from, to) (the last one closed), its count and mean values, and
    the 95% Wilson interval of its success rate (null when empty)."""

    from_: float = Field(alias="from")
    to: float
    count: int
    mean_confidence: float | None
    success_rate: float | None
    success_rate_low: float | None
    success_rate_high: float | None


class CategoryResult(WireModel):
    """Scored decisions of one category and their Brier score."""

    category: str | None
    decisions: int
    brier_score: float


class AgentResult(WireModel):
    """Scored decisions of one agent (null: records from files) and their Brier score."""

    agent: str | None
    decisions: int
    brier_score: float


class MonthResult(WireModel):
    """Scored decisions dated in one UTC month (`YYYY-MM`) and their Brier score."""

    month: str
    decisions: int
    brier_score: float


class CalibrationResult(Result):
    """cstp.getCalibration: scored decisions, Brier score (null when none), bins, categories;
    Murphy's decomposition of `brierScoreBinned` (each decision scored with its bin's mean
    confidence): `reliability - resolution + uncertainty == brierScoreBinned`; per agent
    and per month (ascending). The four are null when no decision is scored."""

    decisions: int
    brier_score: float | None
    brier_score_binned: float | None
    reliability: float | None
    resolution: float | None
    uncertainty: float | None
    bins: list[BinResult]
    by_category: list[CategoryResult]
    by_agent: list[AgentResult]
    by_month: list[MonthResult]


class MonthCountResult(WireModel):
    """Decisions dated in one UTC month, per outcome (`none`: without one)."""

    month: str
    outcomes: dict[str, int]


class StatsResult(WireModel):
    """cstp.getStats: decisions passing the filters, undated ones, by month (ascending) x
    outcome, and by category, status and agent (count descending, then name, null last)."""

    decisions: int
    undated: int
    by_month: list[MonthCountResult]
    by_category: list[dict[str, Any]]
    by_status: list[dict[str, Any]]
    by_agent: list[dict[str, Any]]


@dataclass(
    frozen=True, slots=True, config=ConfigDict(alias_generator=to_camel, populate_by_name=True)
)
class DriftGroup:
    """One group's scored decisions and Brier score in each window (None when none); as
    sent, one entry of cstp.checkDrift's `groups` (camelCase; a2a.decisions.drift)."""

    group: str | None
    recent_brier: float | None
    baseline_brier: float | None
    recent_decisions: int
    baseline_decisions: int
    drifted: bool


class DriftResult(WireModel):
    """cstp.checkDrift: one entry per group with scored decisions in either window."""

    groups: list[DriftGroup]
