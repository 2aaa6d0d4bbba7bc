"""Tests for parsing one Markdown ADR into a DecisionRecord."""

from __future__ import annotations

from datetime import UTC, datetime
from textwrap import dedent

import pytest

from a2a.ingest.markdown_adr import (
    MAX_REASON_CHARS,
    clean_title,
    humanise_file_name,
    normalise_heading,
    parse_adr,
)
from a2a.records import DecisionRecord, derive_id

NYGARD = dedent(
    """\
    # 12. Use PostgreSQL for storage

    Date: 2019-02-01

    ## Status

    Accepted

    ## Context

    We need a relational store.

    ## Decision

    We will use **PostgreSQL** 11.

    ## Consequences

    We must run backups.
    """
)

MADR = dedent(
    """\
    ---
    status: accepted
    date: 2021-03-02
    tags: [storage, database]
    ---
    # Use Markdown Architectural Decision Records

    ## Context and Problem Statement

    Which format should records follow?

    ## Considered Options

    * MADR
    * Nygard

    ## Decision Outcome

    Chosen option: "MADR".

    ## Pros and Cons of the Options

    * Good, because lean.
    """
)

LOG4BRAINS = dedent(
    """\
    # Use the ADR number as its unique ID

    - Status: superseded by [20201016-use-the-adr-slug](20201016-use-the-adr-slug.md)
    - Date: 2020-09-26

    ## Context and Problem Statement

    IDs must be stable.

    ## Decision Outcome

    Use the number.
    """
)


def _parse(text: str, source: str = "team/0001-x.md") -> tuple[DecisionRecord, list[str]]:
    return parse_adr(text, source)


