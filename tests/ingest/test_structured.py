"""Tests for YAML and JSON decision-record files."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from textwrap import dedent

import pytest

from a2a.errors import FileParseError
from a2a.ingest.structured import DEFAULT_REASON_TYPE, parse_structured, reason_from_string
from a2a.records import derive_id

SOURCE = "decisions/cache.yaml"

ONE_RECORD = dedent(
    """\
    id: cache-001
    title: Use Redis for caching
    category: architecture
    confidence: 0.8
    stakes: high
    status: decided
    date: 2024-05-01T09:30:00+02:00
    context: Page loads are slow.
    decision: Put Redis in front of the API.
    reasons:
      - type: analysis
        text: Benchmarks show 10x.
      - "pattern: worked for the search team"
      - Cheap to run
    tags: [performance, cache]
    source: somewhere/else.yaml
    """
)


def _utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def test_a_single_yaml_record_loads_every_field() -> None:
    records, warnings = parse_structured(ONE_RECORD, SOURCE, is_json=False)
    (record,) = records
    assert record.id == "cache-001"
    assert record.title == "Use Redis for caching"
    assert (record.category, record.confidence, record.stakes, record.status) == (
        "architecture",
        0.8,
        "high",
        "decided",
    )
    assert record.date == _utc(2024, 5, 1, 7, 30)
    assert record.context == "Page loads are slow."
    assert record.decision == "Put Redis in front of the API."
    assert [(r.type, r.text) for r in record.reasons] == [
        ("analysis", "Benchmarks show 10x."),
        ("pattern", "worked for the search team"),
        (DEFAULT_REASON_TYPE, "Cheap to run"),
    ]
    assert record.tags == ["performance", "cache"]
    assert record.source == SOURCE
    assert warnings == ["source 'somewhere/else.yaml' replaced by the file path"]


def test_missing_ids_are_derived_from_the_source_and_list_position() -> None:
    single, _ = parse_structured("title: A\n", SOURCE, is_json=False)
    listed, _ = parse_structured("- title: A\n- title: B\n", SOURCE, is_json=False)
    assert single[0].id == derive_id(SOURCE)
    assert [r.id for r in listed] == [derive_id(SOURCE, 0), derive_id(SOURCE, 1)]


def test_a_json_list_loads_with_the_same_rules() -> None:
    text = json.dumps([{"title": "A", "date": "2024-01-02"}, {"title": "B", "status": "rejected"}])
    records, warnings = parse_structured(text, "d.json", is_json=True)
    assert [(r.title, r.date, r.status) for r in records] == [
        ("A", _utc(2024, 1, 2), None),
        ("B", None, "rejected"),
    ]
    assert warnings == []


@pytest.mark.parametrize(
    ("date_line", "expected", "warning"),
    [
        pytest.param("date: 2024-01-02", _utc(2024, 1, 2), None, id="yaml-date-is-midnight-utc"),
        pytest.param("date: '2024-01-02'", _utc(2024, 1, 2), None, id="quoted-date-only"),
        pytest.param("date: 2024-01-02T10:00:00Z", _utc(2024, 1, 2, 10), None, id="yaml-timestamp"),
        pytest.param(
            "date: '2024-01-02T10:00:00-01:00'",
            _utc(2024, 1, 2, 11),
            None,
            id="rfc3339-string-offset",
        ),
        pytest.param(
            "date: 2024-01-02 10:00:00",
            _utc(2024, 1, 2, 10),
            "date 2024-01-02T10:00:00 has no UTC offset; read as UTC",
            id="naive",
        ),
    ],
)
def test_dates_in_records_become_utc(
    date_line: str, expected: datetime, warning: str | None
) -> None:
    records, warnings = parse_structured(f"title: A\n{date_line}\n", SOURCE, is_json=False)
    assert records[0].date == expected
    assert warnings == ([warning] if warning else [])


@pytest.mark.parametrize(
    ("status", "expected", "warning"),
    [
        pytest.param("decided", "decided", None, id="vocabulary"),
        pytest.param("Rejected", "rejected", None, id="vocabulary-any-case"),
        pytest.param("Accepted", "decided", "status 'Accepted' read as 'decided'", id="adr-word"),
        pytest.param(
            "Maybe", None, "status 'Maybe' not in vocabulary; stored as null", id="unknown"
        ),
    ],
)
def test_status_words_outside_the_vocabulary_are_mapped_or_nulled(
    status: str, expected: str | None, warning: str | None
) -> None:
    records, warnings = parse_structured(f"title: A\nstatus: {status}\n", SOURCE, is_json=False)
    assert records[0].status == expected
    assert warnings == ([warning] if warning else [])


def test_unknown_fields_are_ignored_with_a_warning() -> None:
    records, warnings = parse_structured("title: A\nowner: bob\n", SOURCE, is_json=False)
    assert records[0].title == "A"
    assert warnings == ["unknown field 'owner' ignored"]


def test_comma_separated_tags_and_a_single_reason_string_are_accepted() -> None:
    text = "title: A\ntags: a, b ,c\nreasons: 'analysis: it is faster'\n"
    records, _ = parse_structured(text, SOURCE, is_json=False)
    assert records[0].tags == ["a", "b", "c"]
    assert [(r.type, r.text) for r in records[0].reasons] == [("analysis", "it is faster")]


def test_a_list_with_one_invalid_item_keeps_the_others() -> None:
    text = dedent(
        """\
        - title: Good one
        - title: Bad confidence
          confidence: 1.5
        - title: Also good
        """
    )
    records, warnings = parse_structured(text, SOURCE, is_json=False)
    assert [r.title for r in records] == ["Good one", "Also good"]
    assert [r.id for r in records] == [derive_id(SOURCE, 0), derive_id(SOURCE, 2)]
    assert len(warnings) == 1
    assert warnings[0].startswith("item 1: confidence: ")
    assert warnings[0].endswith("; skipped")
    assert "http" not in warnings[0]


@pytest.mark.parametrize(
    ("item", "fragment"),
    [
        pytest.param("- 42", "item 0: expected a mapping of record fields, got int", id="scalar"),
        pytest.param("- {confidence: 0.5}", "item 0: title: Field required", id="no-title"),
        pytest.param("- {title: A, stakes: huge}", "item 0: stakes: Input should be", id="stakes"),
        pytest.param(
            "- {title: A, date: 02/01/2020}", "item 0: date: not an RFC 3339 date", id="date"
        ),
        pytest.param(
            "- {title: A, reasons: [{text: x}]}",
            "item 0: reasons.0.type: Field required",
            id="reason-type",
        ),
    ],
)
def test_a_file_with_nothing_valid_fails_naming_item_and_field(item: str, fragment: str) -> None:
    with pytest.raises(FileParseError) as caught:
        parse_structured(item, SOURCE, is_json=False)
    assert caught.value.path == SOURCE
    assert caught.value.reason.startswith("no valid records: ")
    assert fragment in caught.value.reason
    assert "errors.pydantic.dev" not in str(caught.value)


def test_an_invalid_single_record_fails_naming_the_field() -> None:
    with pytest.raises(FileParseError) as caught:
        parse_structured("title: A\nconfidence: high\n", SOURCE, is_json=False)
    assert caught.value.reason.startswith("confidence: Input should be a valid number")
    assert str(caught.value) == f"{SOURCE}: {caught.value.reason}"


@pytest.mark.parametrize(
    ("text", "is_json", "reason_start"),
    [
        pytest.param(
            "title: [unclosed\n", False, "invalid YAML at line 2, column 1", id="bad-yaml"
        ),
        pytest.param("title: a\n  - b: c\n", False, "invalid YAML at line 2", id="bad-indent"),
        pytest.param('{"title": "A",}', True, "invalid JSON at line 1, column 15", id="bad-json"),
        pytest.param(
            "", False, "expected a record mapping or a list of them, got empty document", id="empty"
        ),
        pytest.param(
            "just text\n",
            False,
            "expected a record mapping or a list of them, got a str",
            id="scalar-document",
        ),
        pytest.param("[]", True, "no valid records: the list is empty", id="empty-list"),
    ],
)
def test_unparseable_files_raise_parse_error(text: str, is_json: bool, reason_start: str) -> None:
    with pytest.raises(FileParseError) as caught:
        parse_structured(text, SOURCE, is_json=is_json)
    assert caught.value.reason.startswith(reason_start)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("pattern: seen it before", ("pattern", "seen it before"), id="typed"),
        pytest.param("Analysis:  numbers agree", ("analysis", "numbers agree"), id="case-folded"),
        pytest.param("plain reason", (DEFAULT_REASON_TYPE, "plain reason"), id="bare"),
        pytest.param(
            "see https://x.org/a",
            (DEFAULT_REASON_TYPE, "see https://x.org/a"),
            id="url-is-not-a-type",
        ),
        pytest.param(
            "two words: no type",
            (DEFAULT_REASON_TYPE, "two words: no type"),
            id="multi-word-prefix-is-not-a-type",
        ),
    ],
)
def test_reason_strings_split_an_optional_type_prefix(text: str, expected: tuple[str, str]) -> None:
    assert reason_from_string(text) == {"type": expected[0], "text": expected[1]}
