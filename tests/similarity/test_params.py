"""cstp.findSimilarDecisions params: exactly one probe, queryDecisions' filters and limit."""

from __future__ import annotations

from typing import Any

import pytest

from a2a.app.methods import answer_methods
from a2a.similarity.params import FindSimilarDecisionsParams
from tests.conftest import invalid_fields

PROPOSAL = {"tags": ["postgres"], "category": "architecture", "stakes": "high"}


METHOD = answer_methods(source=None)["cstp.findSimilarDecisions"]  # type: ignore[arg-type]


def _validate(params: Any) -> FindSimilarDecisionsParams:
    result = METHOD.validate(params)
    assert isinstance(result, FindSimilarDecisionsParams)
    return result


def _bad_fields(params: Any) -> list[str]:
    return invalid_fields(METHOD, params)


@pytest.mark.parametrize(
    ("params", "fields"),
    [
        ({}, ["params"]),
        (None, ["params"]),
        ({"proposal": None, "decisionId": None}, ["params"]),
        ({"limit": 5}, ["params"]),
        ({"proposal": PROPOSAL, "decisionId": "d01"}, ["decisionId"]),
        (["d01"], ["params"]),
        ({"proposal": {}}, ["proposal"]),
        ({"proposal": {"tags": None, "category": None}}, ["proposal"]),
        ({"proposal": "postgres"}, ["proposal"]),
        ({"proposal": {"tags": "postgres"}}, ["proposal.tags"]),
        ({"proposal": {"tags": ["ok", 3]}}, ["proposal.tags[1]"]),
        ({"proposal": {"tags": ["ok", "  "]}}, ["proposal.tags[1]"]),
        ({"proposal": {"tags": ["x" * 201]}}, ["proposal.tags[0]"]),
        ({"proposal": {"tags": [f"t{i}" for i in range(65)]}}, ["proposal.tags"]),
        ({"proposal": {"category": 3}}, ["proposal.category"]),
        ({"proposal": {"category": " "}}, ["proposal.category"]),
        ({"proposal": {"stakes": "huge"}}, ["proposal.stakes"]),
        ({"proposal": {"stakes": ["high"]}}, ["proposal.stakes"]),
        ({"proposal": {"stakes": "high", "title": "x"}}, ["proposal.title"]),
        ({"proposal": {"stakes": "high", "text": "x"}}, ["proposal.text"]),
        ({"decisionId": ""}, ["decisionId"]),
        ({"decisionId": 1}, ["decisionId"]),
        ({"decisionId": "x" * 201}, ["decisionId"]),
        ({"decision_id": "d01"}, ["decision_id"]),
        ({"decisionId": "d01", "query": "x"}, ["query"]),
        ({"decisionId": "d01", "includeReasons": True}, ["includeReasons"]),
        ({"decisionId": "d01", "limit": 0}, ["limit"]),
        ({"decisionId": "d01", "limit": 51}, ["limit"]),
        ({"decisionId": "d01", "limit": True}, ["limit"]),
        ({"decisionId": "d01", "limit": "10"}, ["limit"]),
        ({"decisionId": "d01", "limit": 10.0}, ["limit"]),
        ({"decisionId": "d01", "filters": "security"}, ["filters"]),
        ({"decisionId": "d01", "filters": {"categry": "a"}}, ["filters.categry"]),
        ({"decisionId": "d01", "filters": {"stakes": []}}, ["filters.stakes"]),
        ({"decisionId": "d01", "filters": {"status": "open"}}, ["filters.status[0]"]),
        ({"decisionId": "d01", "filters": {"minConfidence": True}}, ["filters.minConfidence"]),
        (
            {"decisionId": "d01", "filters": {"minConfidence": 0.9, "maxConfidence": 0.1}},
            ["filters.maxConfidence"],
        ),
        (
            {"decisionId": "d01", "filters": {"dateAfter": "2026-01-01T00:00:00"}},
            ["filters.dateAfter"],
        ),
        (
            {"proposal": {"stakes": "huge"}, "limit": 0, "filters": {"category": 1}},
            ["proposal.stakes", "filters.category", "limit"],
        ),
    ],
    ids=[
        "neither-probe",
        "no-params",
        "both-null",
        "only-limit",
        "both-probes",
        "positional",
        "empty-proposal",
        "proposal-all-null",
        "proposal-not-object",
        "tags-bare-string",
        "tag-not-string",
        "tag-blank",
        "tag-too-long",
        "too-many-tags",
        "category-not-string",
        "category-blank",
        "stakes-unknown",
        "stakes-list",
        "proposal-unknown-key",
        "proposal-text-not-asked",
        "decision-id-empty",
        "decision-id-number",
        "decision-id-too-long",
        "snake-case-key",
        "query-not-a-param",
        "include-reasons-not-a-param",
        "limit-zero",
        "limit-above-50",
        "limit-bool",
        "limit-string",
        "limit-float",
        "filters-not-object",
        "filters-typo",
        "filters-empty-stakes",
        "filters-unknown-status",
        "filters-bool-confidence",
        "filters-min-above-max",
        "filters-naive-date",
        "every-bad-field-listed",
    ],
)
def test_bad_params_name_every_bad_field(params: Any, fields: list[str]) -> None:
    assert _bad_fields(params) == fields


@pytest.mark.parametrize(
    "params",
    [
        {"proposal": PROPOSAL},
        {"proposal": {"tags": []}},
        {"proposal": {"stakes": "low"}, "filters": None, "limit": 50},
        {"proposal": {"category": "security"}, "decisionId": None},
        {"decisionId": "d01", "filters": {"stakes": "low", "dateBefore": "2026-01-01"}},
        {"proposal": None, "decisionId": "d01", "limit": 1},
    ],
    ids=["full", "empty-tags", "limit-50", "null-decision-id", "filters", "null-proposal"],
)
def test_valid_params_are_accepted(params: dict[str, Any]) -> None:
    assert _validate(params).limit == params.get("limit", 10)
