"""The decision calls of the clients: record, review, update, delete, get, list (with
paging), calibration, stats and drift."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import Any

from a2a.decisions.results import (
    CalibrationResult,
    DecisionResult,
    DeleteDecisionResult,
    DriftResult,
    ListDecisionsResult,
    RecordDecisionResult,
    StatsResult,
)
from a2a.records.summary import DecisionMetadata


def _given(**params: Any) -> dict[str, Any]:
    """Params by wire name; those left at None are not sent (the service's defaults)."""
    return {name: value for name, value in params.items() if value is not None}


def review_params(
    decision_id: str,
    outcome: str,
    status: str | None,
    lessons: str | None,
    reviewed_at: str | None,
) -> dict[str, Any]:
    """cstp.reviewDecision params by wire name."""
    return _given(
        id=decision_id, outcome=outcome, status=status, lessons=lessons, reviewedAt=reviewed_at
    )


def list_params(
    filters: dict[str, Any] | None, order: str | None, limit: int | None, cursor: str | None
) -> dict[str, Any]:
    """cstp.listDecisions params by wire name."""
    return _given(filters=filters or None, order=order, limit=limit, cursor=cursor)


def drift_params(
    recent_days: int | None,
    baseline_days: int | None,
    group_by: str | None,
    filters: dict[str, Any] | None,
) -> dict[str, Any]:
    """cstp.checkDrift params by wire name."""
    return _given(
        recentDays=recent_days,
        baselineDays=baseline_days,
        groupBy=group_by,
        filters=filters or None,
    )


class DecisionCalls:
    """The decision methods of CSTPClient; each raises the CSTPError subclass of its code."""

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        raise NotImplementedError

    def record_decision(self, decision: dict[str, Any]) -> RecordDecisionResult:
        """cstp.recordDecision (scope write): `decision` in wire form (`{"title": ...}`).

        `created` is false when an identical decision with that id was already stored.
        """
        result = self.call("cstp.recordDecision", {"decision": decision})
        return RecordDecisionResult.model_validate(result)

    def review_decision(
        self,
        decision_id: str,
        outcome: str,
        *,
        status: str | None = None,
        lessons: str | None = None,
        reviewed_at: str | None = None,
    ) -> DecisionMetadata:
        """cstp.reviewDecision (scope write): the decision's summary after the review."""
        params = review_params(decision_id, outcome, status, lessons, reviewed_at)
        return DecisionMetadata.model_validate(self.call("cstp.reviewDecision", params))

    def get_decision(self, decision_id: str, *, peer: str | None = None) -> DecisionResult:
        """cstp.getDecision: the whole record; with `peer` (a decision's `peer` in a
        federated answer) that peer service's record, its `peer` set. A peer that does not
        answer raises StoreUnavailableError (-32003, `data` {"peer": name})."""
        return DecisionResult.model_validate(
            self.call("cstp.getDecision", _given(id=decision_id, peer=peer))
        )

    def list_decisions(
        self,
        filters: dict[str, Any] | None = None,
        *,
        order: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> ListDecisionsResult:
        """cstp.listDecisions: one page; pass its `next_cursor` back for the next one."""
        params = list_params(filters, order, limit, cursor)
        return ListDecisionsResult.model_validate(self.call("cstp.listDecisions", params))

    def iter_decisions(
        self,
        filters: dict[str, Any] | None = None,
        *,
        order: str | None = None,
        limit: int | None = None,
    ) -> Iterator[DecisionMetadata]:
        """Every decision passing `filters`, page by page (`limit` per page)."""
        cursor = None
        while True:
            page = self.list_decisions(filters, order=order, limit=limit, cursor=cursor)
            yield from page.decisions
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def get_calibration(
        self, filters: dict[str, Any] | None = None, *, bins: int | None = None
    ) -> CalibrationResult:
        """cstp.getCalibration: Brier score, reliability bins and per-category scores."""
        params = _given(filters=filters or None, bins=bins)
        return CalibrationResult.model_validate(self.call("cstp.getCalibration", params))

    def update_decision(
        self, decision_id: str, changes: dict[str, Any], reason: str
    ) -> DecisionMetadata:
        """cstp.updateDecision (scope write): `changes` in wire form (`{"confidence": 0.6}`),
        kept in the decision's history with `reason`; the summary after the change."""
        params = {"id": decision_id, "changes": changes, "reason": reason}
        return DecisionMetadata.model_validate(self.call("cstp.updateDecision", params))

    def delete_decision(self, decision_id: str, reason: str) -> DeleteDecisionResult:
        """cstp.deleteDecision (scope write for your own decisions, admin for anyone's)."""
        params = {"id": decision_id, "reason": reason}
        return DeleteDecisionResult.model_validate(self.call("cstp.deleteDecision", params))

    def get_stats(self, filters: dict[str, Any] | None = None) -> StatsResult:
        """cstp.getStats: counts by month x outcome, category, status and agent."""
        return StatsResult.model_validate(
            self.call("cstp.getStats", _given(filters=filters or None))
        )

    def check_drift(
        self,
        *,
        recent_days: int | None = None,
        baseline_days: int | None = None,
        group_by: str | None = None,
        filters: dict[str, Any] | None = None,
    ) -> DriftResult:
        """cstp.checkDrift: recent against baseline Brier score per category or agent."""
        params = drift_params(recent_days, baseline_days, group_by, filters)
        return DriftResult.model_validate(self.call("cstp.checkDrift", params))


class AsyncDecisionCalls:
    """The decision methods of AsyncCSTPClient: the same calls as DecisionCalls, awaited."""

    def call(self, method: str, params: dict[str, Any] | None = None) -> Awaitable[Any]:
        raise NotImplementedError

    async def record_decision(self, decision: dict[str, Any]) -> RecordDecisionResult:
        """See DecisionCalls.record_decision."""
        result = await self.call("cstp.recordDecision", {"decision": decision})
        return RecordDecisionResult.model_validate(result)

    async def review_decision(
        self,
        decision_id: str,
        outcome: str,
        *,
        status: str | None = None,
        lessons: str | None = None,
        reviewed_at: str | None = None,
    ) -> DecisionMetadata:
        """See DecisionCalls.review_decision."""
        params = review_params(decision_id, outcome, status, lessons, reviewed_at)
        return DecisionMetadata.model_validate(await self.call("cstp.reviewDecision", params))

    async def get_decision(self, decision_id: str, *, peer: str | None = None) -> DecisionResult:
        """See DecisionCalls.get_decision."""
        result = await self.call("cstp.getDecision", _given(id=decision_id, peer=peer))
        return DecisionResult.model_validate(result)

    async def list_decisions(
        self,
        filters: dict[str, Any] | None = None,
        *,
        order: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> ListDecisionsResult:
        """See DecisionCalls.list_decisions."""
        params = list_params(filters, order, limit, cursor)
        return ListDecisionsResult.model_validate(await self.call("cstp.listDecisions", params))

    async def iter_decisions(
        self,
        filters: dict[str, Any] | None = None,
        *,
        order: str | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[DecisionMetadata]:
        """See DecisionCalls.iter_decisions."""
        cursor = None
        while True:
            page = await self.list_decisions(filters, order=order, limit=limit, cursor=cursor)
            for decision in page.decisions:
                yield decision
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def get_calibration(
        self, filters: dict[str, Any] | None = None, *, bins: int | None = None
    ) -> CalibrationResult:
        """See DecisionCalls.get_calibration."""
        params = _given(filters=filters or None, bins=bins)
        return CalibrationResult.model_validate(await self.call("cstp.getCalibration", params))

    async def update_decision(
        self, decision_id: str, changes: dict[str, Any], reason: str
    ) -> DecisionMetadata:
        """See DecisionCalls.update_decision."""
        params = {"id": decision_id, "changes": changes, "reason": reason}
        return DecisionMetadata.model_validate(await self.call("cstp.updateDecision", params))

    async def delete_decision(self, decision_id: str, reason: str) -> DeleteDecisionResult:
        """See DecisionCalls.delete_decision."""
        params = {"id": decision_id, "reason": reason}
        return DeleteDecisionResult.model_validate(await self.call("cstp.deleteDecision", params))

    async def get_stats(self, filters: dict[str, Any] | None = None) -> StatsResult:
        """See DecisionCalls.get_stats."""
        result = await self.call("cstp.getStats", _given(filters=filters or None))
        return StatsResult.model_validate(result)

    async def check_drift(
        self,
        *,
        recent_days: int | None = None,
        baseline_days: int | None = None,
        group_by: str | None = None,
        filters: dict[str, Any] | None = None,
    ) -> DriftResult:
        """See DecisionCalls.check_drift."""
        params = drift_params(recent_days, baseline_days, group_by, filters)
        return DriftResult.model_validate(await self.call("cstp.checkDrift", params))
