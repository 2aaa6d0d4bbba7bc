"""cstp.checkGuardrails result as sent on the wire (CONTRACT.md, Guardrails)."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field

from a2a.records.summary import DecisionMetadata
from a2a.results import Result, WireModel


class ViolationOut(WireModel):
    """A violated rule: its `rule` id, `severity` (block or warn) and `message`."""

    rule: str
    severity: Literal["block", "warn"]
    message: str


class Precedent(DecisionMetadata):
    """A prior decision like the proposal, with its outcome: a summary, and `distance`, the
    structural distance `1 - score` of cstp.findSimilarDecisions in [0, 1] (0: same tags,
    category and stakes)."""

    distance: float = Field(ge=0, le=1)


class CallerCalibration(WireModel):
    """The caller's own calibration in the proposal's category (every category when the
    proposal names none): scored `decisions` and their `brierScore` (null when none; 0 is
    perfect)."""

    category: str | None
    decisions: int
    brier_score: float | None


class CheckGuardrailsResult(Result):
    """The `verdict` (block if any violated rule blocks, else warn if any warns, else
    allow), the `violations` in rule order, how many rules were `evaluated` for the tenant,
    the top 3 `precedents` and the caller's `calibration`."""

    verdict: Literal["allow", "warn", "block"]
    violations: list[ViolationOut]
    evaluated: int
    precedents: list[Precedent]
    calibration: CallerCalibration

    def with_tenant(self, tenant: str) -> Self:
        for precedent in self.precedents:
            precedent.with_tenant(tenant)
        return self
