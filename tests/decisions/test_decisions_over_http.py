"""Every decision method end to end: real uvicorn over HTTP, embedded store and Chroma server."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.decisions.wire import (
    READER_TOKEN,
    SCOPED_TOKENS,
    WRITER,
    call,
    error_fields,
    result,
    served,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=["embedded", "chroma-server"])
def url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp(request.param), request.param) as base:
        yield base


def full_decision(record_id: str, **changes: Any) -> dict[str, Any]:
    decision = {
        "id": record_id,
        "title": "Move the invoices database with a blue-green switch",
        "category": "architecture",
        "confidence": 0.8,
        "stakes": "high",
        "status": "decided",
        "outcome": "pending",
        "date": "2026-02-03T11:00:00+01:00",
        "context": "The invoices Postgres must move to a new cluster with no downtime.",
        "decision": "Replicate to the new cluster, then switch traffic in one step.",
        "reasons": [{"type": "analysis", "text": "Rollback is one DNS change."}],
        "tags": ["postgres", "migration"],
    }
    return {**decision, **changes}


def test_a_recorded_decision_reads_back_whole_with_writer_and_server_time(url: str) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    assert result(url, "cstp.recordDecision", {"decision": full_decision("rec-whole")}) == {
        "id": "rec-whole",
        "created": True,
    }
    record = result(url, "cstp.getDecision", {"id": "rec-whole"})
    recorded_at = datetime.fromisoformat(record.pop("recordedAt"))
    assert before <= recorded_at <= datetime.now(UTC) + timedelta(seconds=1)
    # As sent, the date in UTC, and the server's fields.
    assert record == {
        **full_decision("rec-whole"),
        "date": "2026-02-03T10:00:00Z",
        "source": None,
        "recordedBy": WRITER,
        "tenant": "default",
        "lessons": None,
        "reviewedAt": None,
        "supersededBy": None,
        "links": {"supersedes": [], "supersededBy": [], "relatedTo": []},
        "history": [],
    }


def test_defaults_are_status_decided_and_date_now(url: str) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    result(url, "cstp.recordDecision", {"decision": {"id": "rec-min", "title": "Minimal"}})
    record = result(url, "cstp.getDecision", {"id": "rec-min"})
    assert record["status"] == "decided"
    assert before <= datetime.fromisoformat(record["date"]) <= datetime.now(UTC)
    assert (record["reasons"], record["tags"], record["confidence"]) == ([], [], None)


def test_server_assigned_ids_carry_80_random_bits(url: str) -> None:
    ids = {
        result(url, "cstp.recordDecision", {"decision": {"title": "Same title"}})["id"]
        for _ in range(3)
    }
    assert len(ids) == 3
    assert all(re.fullmatch(r"dec-[0-9a-f]{20}", i) for i in ids)


def test_an_identical_retry_is_not_created_and_other_content_is_refused_on_decision_id(
    url: str,
) -> None:
    params = {"decision": {"id": "rec-retry", "title": "Retry me"}}
    assert result(url, "cstp.recordDecision", params)["created"] is True
    assert result(url, "cstp.recordDecision", params) == {"id": "rec-retry", "created": False}
    other = {"decision": {"id": "rec-retry", "title": "Something else"}}
    assert error_fields(call(url, "cstp.recordDecision", other)) == ["decision.id"]
    assert result(url, "cstp.getDecision", {"id": "rec-retry"})["title"] == "Retry me"


BAD_DECISIONS = [
    ({"date": "2026-02-03T10:00:00"}, ["decision.date"]),
    ({"date": "2026-02-03"}, ["decision.date"]),
    ({"confidence": 1.5}, ["decision.confidence"]),
    ({"confidence": "NaN"}, ["decision.confidence"]),
    ({"confidence": True}, ["decision.confidence"]),
    ({"outcome": "great"}, ["decision.outcome"]),
    ({"status": "done"}, ["decision.status"]),
    ({"stakes": "huge"}, ["decision.stakes"]),
    ({"tags": ["ok", 3]}, ["decision.tags[1]"]),
    ({"tags": "postgres"}, ["decision.tags"]),
    ({"reasons": [{"type": "analysis", "text": "r"}] * 21}, ["decision.reasons"]),
    ({"reasons": [{"type": "analysis", "why": "r"}]}, ["decision.reasons[0].why"]),
    ({"id": "a/b"}, ["decision.id"]),
    ({"id": "a b"}, ["decision.id"]),
    ({"id": "x" * 201}, ["decision.id"]),
    ({"title": ""}, ["decision.title"]),
    ({"title": "x" * 501}, ["decision.title"]),
    ({"recordedBy": "someone"}, ["decision.recordedBy"]),
    ({"recordedAt": "2026-02-03T10:00:00Z"}, ["decision.recordedAt"]),
    ({"confidence": 2, "outcome": "meh"}, ["decision.confidence", "decision.outcome"]),
]


@pytest.mark.parametrize(
    ("change", "fields"),
    BAD_DECISIONS,
    ids=[
        "naive-date",
        "bare-date",
        "confidence-1.5",
        "confidence-nan-string",
        "confidence-bool",
        "unknown-outcome",
        "unknown-status",
        "unknown-stakes",
        "non-string-tag",
        "tags-not-a-list",
        "21-reasons",
        "reason-unknown-key",
        "id-with-slash",
        "id-with-space",
        "id-too-long",
        "empty-title",
        "title-too-long",
        "caller-recordedBy",
        "caller-recordedAt",
        "two-bad-fields",
    ],
)
def test_bad_decisions_are_refused_naming_each_field_and_nothing_is_stored(
    url: str, change: dict[str, Any], fields: list[str]
) -> None:
    decision = {"id": "rec-bad", "title": "Bad input", **change}
    assert error_fields(call(url, "cstp.recordDecision", {"decision": decision})) == fields
    assert error_fields(call(url, "cstp.getDecision", {"id": "rec-bad"})) == ["id"]


def test_a_nan_literal_is_a_parse_error_and_nothing_is_stored(url: str) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"cstp.recordDecision","params":{"decision":'
    body += b'{"id":"rec-nan","title":"t","confidence":NaN}}}'
    answer = httpx.post(
        f"{url}/cstp",
        content=body,
        headers={"Authorization": f"Bearer {READER_TOKEN}", "Content-Type": "application/json"},
    ).json()
    assert answer["error"]["code"] == -32700
    assert error_fields(call(url, "cstp.getDecision", {"id": "rec-nan"})) == ["id"]


def test_a_decision_over_the_body_cap_gets_413_and_nothing_is_stored(url: str) -> None:
    decision = {"id": "rec-huge", "title": "Huge", "context": "x" * 1_100_000}
    response = httpx.post(
        f"{url}/cstp",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "cstp.recordDecision",
            "params": {"decision": decision},
        },
        headers={"Authorization": "Bearer writer-token-0123456789"},
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == -32600
    assert error_fields(call(url, "cstp.getDecision", {"id": "rec-huge"})) == ["id"]


@pytest.mark.skipif(not SCOPED_TOKENS, reason="scoped tokens arrive with the pipeline branch")
def test_a_read_token_cannot_record_and_nothing_is_stored(url: str) -> None:
    params = {"decision": {"id": "rec-forbidden", "title": "Not allowed"}}
    answer = call(url, "cstp.recordDecision", params, token=READER_TOKEN)
    assert answer["error"]["code"] == -32004
    assert answer["error"]["data"] == {"requiredScope": "write"}
    review = {"id": "rec-whole", "outcome": "success"}
    assert call(url, "cstp.reviewDecision", review, token=READER_TOKEN)["error"]["code"] == -32004
    assert error_fields(call(url, "cstp.getDecision", {"id": "rec-forbidden"})) == ["id"]


def test_a_review_sets_outcome_status_lessons_and_time(url: str) -> None:
    result(url, "cstp.recordDecision", {"decision": full_decision("rec-review")})
    summary = result(
        url,
        "cstp.reviewDecision",
        {
            "id": "rec-review",
            "outcome": "partial",
            "status": "superseded",
            "lessons": "Replication lag was the risk.",
            "reviewedAt": "2026-03-01T09:00:00-05:00",
        },
    )
    assert (summary["id"], summary["outcome"], summary["status"]) == (
        "rec-review",
        "partial",
        "superseded",
    )
    assert summary["recordedBy"] == WRITER and "distance" not in summary
    record = result(url, "cstp.getDecision", {"id": "rec-review"})
    assert (record["lessons"], record["reviewedAt"]) == (
        "Replication lag was the risk.",
        "2026-03-01T14:00:00Z",
    )
    assert record["context"] == full_decision("rec-review")["context"]
    # The review is not new content: the first recording's retry is still a retry.
    again = result(url, "cstp.recordDecision", {"decision": full_decision("rec-review")})
    assert again == {"id": "rec-review", "created": False}


def test_a_review_defaults_to_status_reviewed_at_server_time(url: str) -> None:
    result(url, "cstp.recordDecision", {"decision": {"id": "rec-review-2", "title": "T"}})
    summary = result(url, "cstp.reviewDecision", {"id": "rec-review-2", "outcome": "failure"})
    assert summary["status"] == "reviewed"
    record = result(url, "cstp.getDecision", {"id": "rec-review-2"})
    seconds = (datetime.now(UTC) - datetime.fromisoformat(record["reviewedAt"])).total_seconds()
    assert 0 <= seconds < 60


@pytest.mark.parametrize(
    ("params", "fields"),
    [
        ({"id": "no-such-decision", "outcome": "success"}, ["id"]),
        ({"id": "rec-whole", "outcome": "great"}, ["outcome"]),
        ({"id": "rec-whole"}, ["outcome"]),
        ({"id": "rec-whole", "outcome": "success", "status": "decided"}, ["status"]),
        ({"id": "rec-whole", "outcome": "success", "lessons": "x" * 4001}, ["lessons"]),
        ({"id": "rec-whole", "outcome": "success", "reviewedAt": "2026-03-01"}, ["reviewedAt"]),
        ({"id": "rec-whole", "outcome": "success", "reviewed_at": "x"}, ["reviewed_at"]),
    ],
    ids=["unknown-id", "unknown-outcome", "no-outcome", "status", "lessons", "date", "snake"],
)
def test_bad_reviews_are_refused_naming_the_field(
    url: str, params: dict[str, Any], fields: list[str]
) -> None:
    assert error_fields(call(url, "cstp.reviewDecision", params)) == fields


def test_get_of_an_unknown_id_is_refused_on_id(url: str) -> None:
    assert error_fields(call(url, "cstp.getDecision", {"id": "never-recorded"})) == ["id"]


def record_listing(url: str, category: str) -> None:
    dates = {
        "l1": "2026-01-01T00:00:00Z",
        "l2": "2026-01-03T00:00:00Z",
        "l3": "2026-01-02T00:00:00Z",
        "l4": "2026-01-02T00:00:00Z",
        "l5": "2026-01-05T00:00:00Z",
    }
    for suffix, date in dates.items():
        decision = {"id": f"{category}-{suffix}", "title": f"Listing {suffix}", "date": date}
        result(url, "cstp.recordDecision", {"decision": {**decision, "category": category}})


def walk(url: str, params: dict[str, Any]) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        answer = result(
            url, "cstp.listDecisions", {**params, **({"cursor": cursor} if cursor else {})}
        )
        pages.append([d["id"].rsplit("-", 1)[1] for d in answer["decisions"]])
        assert all("distance" not in d and "recordedBy" in d for d in answer["decisions"])
        cursor = answer["nextCursor"]
        if cursor is None:
            return pages


def test_list_pages_in_date_order_with_ties_by_id(url: str) -> None:
    record_listing(url, "listing")
    filters = {"category": "listing"}
    assert walk(url, {"filters": filters, "limit": 2}) == [["l5", "l2"], ["l3", "l4"], ["l1"]]
    ascending = walk(url, {"filters": filters, "limit": 3, "order": "dateAsc"})
    assert ascending == [["l1", "l3", "l4"], ["l2", "l5"]]


def test_a_decision_recorded_between_pages_never_repeats_or_skips_one(url: str) -> None:
    record_listing(url, "paging")
    params = {"filters": {"category": "paging"}, "limit": 2}
    first = result(url, "cstp.listDecisions", params)
    newer = {
        "id": "paging-l0",
        "title": "Newer",
        "category": "paging",
        "date": "2026-01-04T00:00:00Z",
    }
    result(url, "cstp.recordDecision", {"decision": newer})
    rest = walk(url, {**params, "cursor": first["nextCursor"]})
    seen = [d["id"] for d in first["decisions"]] + [f"paging-{i}" for page in rest for i in page]
    assert seen == ["paging-l5", "paging-l2", "paging-l3", "paging-l4", "paging-l1"]


@pytest.mark.parametrize(
    ("params", "fields"),
    [
        ({"cursor": "not-a-cursor"}, ["cursor"]),
        ({"limit": 0}, ["limit"]),
        ({"limit": 101}, ["limit"]),
        ({"order": "date"}, ["order"]),
        ({"filters": {"categry": "x"}}, ["filters.categry"]),
    ],
    ids=["foreign-cursor", "limit-0", "limit-101", "order", "filter-typo"],
)
def test_bad_list_params_are_refused_naming_the_field(
    url: str, params: dict[str, Any], fields: list[str]
) -> None:
    assert error_fields(call(url, "cstp.listDecisions", params)) == fields


def test_a_cursor_for_other_filters_is_refused_on_cursor(url: str) -> None:
    record_listing(url, "cursors")
    first = result(url, "cstp.listDecisions", {"filters": {"category": "cursors"}, "limit": 1})
    other = {"filters": {"category": "listing"}, "cursor": first["nextCursor"]}
    assert error_fields(call(url, "cstp.listDecisions", other)) == ["cursor"]


def test_calibration_scores_reviewed_decisions_by_hand(url: str) -> None:
    for number, (confidence, outcome) in enumerate(
        [(0.9, "success"), (0.2, "failure"), (0.5, "partial"), (1.0, "failure"), (0.7, "pending")]
    ):
        decision = {
            "id": f"cal-{number}",
            "title": f"Calibration {number}",
            "category": "calibration",
            "confidence": confidence,
            "outcome": outcome,
        }
        result(url, "cstp.recordDecision", {"decision": decision})
    answer = result(url, "cstp.getCalibration", {"filters": {"category": "calibration"}, "bins": 2})
    assert answer["decisions"] == 4
    assert answer["brierScore"] == pytest.approx(1.05 / 4)
    assert [(b["from"], b["to"], b["count"]) for b in answer["bins"]] == [
        (0.0, 0.5, 1),
        (0.5, 1.0, 3),
    ]
    assert answer["bins"][1]["successRate"] == pytest.approx(0.5)
    assert answer["byCategory"] == [
        {"category": "calibration", "decisions": 4, "brierScore": pytest.approx(1.05 / 4)}
    ]
    empty = result(url, "cstp.getCalibration", {"filters": {"category": "nothing-here"}})
    assert (empty["decisions"], empty["brierScore"], len(empty["bins"])) == (0, None, 5)
    assert error_fields(call(url, "cstp.getCalibration", {"bins": 1})) == ["bins"]


@pytest.mark.parametrize("mode", ["semantic", "keyword", "hybrid"])
def test_a_recorded_decision_is_found_by_the_next_query_in_every_mode(url: str, mode: str) -> None:
    record_id = f"fresh-{mode}"
    title = f"Adopt zanzibarish {mode} authorisation tuples for document sharing"
    result(url, "cstp.recordDecision", {"decision": {"id": record_id, "title": title}})
    query = {
        "query": f"zanzibarish {mode} authorisation tuples",
        "retrievalMode": mode,
        "limit": 50,
    }
    found = result(url, "cstp.queryDecisions", query, token=READER_TOKEN)["decisions"]
    assert record_id in [d["id"] for d in found]
    assert next(d for d in found if d["id"] == record_id)["recordedBy"] == WRITER


def test_discovery_and_the_agent_card_show_the_decision_methods(url: str) -> None:
    names = {
        "cstp.recordDecision",
        "cstp.reviewDecision",
        "cstp.getDecision",
        "cstp.listDecisions",
        "cstp.getCalibration",
    }
    document = result(url, "rpc.discover", {})
    assert names <= {m["name"] for m in document["methods"]}
    card = httpx.get(f"{url}/.well-known/agent-card.json").json()
    assert names <= {skill["id"] for skill in card["skills"]}