def _utc(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def test_a_nygard_adr_maps_every_section() -> None:
    record, warnings = _parse(NYGARD)
    assert record.title == "Use PostgreSQL for storage"
    assert record.status == "decided"
    assert record.date == _utc(2019, 2, 1)
    assert record.context == "We need a relational store."
    assert record.decision == "We will use **PostgreSQL** 11."
    assert [(r.type, r.text) for r in record.reasons] == [("consequence", "We must run backups.")]
    assert (record.outcome, record.category, record.confidence, record.stakes) == (
        None,
        None,
        None,
        None,
    )
    assert record.tags == []
    assert warnings == []


def test_id_and_source_come_from_the_relative_path() -> None:
    record, _ = _parse(NYGARD, "alphagov__govuk-aws/0018-use-rds.md")
    assert record.source == "alphagov__govuk-aws/0018-use-rds.md"
    assert record.id == derive_id("alphagov__govuk-aws/0018-use-rds.md")


def test_a_madr_adr_reads_front_matter_and_madr_sections() -> None:
    record, warnings = _parse(MADR)
    assert record.title == "Use Markdown Architectural Decision Records"
    assert record.status == "decided"
    assert record.date == _utc(2021, 3, 2)
    assert record.tags == ["storage", "database"]
    assert record.context == "Which format should records follow?"
    assert record.decision == 'Chosen option: "MADR".'
    assert [(r.type, r.text) for r in record.reasons] == [("alternative", "* MADR\n* Nygard")]
    assert warnings == []


def test_a_log4brains_adr_reads_status_and_date_bullets() -> None:
    record, _ = _parse(LOG4BRAINS)
    assert record.status == "superseded"
    assert record.date == _utc(2020, 9, 26)
    assert record.decision == "Use the number."


@pytest.mark.parametrize(
    ("status_block", "expected"),
    [
        pytest.param("## Status\n\n✅ Accepted\n", "decided", id="emoji-under-heading"),
        pytest.param("## Status\n\n> Accepted\n", "decided", id="blockquote"),
        pytest.param("## Status\n\n**Rejected**\n", "rejected", id="bold"),
        pytest.param(
            "## Status\nSuperseded by [ADR 16](0016-x.md)\n", "superseded", id="superseded-by-link"
        ),
        pytest.param("### 2. Status:\n\nProposed\n", "proposed", id="numbered-level-3-heading"),
        pytest.param("# Status\n\nDeprecated\n", "deprecated", id="level-1-section"),
        pytest.param("Status: Accepted\n", "decided", id="plain-label"),
        pytest.param("* Status: proposed\n", "proposed", id="asterisk-bullet"),
        pytest.param("**Status:** Pending\n", "pending", id="bold-label"),
        pytest.param("| Status | Accepted |\n| --- | --- |\n", "decided", id="table-row"),
    ],
)
def test_status_is_found_wherever_it_is_written(status_block: str, expected: str) -> None:
    text = f"# Title\n\n{status_block}\n## Context\n\nSome context.\n"
    record, warnings = _parse(text)
    assert record.status == expected
    assert warnings == []


def test_front_matter_status_wins_over_the_body() -> None:
    text = "---\nstatus: rejected\n---\n# Title\n\n## Status\n\nAccepted\n"
    record, _ = _parse(text)
    assert record.status == "rejected"


def test_unknown_status_is_none_with_a_warning_naming_the_word() -> None:
    record, warnings = _parse("# Title\n\n## Status\n\n🤔 Incomplete\n")
    assert record.status is None
    assert warnings == ["status '🤔 Incomplete' not in vocabulary; stored as null"]


def test_missing_status_is_none_with_a_warning() -> None:
    record, warnings = _parse("# Title\n\nDate: 2020-01-01\n\n## Context\n\nText.\n")
    assert record.status is None
    assert warnings == ["no status found; stored as null"]


@pytest.mark.parametrize(
    ("date_block", "expected"),
    [
        pytest.param("Date: 2019-02-01", _utc(2019, 2, 1), id="iso-line"),
        pytest.param("Date: 05/02/2018", _utc(2018, 2, 5), id="dd-mm-yyyy"),
        pytest.param("Date 09/04/2018", _utc(2018, 4, 9), id="label-without-colon"),
        pytest.param("- Date: 03.05.2020", _utc(2020, 5, 3), id="dd-mm-yyyy-dots-bullet"),
        pytest.param("**Date:** 2020-02-21", _utc(2020, 2, 21), id="bold-label-colon-inside"),
        pytest.param("**Date**: 2023-08-14", _utc(2023, 8, 14), id="bold-label-colon-outside"),
        pytest.param("| Date | 2 March 2021 |", _utc(2021, 3, 2), id="table-row-month-name"),
        pytest.param("Introduced: 20220513", _utc(2022, 5, 13), id="introduced-compact"),
        pytest.param("## Date\n\n2020-07-01", _utc(2020, 7, 1), id="date-heading"),
        pytest.param("## Status\n\nAccepted on 2020-01-02", _utc(2020, 1, 2), id="next-to-status"),
        pytest.param(
            "## Status\n\nAccepted (2020-01-02)", _utc(2020, 1, 2), id="in-brackets-after-status"
        ),
    ],
)
def test_date_is_found_in_each_written_form(date_block: str, expected: datetime) -> None:
    record, _ = _parse(f"# Title\n\n{date_block}\n\n## Context\n\nText.\n")
    assert record.date == expected


@pytest.mark.parametrize(
    "date_block",
    [
        pytest.param("", id="absent"),
        pytest.param("Date: 2023-13-10", id="impossible-month"),
        pytest.param("Date: TBC", id="not-a-date"),
        pytest.param("- Date of FOI decision", id="date-as-a-word"),
    ],
)
def test_date_is_none_when_missing_or_impossible(date_block: str) -> None:
    record, _ = _parse(f"# Title\n\n{date_block}\n\n## Status\n\nAccepted\n")
    assert record.date is None


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        pytest.param("# 12. Use PostgreSQL", "Use PostgreSQL", id="number-dot"),
        pytest.param("# 2: Use local datastore", "Use local datastore", id="number-colon"),
        pytest.param("# 29 Kubernetes auditing", "Kubernetes auditing", id="number-space"),
        pytest.param("# 0003 - Use Kafka", "Use Kafka", id="padded-number-dash"),
        pytest.param("# ADR 12: Use Kafka", "Use Kafka", id="adr-space-number"),
        pytest.param("# ADR012: Store schemas", "Store schemas", id="adr-number"),
        pytest.param("# ADD037: Review apps", "Review apps", id="typo-add-number"),
        pytest.param(
            "# Architecture Decision Record: Configuration", "Configuration", id="arachne-prefix"
        ),
        pytest.param("#25. Automatic code merging", "Automatic code merging", id="no-space-hash"),
        pytest.param("# n. Django Templates", "Django Templates", id="placeholder-letter"),
        pytest.param("# Add Status Field", "Add Status Field", id="add-is-a-word"),
        pytest.param("# ADR link resolver", "ADR link resolver", id="adr-is-a-word"),
        pytest.param("# Default to Python 3.6", "Default to Python 3.6", id="version-kept"),
        pytest.param("# 2021 plans", "plans", id="numeric-prefix-stripped"),
    ],
)
def test_title_drops_numbering_but_keeps_words(heading: str, expected: str) -> None:
    record, _ = _parse(f"{heading}\n\n## Status\n\nAccepted\n")
    assert record.title == expected


def test_title_falls_back_to_a_level_two_heading_when_there_is_no_h1() -> None:
    record, _ = _parse("## 33. User permissions\n\n## Context\n\nText.\n")
    assert record.title == "User permissions"
    assert record.context == "Text."


def test_title_falls_back_to_front_matter_then_file_name() -> None:
    from_front, _ = _parse("---\ntitle: From front matter\n---\nBody only.\n")
    from_name, _ = _parse("Body only.\n", "team/0042-use-event_sourcing.md")
    assert from_front.title == "From front matter"
    assert from_name.title == "Use event sourcing"


