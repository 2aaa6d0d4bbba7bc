"""Tests for mapping ADR status words onto the record vocabulary."""

from __future__ import annotations

import pytest

from a2a.ingest.status import STATUS_WORDS, map_status
from a2a.records import STATUSES


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param("Accepted", "decided", id="accepted"),
        pytest.param("accepted.", "decided", id="lowercase-trailing-dot"),
        pytest.param("✅ Accepted", "decided", id="emoji"),
        pytest.param("**Approved**", "decided", id="bold"),
        pytest.param("`Rejected`", "rejected", id="code-span"),
        pytest.param("Agreed", "decided", id="agreed"),
        pytest.param("Adopted", "decided", id="adopted"),
        pytest.param("Done", "decided", id="done"),
        pytest.param("Implemented", "decided", id="implemented"),
        pytest.param("Accepted (2020-01-02)", "decided", id="trailing-date"),
        pytest.param("Accepted on 2020-01-02", "decided", id="accepted-on-date"),
        pytest.param("PROPOSED", "proposed", id="upper-case"),
        pytest.param("🤔 Proposed", "proposed", id="thinking-emoji"),
        pytest.param("Draft", "proposed", id="draft"),
        pytest.param("Open", "proposed", id="open"),
        pytest.param("In progress", "proposed", id="in-progress"),
        pytest.param("in-progress", "proposed", id="in-progress-hyphen"),
        pytest.param("Under Review", "proposed", id="under-review"),
        pytest.param("In Review", "proposed", id="in-review"),
        pytest.param("Superseded", "superseded", id="superseded"),
        pytest.param(
            "⌛️ Superseded by [036. Multi-cluster](036-multi-cluster.md)",
            "superseded",
            id="superseded-by-link",
        ),
        pytest.param("[Superseded](0016.md) by ADR 16", "superseded", id="status-inside-link"),
        pytest.param("Replaced by ADR 9", "superseded", id="replaced-by"),
        pytest.param("Deprecated (no superseding ADR)", "deprecated", id="deprecated"),
        pytest.param("Retired", "deprecated", id="retired"),
        pytest.param("Obsolete", "deprecated", id="obsolete"),
        pytest.param("❌ Rejected (see [019](019.md))", "rejected", id="rejected-cross-emoji"),
        pytest.param("Declined", "rejected", id="declined"),
        pytest.param("Abandoned", "rejected", id="abandoned"),
        pytest.param("Withdrawn", "rejected", id="withdrawn"),
        pytest.param("Pending", "pending", id="pending"),
        pytest.param("Pending review", "pending", id="pending-review"),
        pytest.param("on hold", "pending", id="on-hold"),
    ],
)
def test_known_status_words_map_onto_the_vocabulary(raw: str, expected: str) -> None:
    assert map_status(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("🤔 Incomplete", id="incomplete"),
        pytest.param("Partly superseded", id="partly-superseded"),
        pytest.param("Accepted or Rejected", id="unfilled-template-choice"),
        pytest.param("Amended by [17. Terraform Data Structure](0017.md)", id="amended-by"),
        pytest.param("Note that this ADR was never implemented.", id="prose"),
        pytest.param("", id="empty"),
        pytest.param("✅", id="emoji-only"),
        pytest.param("Accepteded", id="not-a-whole-word"),
    ],
)
def test_unknown_status_text_maps_to_none(raw: str) -> None:
    assert map_status(raw) is None


def test_every_table_entry_names_a_vocabulary_status() -> None:
    assert set(STATUS_WORDS.values()) <= set(STATUSES)
