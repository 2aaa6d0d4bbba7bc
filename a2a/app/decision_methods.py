"""The decision methods of the method table: thin handlers over DecisionService, returning
its typed results; each handler's docstring is the method's summary (rpc.discover, the
agent card)."""

from __future__ import annotations

from functools import partial
from typing import Any

from a2a.app.federated import Federation
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


def decision_methods(
    service: DecisionService, federation: Federation | None = None
) -> dict[str, Method]:
    """name -> Method for recordDecision, reviewDecision, updateDecision, deleteDecision
    (scope write; admin to delete another agent's decision), getDecision, listDecisions,
    getCalibration, getStats and checkDrift (scope read). Each answers the store's errors
    (a2a.rpc.methods.STORE_ERRORS), and -32004 for a scope or tenant the token lacks.
    getDecision with `peer` reads that peer's record (`federation`; None: no peers).
    """
    federation = federation or Federation.alone()

    writes = partial(method, scope="write")

    @writes(
        "cstp.recordDecision",
        p.RecordDecisionParams,
        r.RecordDecisionResult,
        examples=({"decision": _EXAMPLE_DECISION},),
    )
    async def record(params: p.RecordDecisionParams, ctx: CallContext) -> r.RecordDecisionResult:
        """Record a decision: title, context, the decision, reasons, confidence (0-1),
        stakes, category, tags.

        Use it when you have decided something worth remembering, so later searches find
        it; review it with cstp.reviewDecision once the outcome is known. Returns its `id`
        and `created` (false for an identical retry). Durable and searchable when the
        answer arrives.
        """
        return await service.record_decision(params, ctx.agent)

    @writes("cstp.reviewDecision", p.ReviewDecisionParams, DecisionMetadata, examples=(_REVIEW,))
    async def review(params: p.ReviewDecisionParams, ctx: CallContext) -> DecisionMetadata:
        """Report how a decision turned out: its `outcome`, and optionally `status` and
        `lessons`.

        Use it once the result of a decision is known; reviewed outcomes feed
        cstp.getCalibration and cstp.checkDrift. Returns the decision's summary (id, title,
        category, confidence, stakes, status, outcome, date, recordedBy).
        """
        return await service.review_decision(params)

    @method(
        "cstp.getDecision",
        p.GetDecisionParams,
        r.DecisionResult,
        examples=({"id": _ID},),
        weight=federation.record_weight,
    )
    async def get(params: p.GetDecisionParams, ctx: CallContext) -> r.DecisionResult:
        """Read one whole decision by `id`; with `peer`, a decision a peer service
        returned in a federated search (its `peer` field).

        Use it after a search, to read what was decided and why. Returns the full record:
        context, decision, reasons, tags, confidence, stakes, status, outcome and lessons,
        links to other decisions and the history of changes.
        """
        if params.peer is not None:
            return await federation.get_decision(params, ctx)
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
        """List decisions in date order, filtered, a page at a time.

        Use it to browse or export, not to search (cstp.queryDecisions ranks by meaning).
        Returns `decisions` (summaries: id, title, category, confidence, stakes, status,
        outcome, date) and a `nextCursor` to pass as `cursor` for the next page, null on
        the last.
        """
        return await service.list_decisions(params)

    @writes("cstp.updateDecision", p.UpdateDecisionParams, DecisionMetadata, examples=(_UPDATE,))
    async def update(params: p.UpdateDecisionParams, ctx: CallContext) -> DecisionMetadata:
        """Amend a decision: the fields in `changes`, with the `reason` for them.

        Use it when a recorded decision needs correcting or new links; every change is kept
        in its history (cstp.getDecision shows it). Returns the decision's summary as it now
        is.
        """
        return await service.update_decision(params, ctx.agent)

    delete_example = {"id": _ID, "reason": "Recorded twice by mistake."}

    @writes(
        "cstp.deleteDecision",
        p.DeleteDecisionParams,
        r.DeleteDecisionResult,
        examples=(delete_example,),
    )
    async def delete(params: p.DeleteDecisionParams, ctx: CallContext) -> r.DeleteDecisionResult:
        """Delete a decision and its links, giving a `reason`: your own decisions, or
        anyone's with the admin scope.

        Use it for a decision recorded by mistake; to correct one, use cstp.updateDecision.
        Returns the `id` and `deleted`.
        """
        return await service.delete_decision(params, ctx.agent, ctx.scopes)

    stats_examples: tuple[dict[str, Any], ...] = ({}, {"filters": {"category": "architecture"}})

    @method("cstp.getStats", p.GetStatsParams, r.StatsResult, examples=stats_examples)
    async def stats(params: p.GetStatsParams, ctx: CallContext) -> r.StatsResult:
        """Count decisions, optionally filtered: by month and outcome, by category, status
        and agent.

        Use it for an overview of what is recorded. Returns `decisions` (the total),
        `undated`, `byMonth`, `byCategory`, `byStatus` and `byAgent`.
        """
        return await service.get_stats(params)

    drift_example = {"recentDays": 30, "baselineDays": 180, "groupBy": "agent"}

    @method("cstp.checkDrift", p.CheckDriftParams, r.DriftResult, examples=(drift_example,))
    async def drift(params: p.CheckDriftParams, ctx: CallContext) -> r.DriftResult:
        """Find groups (by agent or category) whose calibration got worse: the Brier score
        of the last `recentDays` against the `baselineDays` before.

        Use it to spot who or what has become overconfident. Returns `groups`, each with
        its recent and baseline Brier score and decision counts, and `drifted` (true when
        the recent score is clearly worse).
        """
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
        """Measure how well stated confidence matched reviewed outcomes, optionally
        filtered.

        Use it to check whether confidence can be trusted before relying on it. Returns the
        `brierScore` (0 is perfect), reliability `bins` (mean confidence against success
        rate), and the score by category, agent and month.
        """
        return await service.get_calibration(params)

    return table(record, review, get, list_, calibration, update, delete, stats, drift)
