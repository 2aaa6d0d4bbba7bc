"""The decision methods of the method table: thin handlers over DecisionService."""

from __future__ import annotations

from typing import Any

from a2a.decisions.params import (
    CheckDriftParams,
    DeleteDecisionParams,
    GetCalibrationParams,
    GetDecisionParams,
    GetStatsParams,
    ListDecisionsParams,
    RecordDecisionParams,
    ReviewDecisionParams,
    UpdateDecisionParams,
)
from a2a.decisions.results import (
    CalibrationResult,
    DecisionResult,
    DeleteDecisionResult,
    DriftResult,
    ListDecisionsResult,
    RecordDecisionResult,
    StatsResult,
)
from a2a.decisions.service import DecisionService
from a2a.index.staleness import with_stale_mark
from a2a.query.results import DecisionMetadata
from a2a.rpc import protocol
from a2a.rpc.methods import CallContext, Method

#: What a decision method can answer besides its result (CONTRACT.md); a write method can
#: also answer -32004 (the token lacks the `write` scope).
READ_ERRORS = (
    protocol.INVALID_PARAMS,
    protocol.UNAUTHORIZED,
    protocol.RATE_LIMITED,
    protocol.STORE_UNAVAILABLE,
    protocol.SATURATED,
)
WRITE_ERRORS = (*READ_ERRORS, protocol.FORBIDDEN)

_EXAMPLE_DECISION = {
    "id": "dec-2026-02-invoices-db",
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


def decision_methods(service: DecisionService) -> dict[str, Method]:
    """name -> Method for recordDecision, reviewDecision, updateDecision, deleteDecision
    (scope write; admin to delete another agent's decision), getDecision, listDecisions,
    getCalibration, getStats and checkDrift (scope read).
    """

    async def record_decision(params: RecordDecisionParams, ctx: CallContext) -> dict[str, Any]:
        return (await service.record_decision(params, ctx.agent)).to_wire()

    async def review_decision(params: ReviewDecisionParams, ctx: CallContext) -> dict[str, Any]:
        return (await service.review_decision(params)).to_wire()

    async def get_decision(params: GetDecisionParams, ctx: CallContext) -> dict[str, Any]:
        return (await service.get_decision(params)).to_wire()

    async def list_decisions(params: ListDecisionsParams, ctx: CallContext) -> dict[str, Any]:
        return (await service.list_decisions(params)).to_wire()

    async def get_calibration(params: GetCalibrationParams, ctx: CallContext) -> dict[str, Any]:
        return (await service.get_calibration(params)).to_wire()

    async def update_decision(params: UpdateDecisionParams, ctx: CallContext) -> dict[str, Any]:
        return (await service.update_decision(params, ctx.agent)).to_wire()

    async def delete_decision(params: DeleteDecisionParams, ctx: CallContext) -> dict[str, Any]:
        return (await service.delete_decision(params, ctx.agent, ctx.scopes)).to_wire()

    async def get_stats(params: GetStatsParams, ctx: CallContext) -> dict[str, Any]:
        return (await service.get_stats(params)).to_wire()

    async def check_drift(params: CheckDriftParams, ctx: CallContext) -> dict[str, Any]:
        return (await service.check_drift(params)).to_wire()

    methods = [
        Method(
            name="cstp.recordDecision",
            params_model=RecordDecisionParams,
            handler=record_decision,
            summary="Record a decision; durable and searchable when the answer arrives.",
            result_schema=RecordDecisionResult.model_json_schema(by_alias=True),
            errors=WRITE_ERRORS,
            examples=({"decision": _EXAMPLE_DECISION},),
            scope="write",
        ),
        Method(
            name="cstp.reviewDecision",
            params_model=ReviewDecisionParams,
            handler=review_decision,
            summary="Report how a decision turned out: outcome, status, lessons.",
            result_schema=DecisionMetadata.model_json_schema(by_alias=True),
            errors=WRITE_ERRORS,
            examples=(
                {
                    "id": "dec-2026-02-invoices-db",
                    "outcome": "success",
                    "lessons": "Replication lag peaked at 4 s; the switch took 90 s.",
                },
            ),
            scope="write",
        ),
        Method(
            name="cstp.getDecision",
            params_model=GetDecisionParams,
            handler=get_decision,
            summary="One whole decision record by id: context, decision, reasons, review.",
            result_schema=DecisionResult.model_json_schema(by_alias=True),
            errors=READ_ERRORS,
            examples=({"id": "dec-2026-02-invoices-db"},),
        ),
        Method(
            name="cstp.listDecisions",
            params_model=ListDecisionsParams,
            handler=with_stale_mark(list_decisions),
            summary="Decisions in date order, filtered, a page at a time (keyset cursor).",
            result_schema=ListDecisionsResult.model_json_schema(by_alias=True),
            errors=READ_ERRORS,
            examples=({"filters": {"category": "architecture"}, "order": "dateDesc", "limit": 20},),
        ),
        Method(
            name="cstp.getCalibration",
            params_model=GetCalibrationParams,
            handler=with_stale_mark(get_calibration),
            tenancy="many",
            summary="How well confidence matched outcomes: Brier score, reliability bins.",
            result_schema=CalibrationResult.model_json_schema(by_alias=True),
            errors=READ_ERRORS,
            examples=({"filters": {"stakes": ["high", "critical"]}, "bins": 5},),
        ),
        Method(
            name="cstp.updateDecision",
            params_model=UpdateDecisionParams,
            handler=update_decision,
            summary="Amend a decision; every change is kept in its history.",
            result_schema=DecisionMetadata.model_json_schema(by_alias=True),
            errors=WRITE_ERRORS,
            examples=(
                {
                    "id": "dec-2026-02-invoices-db",
                    "changes": {"confidence": 0.7, "relatedTo": ["dec-2026-01-cdc"]},
                    "reason": "Replication lag measured in staging was higher than assumed.",
                },
            ),
            scope="write",
        ),
        Method(
            name="cstp.deleteDecision",
            params_model=DeleteDecisionParams,
            handler=delete_decision,
            summary="Delete a decision and its links (your own; anyone's with scope admin).",
            result_schema=DeleteDecisionResult.model_json_schema(by_alias=True),
            errors=WRITE_ERRORS,
            examples=({"id": "dec-2026-02-invoices-db", "reason": "Recorded twice by mistake."},),
            scope="write",
        ),
        Method(
            name="cstp.getStats",
            params_model=GetStatsParams,
            handler=get_stats,
            summary="Decision counts by month x outcome, category, status and agent.",
            result_schema=StatsResult.model_json_schema(by_alias=True),
            errors=READ_ERRORS,
            examples=({}, {"filters": {"category": "architecture"}}),
        ),
        Method(
            name="cstp.checkDrift",
            params_model=CheckDriftParams,
            handler=check_drift,
            summary="Groups whose recent Brier score got worse than their baseline.",
            result_schema=DriftResult.model_json_schema(by_alias=True),
            errors=READ_ERRORS,
            examples=({"recentDays": 30, "baselineDays": 180, "groupBy": "agent"},),
        ),
    ]
    return {method.name: method for method in methods}
