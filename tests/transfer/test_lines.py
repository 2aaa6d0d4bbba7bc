"""A decision as one line of an export file and back (a2a.transfer.lines): the fields
cstp.getDecision returns, checked with recordDecision's rules and messages."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from a2a.decisions.params import RecordDecisionParams
from a2a.errors import ImportLineError
from a2a.records import Change, DecisionRecord, Reason
from a2a.rpc.methods import field_errors
from a2a.transfer.lines import MAX_LINE_BYTES, line_of, parse_line, record_of, wire_of

AT = datetime(2026, 3, 1, 12, 30, tzinfo=UTC)
LINKED = DecisionRecord(
    id="p2",
    title="Move invoices to Postgres 16",
    category="architecture",
    confidence=0.7,
    stakes="high",
    status="superseded",
    outcome="partial",
    date=AT,
    context="Version 12 is out of support.",
    decision="Upgrade in place.",
    reasons=[Reason(type="analysis", text="Support ends.")],
    tags=["postgres"],
    recorded_by="agent-a",
    recorded_at=AT,
    lessons="Test the extensions first.",
    reviewed_at=AT,
    history=[Change(at=AT, by="agent-a", reason="typo", changes={"title": ("Mvoe", "Move")})],
    supersedes=["p1"],
    superseded_by=["p0", "p3"],
    related_to=["d01"],
    related_from=["d02"],
)


def line(**fields: Any) -> bytes:
    base = json.loads(line_of(LINKED))
    return json.dumps({**base, **fields}).encode()


def reasons_of(raw: bytes) -> list[str]:
    with pytest.raises(ImportLineError) as caught:
        parse_line(raw, 7)
    assert caught.value.number == 7
    return caught.value.reasons


def test_a_line_is_what_get_decision_returns_without_the_tenant_and_reads_back_equal() -> None:
    raw = line_of(LINKED)
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1
    wire = json.loads(raw)
    assert "tenant" not in wire
    assert wire["links"] == {
        "supersedes": ["p1"],
        "supersededBy": ["p0", "p3"],
        "relatedTo": ["d01", "d02"],
    }
    assert wire["supersededBy"] == "p3"
    assert wire["history"] == [
        {
            "at": "2026-03-01T12:30:00Z",
            "by": "agent-a",
            "reason": "typo",
            "changes": {"title": ["Mvoe", "Move"]},
        }
    ]
    back = record_of(parse_line(raw, 1))
    assert wire_of(back) == wire
    assert line_of(back) == raw
    # getDecision shows one relatedTo list for both directions: kept on both sides.
    assert (back.related_to, back.related_from) == (["d01", "d02"], ["d01", "d02"])


def test_a_line_needs_only_an_id_and_a_title_and_takes_a_tenant_stamp() -> None:
    record = record_of(parse_line(b'{"id": "x1", "title": "T", "tenant": "acme"}\n', 1))
    assert (record.id, record.title, record.history, record.supersedes) == ("x1", "T", [], [])


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"{not json\n", ["line"]),
        (b"[1, 2]\n", ["line"]),
        (b'{"title": "no id"}\n', ["id"]),
        (line(confidence=2), ["confidence"]),
        (line(confidence="0.5"), ["confidence"]),
        (line(stakes="huge"), ["stakes"]),
        (line(date="2026-01-01"), ["date"]),
        (line(colour="red"), ["colour"]),
        (line(reasons=[{"type": "", "text": "x"}]), ["reasons[0].type"]),
        (
            line(history=[{"at": "yesterday", "by": None, "reason": "r", "changes": {}}]),
            ["history[0].at"],
        ),
        (
            line(
                links={"supersedes": ["p2"], "supersededBy": [], "relatedTo": []}, supersededBy=None
            ),
            ["links.supersedes[0]"],
        ),
        (
            line(links={"supersedes": [], "supersededBy": [], "relatedTo": ["a", "a"]}),
            ["links.relatedTo[1]", "supersededBy"],
        ),
        (line(supersededBy="p0"), ["supersededBy"]),
    ],
    ids=[
        "not-json",
        "not-an-object",
        "no-id",
        "confidence-over-1",
        "confidence-as-text",
        "unknown-stakes",
        "bare-date",
        "unknown-key",
        "empty-reason-type",
        "history-date",
        "links-to-itself",
        "listed-twice",
        "superseded-by-not-last",
    ],
)
def test_a_bad_line_names_each_bad_field(raw: bytes, expected: list[str]) -> None:
    assert [reason.split(":")[0] for reason in reasons_of(raw)] == expected


def record_decision_reasons(decision: dict[str, Any]) -> list[str]:
    """What cstp.recordDecision answers `decision` with: `field: reason` of its -32602."""
    with pytest.raises(ValidationError) as caught:
        RecordDecisionParams.model_validate({"decision": decision})
    return [f"{e.field.removeprefix('decision.')}: {e.reason}" for e in field_errors(caught.value)]


def test_a_decision_written_over_the_protocol_keeps_record_decisions_rules_and_messages() -> None:
    bad = {"title": "t" * 501, "outcome": "great", "tags": [" "], "context": "c" * 10_001}
    expected = record_decision_reasons({"id": "p 2", **bad})
    fields = ["id", "title", "outcome", "context", "tags[0]"]
    assert [reason.split(":")[0] for reason in expected] == fields
    assert reasons_of(line(id="p 2", **bad)) == expected
    too_many = [f"s{n}" for n in range(21)]
    [supersedes] = record_decision_reasons({"title": "t", "supersedes": too_many})
    links = {"supersedes": too_many, "supersededBy": [], "relatedTo": []}
    assert reasons_of(line(links=links, supersededBy=None)) == [f"links.{supersedes}"]


def test_a_record_indexed_from_a_file_keeps_the_looser_rules_of_files() -> None:
    raw = line(
        id="ADR 7/a", recordedBy=None, title="t" * 600, outcome="great", context="c" * 20_000
    )
    record = record_of(parse_line(raw, 1))
    assert (len(record.title), record.outcome, len(record.context or "")) == (600, "great", 20_000)


def test_a_line_longer_than_the_cap_is_bad_without_being_parsed() -> None:
    assert reasons_of(b"x" * MAX_LINE_BYTES) == [f"line: longer than {MAX_LINE_BYTES} bytes"]
