"""The decision methods of the method table: thin handlers over DecisionService, returning
its typed results; each handler's docstring is the method's summary (rpc.discover, the
agent card)."""

from __future__ import annotations

from functools import partial
from typing import Any

from a2a.decisions import params as p
from a2a.decisions import results as r
from a2a.decisions.service import DecisionService
from a2a.records.summary import DecisionMetadata
from a2a.rpc.methods import CallContext, Method, method, table

_ID = "dec-2026-02-invoices-db"
_EXAMPLE_DECISION = {
    "id": _ID,
    "title": "Move the invoices database with a blue-green switch",
    "category": "architecture",
    "confidence": 0.8,
    "stakes": "high",
    "date": "2026-02-03T10:00:00Z",
    "context": "The invoices Postgres must move to a new cluster with no downtime.",
    "decision": "Replicate to the new cluster, then switch traffic in one step.",
    "reasons": [{"type": "analysis", "text": "Rollback is one DNS change."}],
    "tags": ["postgres", "migration"],
}
_REVIEW = {
    "id": _ID,
    "outcome": "success",
    "lessons": "Replication lag peaked at 4 s; the switch took 90 s.",
}
_UPDATE = {
    "id": _ID,
    "changes": {"confidence": 0.7, "relatedTo": ["dec-2026-01-cdc"]},
    "reason": "Replication lag measured in staging was higher than assumed.",
}


def decision_methods(service: DecisionService) -> dict[str, Method]:
    """name -> Method for recordDecision, reviewDecision, updateDecision, deleteDecision
    (scope write; admin to delete another agent's decision), getDecision, listDecisions,
    getCalibration, getStats and checkDrift (scope read). Each answers the store's errors
    (a2a.rpc.methods.STORE_ERRORS), and -32004 for a scope or tenant the token lacks.
    """

    writes = partial(method, scope="write")

    @writes(
        "cstp.recordDecision",
        p.RecordDecisionParams,
        r.RecordDecisionResult,
        examples=({"decision": _EXAMPLE_DECISION},),
    )
    async def record(params: p.RecordDecisionParams, ctx: CallContext) -> r.RecordDecisionResult:
        """Record a decision; durable and searchable when the answer arrives."""
        return await service.record_decision(params, ctx.agent)

    @writes("cstp.reviewDecision", p.ReviewDecisionParams, DecisionMetadata, examples=(_REVIEW,))
    async def review(params: p.ReviewDecisionParams, ctx: CallContext) -> DecisionMetadata:
        """Report how a decision turned out: outcome, status, lessons."""
        return await service.review_decision(params)

    @method("cstp.getDecision", p.GetDecisionParams, r.DecisionResult, examples=({"id": _ID},))
    async def get(params: p.GetDecisionParams, ctx: CallContext) -> r.DecisionResult:
        """One whole decision record by id: context, decision, reasons, review."""
        return await service.get_decision(params)

    list_example = {"filters": {"category": "architecture"}, "order": "dateDesc", "limit": 20}

    @method(
        "cstp.listDecisions",
        p.ListDecisionsParams,
        r.ListDecisionsResult,
        examples=(list_example,),
        stale=True,
    )
    async def list_(params: p.ListDecisionsParams, ctx: CallContext) -> r.ListDecisionsResult:
        """Decisions in date order, filtered, a page at a time (keyset cursor)."""
        return await service.list_decisions(params)

    @writes("cstp.updateDecision", p.UpdateDecisionParams, DecisionMetadata, examples=(_UPDATE,))
    async def update(params: p.UpdateDecisionParams, ctx: CallContext) -> DecisionMetadata:
        """Amend a decision; every change is kept in its history."""
        return await service.update_decision(params, ctx.agent)

    delete_example = {"id": _ID, "reason": "Recorded twice by mistake."}

    @writes(
        "cstp.deleteDecision",
        p.DeleteDecisionParams,
        r.DeleteDecisionResult,
        examples=(delete_example,),
    )
    async def delete(params: p.DeleteDecisionParams, ctx: CallContext) -> r.DeleteDecisionResult:
        """Delete a decision and its links (your own; anyone's with scope admin)."""
        return await service.delete_decision(params, ctx.agent, ctx.scopes)

    stats_examples: tuple[dict[str, Any], ...] = ({}, {"filters": {"category": "architecture"}})

    @method("cstp.getStats", p.GetStatsParams, r.StatsResult, examples=stats_examples)
    async def stats(params: p.GetStatsParams, ctx: CallContext) -> r.StatsResult:
        """Decision counts by month x outcome, category, status and agent."""
        return await service.get_stats(params)

    drift_example = {"recentDays": 30, "baselineDays": 180, "groupBy": "agent"}

    @method("cstp.checkDrift", p.CheckDriftParams, r.DriftResult, examples=(drift_example,))
    async def drift(params: p.CheckDriftParams, ctx: CallContext) -> r.DriftResult:
        """Groups whose recent Brier score got worse than their baseline."""
        return await service.check_drift(params)

    @method(
        "cstp.getCalibration",
        p.GetCalibrationParams,
        r.CalibrationResult,
        examples=({"filters": {"stakes": ["high", "critical"]}, "bins": 5},),
        tenancy="many",
        stale=True,
    )
    async def calibration(params: p.GetCalibrationParams, ctx: CallContext) -> r.CalibrationResult:
        """How well confidence matched outcomes: Brier score, reliability bins."""
        return await service.get_calibration(params)

    return table(record, review, get, list_, calibration, update, delete, stats, drift)
