"""cstp.checkGuardrails in a tenant's method table: the proposal's precedents (structural,
as cstp.findSimilarDecisions finds them) and the caller's calibration read from the
tenant's index, the rules evaluated on them (a2a.guardrails), one audit line and one count
per check. Nothing is written (CONTRACT.md, Guardrails)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from a2a.decisions.params import DecisionInput
from a2a.decisions.service import DecisionService
from a2a.guardrails import engine
from a2a.guardrails.cases import CaseResult, run_cases
from a2a.guardrails.results import (
    CallerCalibration,
    CheckGuardrailsResult,
    Precedent,
    ViolationOut,
)
from a2a.guardrails.rules import RuleSet, load_rules
from a2a.guardrails.variables import CheckInput
from a2a.records.filters import QueryFilters, WireModel
from a2a.records.summary import DecisionMetadata
from a2a.rpc.methods import CallContext, Method, method, table
from a2a.similarity.params import FindSimilarDecisionsParams, Proposal
from a2a.similarity.results import SimilarDecision
from a2a.similarity.service import SimilarityService

log = logging.getLogger(__name__)

#: Precedents the expressions see, and those the result shows.
PRECEDENTS_SEEN: Final = 10
PRECEDENTS_SHOWN: Final = 3

_EXAMPLE = {
    "proposal": {
        "title": "Move the invoices database with a blue-green switch",
        "category": "architecture",
        "stakes": "high",
        "confidence": 0.8,
        "tags": ["postgres", "migration"],
    }
}


class CheckGuardrailsParams(WireModel):
    """Params of cstp.checkGuardrails: `{"proposal": {...}}`, the fields and bounds of
    cstp.recordDecision's `decision` (`title` required). Defined here, not in
    a2a.guardrails, because the decision model is a2a.decisions' (a sibling package)."""

    proposal: DecisionInput


@dataclass(frozen=True, slots=True)
class Guardrails:
    """The service's rules (CSTP_GUARDRAILS_FILE, compiled once), what is told of each
    check's verdict (`counted`: /metrics), and the clock giving `now` (UTC)."""

    rules: RuleSet = field(default_factory=RuleSet)
    counted: Callable[[str], None] = lambda verdict: None
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)


def guardrail_methods(
    guardrails: Guardrails,
    tenant: str,
    similar: SimilarityService,
    decisions: DecisionService,
) -> dict[str, Method]:
    """name -> Method for cstp.checkGuardrails on `tenant`'s services (scope read)."""
    rules = guardrails.rules.for_tenant(tenant)

    @method(
        "cstp.checkGuardrails", CheckGuardrailsParams, CheckGuardrailsResult, examples=(_EXAMPLE,)
    )
    async def check(params: CheckGuardrailsParams, ctx: CallContext) -> CheckGuardrailsResult:
        """Check a proposed decision against the organisation's rules before acting on it.

        Use it before an action with consequences: send the `proposal` as you would record
        it (title required; category, stakes, confidence, tags, context). Returns `verdict`:
        `allow` (go ahead), `warn` (go ahead, but tell your principal the `violations`) or
        `block` (do not act; each violation's `message` says what the rule requires, e.g.
        more confidence or a review tag). Also returns the top `precedents` like it, with
        their outcomes, and your own `calibration` (Brier score, 0 is perfect) in its
        category. Nothing is recorded: call cstp.recordDecision once you decide.
        """
        proposal = params.proposal
        # Two independent reads of the index, each in a worker thread: side by side.
        found, calibration = await asyncio.gather(
            precedents(similar, proposal),
            caller_calibration(decisions, ctx.agent, proposal.category),
        )
        given = CheckInput(
            proposal.model_dump(exclude_unset=True),
            [precedent_fields(d) for d in found],
            {"brierScore": calibration.brier_score, "decisions": calibration.decisions},
            guardrails.clock(),
        )
        outcome = engine.check(rules, given)
        violated = [v.rule for v in outcome.violations]
        log.info(
            "guardrails checked",
            extra={
                "agent": ctx.agent,
                "tenant": tenant,
                "verdict": outcome.verdict,
                "rules": violated,
            },
        )
        guardrails.counted(outcome.verdict)
        return CheckGuardrailsResult(
            verdict=outcome.verdict,
            violations=[
                ViolationOut(rule=v.rule, severity=v.severity, message=v.message)
                for v in outcome.violations
            ],
            evaluated=outcome.evaluated,
            precedents=[shown(d) for d in found[:PRECEDENTS_SHOWN]],
            calibration=calibration,
        )

    return table(check)


async def precedents(similar: SimilarityService, proposal: DecisionInput) -> list[SimilarDecision]:
    """The tenant's decisions most like `proposal`, at most PRECEDENTS_SEEN, as
    cstp.findSimilarDecisions by proposal ranks them (tags, category, stakes); none when
    the proposal has none of those three."""
    if not proposal.tags and proposal.category is None and proposal.stakes is None:
        return []
    probe = Proposal(tags=proposal.tags or None, category=proposal.category, stakes=proposal.stakes)
    params = FindSimilarDecisionsParams(proposal=probe, limit=PRECEDENTS_SEEN)
    return (await similar.find_similar_decisions(params)).decisions


def distance(decision: SimilarDecision) -> float:
    """The structural distance of a precedent: `1 - score`, in [0, 1]."""
    return round(1.0 - decision.score, 6)


def precedent_fields(d: SimilarDecision) -> dict[str, Any]:
    """One `precedents` item of the expressions (a2a.guardrails.variables.PRECEDENT_FIELDS)."""
    return {
        "id": d.id,
        "title": d.title,
        "distance": distance(d),
        "outcome": d.outcome,
        "status": d.status,
        "date": d.date,
        "confidence": d.confidence,
        "category": d.category,
    }


def shown(d: SimilarDecision) -> Precedent:
    """A precedent as the result shows it: its summary and its distance."""
    summary = {name: getattr(d, name) for name in DecisionMetadata.model_fields if name != "peer"}
    return Precedent(**summary, distance=distance(d))


async def caller_calibration(
    decisions: DecisionService, agent: str, category: str | None
) -> CallerCalibration:
    """`agent`'s scored decisions in `category` (every category when None) and their Brier
    score, as cstp.getCalibration scores them."""
    filters = None if category is None else QueryFilters(category=category)
    count, brier = await decisions.agent_brier(agent, filters)
    return CallerCalibration(category=category, decisions=count, brier_score=brier)


def check_rules_file(path: Path) -> RuleSet:
    """`cstp guardrails check`: the rules of `path`, compiled and probed as at start.
    Raises RulesError naming the rule and the fault (a2a.guardrails.rules.load_rules)."""
    return load_rules(path, label=str(path))


def run_rule_cases(rules: RuleSet, lines: list[str]) -> list[CaseResult]:
    """`cstp guardrails test`: every case of `lines` run against `rules`, each proposal
    validated as cstp.checkGuardrails validates it. Raises CaseError naming the line of a
    case that cannot be run (a2a.guardrails.cases)."""
    return run_cases(rules, lines, _proposal_fields)


def _proposal_fields(raw: Any) -> dict[str, Any]:
    try:
        params = CheckGuardrailsParams.model_validate({"proposal": raw})
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"])
        raise ValueError(f"{field}: {error['msg']}") from None
    return params.proposal.model_dump(exclude_unset=True)