@pytest.mark.parametrize(
    ("heading", "kind_text"),
    [
        pytest.param("## Context", "context", id="plain"),
        pytest.param("## 1. Context", "context", id="numbered"),
        pytest.param("### Context & Problem", "context", id="ampersand-level-3"),
        pytest.param("## Background", "context", id="background"),
        pytest.param("## Problem", "context", id="problem"),
        pytest.param("#### CONTEXT:", "context", id="upper-level-4-colon"),
    ],
)
def test_context_heading_variants_are_recognised(heading: str, kind_text: str) -> None:
    record, _ = _parse(f"# Title\n\n{heading}\n\n{kind_text} text\n\n## Decision\n\nDo it.\n")
    assert record.context == f"{kind_text} text"
    assert record.decision == "Do it."


def test_decision_headings_with_suffixes_are_recognised() -> None:
    record, _ = _parse(
        "# T\n\n## Decision: two datasets\n\nKeep both.\n\n## Decision Drivers\n\nX\n"
    )
    assert record.decision == "Keep both."


def test_decision_drivers_alone_is_not_the_decision() -> None:
    record, _ = _parse("# T\n\n## Decision Drivers\n\n* Cost\n")
    assert record.decision == "## Decision Drivers\n\n* Cost"


def test_a_section_keeps_its_subsections_as_markdown() -> None:
    text = "# T\n\n## Context\n\nIntro.\n\n### Detail\n\nMore.\n\n## Decision\n\nGo.\n"
    record, _ = _parse(text)
    assert record.context == "Intro.\n\n### Detail\n\nMore."


def test_headings_inside_code_fences_are_ignored() -> None:
    text = "# T\n\n## Context\n\n```yaml\n# Decision\n## Status\n```\n\n## Decision\n\nGo.\n"
    record, _ = _parse(text)
    assert record.context == "```yaml\n# Decision\n## Status\n```"
    assert record.decision == "Go."
    assert record.title == "T"


def test_html_comments_are_not_read_as_content() -> None:
    text = "<!-- vale off -->\n# T\n\n## Status\n\n<!-- Accepted or Rejected -->\nRejected\n"
    record, _ = _parse(text)
    assert record.status == "rejected"


def test_without_a_decision_section_the_rest_of_the_body_is_the_decision() -> None:
    text = "# 29 Security auditing\n\nDate: 2021-11-10\n\n**Link to this ADR: https://x**\n"
    record, _ = _parse(text)
    assert record.title == "Security auditing"
    assert record.date == _utc(2021, 11, 10)
    assert record.decision == "**Link to this ADR: https://x**"
    assert record.context is None


def test_the_fallback_body_leaves_out_sections_already_used() -> None:
    text = (
        "# T\n\nDate: 2020-01-01\n\n## Status\n\nAccepted\n\n## Context\n\nWhy.\n\n"
        "## Options\n\nA or B.\n\n## Notes\n\nSee the wiki."
    )
    record, _ = _parse(text)
    assert record.context == "Why."
    assert record.decision == "## Notes\n\nSee the wiki."
    assert [(r.type, r.text) for r in record.reasons] == [("alternative", "A or B.")]


def test_alternatives_heading_variants_become_an_alternative_reason() -> None:
    for heading in ("## Considered Options", "## Options considered", "## Alternatives"):
        record, _ = _parse(f"# T\n\n{heading}\n\n* A\n* B\n\n## Decision\n\nA.\n")
        assert [(r.type, r.text) for r in record.reasons] == [("alternative", "* A\n* B")]


def test_very_long_reason_text_is_cut_at_a_word() -> None:
    long_text = "word " * (MAX_REASON_CHARS // 2)
    record, _ = _parse(f"# T\n\n## Consequences\n\n{long_text}\n")
    text = record.reasons[0].text
    assert len(text) <= MAX_REASON_CHARS + 2
    assert text.endswith("word …")


def test_an_empty_file_still_gives_a_titled_record() -> None:
    record, warnings = _parse("", "team/0038-egress-control.md")
    assert record.title == "Egress control"
    assert record.decision is None
    assert warnings == ["no status found; stored as null"]


def test_invalid_front_matter_is_ignored_with_a_warning() -> None:
    record, warnings = _parse("---\nstatus: [unclosed\n---\n# T\n\n## Status\n\nAccepted\n")
    assert record.status == "decided"
    assert warnings == ["front matter is not valid YAML (ParserError); ignored"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("1. Context & Problem", "context problem", id="numbered-ampersand"),
        pytest.param("**Decision Outcome**", "decision outcome", id="bold"),
        pytest.param("a) Options:", "options", id="letter-numbering"),
    ],
)
def test_headings_normalise_for_matching(text: str, expected: str) -> None:
    assert normalise_heading(text) == expected


def test_clean_title_and_humanised_file_names() -> None:
    assert clean_title("**[ADR-7](x.md): Use S3**") == "Use S3"
    assert humanise_file_name("ADR006-use-rust-for-api.md") == "Use rust for api"
    assert humanise_file_name("20200926-use-the-adr-number.md") == "Use the adr number"
