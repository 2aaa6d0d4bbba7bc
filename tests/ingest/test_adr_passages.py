"""An ADR split into passages (title-level sections) by the importer's section scanner."""

from __future__ import annotations

from a2a.ingest.markdown_adr import adr_passages

NYGARD = """# 12. Use Kafka for events

Date: 2024-05-01

## Status

Accepted

## Context

Services need events.

### Load

20k msg/s at peak.

## Decision

Kafka, three brokers.

```
## not a heading inside a fence
```
"""


def test_each_top_level_section_is_a_passage_with_its_subsections() -> None:
    assert adr_passages(NYGARD) == [
        ("", "Date: 2024-05-01"),
        ("Status", "Accepted"),
        ("Context", "Services need events.\n\n### Load\n\n20k msg/s at peak."),
        ("Decision", "Kafka, three brokers.\n\n```\n## not a heading inside a fence\n```"),
    ]


def test_front_matter_and_title_are_not_passages() -> None:
    text = (
        "---\nstatus: accepted\ndate: 2024-01-02\n---\n# Title\n\n## Context and Problem\n\nWhy.\n"
    )
    assert adr_passages(text) == [("Context and Problem", "Why.")]


def test_a_file_without_sections_is_one_passage_and_an_empty_one_none() -> None:
    assert adr_passages("# Only a title\n\nSome text.\n") == [("", "Some text.")]
    assert adr_passages("") == []
