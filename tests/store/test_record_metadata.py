"""Whole records in Chroma metadata: round trip, the hash a review keeps, old-format records."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from a2a.records import DecisionRecord
from a2a.store.metadata import decode, from_metadata, stored_of, to_metadata
from tests.conftest import SAMPLE
from tests.store.earlier_format import earlier_metadata

REVIEWED = SAMPLE[0].model_copy(
    update={
        "recorded_by": "planner",
        "recorded_at": datetime(2026, 2, 1, 9, 0, tzinfo=UTC),
        "lessons": "Went fine.",
        "reviewed_at": datetime(2026, 3, 1, 9, 0, tzinfo=UTC),
    }
)


def test_a_record_reads_back_whole_from_its_metadata() -> None:
    metadata = to_metadata(REVIEWED)
    stored = decode(REVIEWED.id, metadata)
    assert stored.recorded_by == "planner"
    assert (stored.recorded_at, stored.reviewed_at) == (
        "2026-02-01T09:00:00Z",
        "2026-03-01T09:00:00Z",
    )
    back = from_metadata(REVIEWED.id, metadata)
    assert back.model_dump() == REVIEWED.model_dump()
    assert back.origin_hash == REVIEWED.content_hash()


def test_service_fields_leave_the_content_hash_unchanged() -> None:
    assert REVIEWED.content_hash() == SAMPLE[0].content_hash()
    assert SAMPLE[0].model_copy(update={"outcome": "failure"}).content_hash() != (
        SAMPLE[0].content_hash()
    )


def test_a_stored_origin_hash_is_kept_over_the_records_own() -> None:
    reviewed = SAMPLE[0].model_copy(update={"outcome": "failure", "origin_hash": "from-file"})
    assert to_metadata(reviewed)["content_hash"] == "from-file"
    assert "origin_hash" not in to_metadata(reviewed)["record"]


def test_only_the_filtered_keys_the_hash_and_the_record_are_written() -> None:
    assert set(to_metadata(REVIEWED)) == {
        "category", "confidence", "stakes", "status", "date_epoch", "content_hash", "record",
    }  # fmt: skip
    assert set(to_metadata(DecisionRecord(id="bare", title="Bare"))) == {"content_hash", "record"}


@pytest.mark.parametrize(
    "record",
    [*SAMPLE, REVIEWED, DecisionRecord(id="bare", title="Bare")],
    ids=[*(r.id for r in SAMPLE), "reviewed", "bare"],
)
def test_fields_read_from_the_record_equal_those_the_earlier_format_wrote(
    record: DecisionRecord,
) -> None:
    metadata = to_metadata(record)
    assert decode(record.id, metadata) == decode(record.id, earlier_metadata(record))
    assert stored_of(record, metadata) == decode(record.id, metadata)


def test_a_record_stored_without_its_json_is_rebuilt_from_flat_fields() -> None:
    metadata = earlier_metadata(SAMPLE[0])
    del metadata["record"]
    back = from_metadata(SAMPLE[0].id, metadata)
    assert (back.title, back.category, back.date, back.tags) == (
        SAMPLE[0].title,
        "architecture",
        SAMPLE[0].date,
        ["postgres", "migration"],
    )
    assert [r.type for r in back.reasons] == ["pattern", "analysis"]
    assert back.context is None and back.origin_hash == SAMPLE[0].content_hash()


def test_json_of_another_id_is_not_trusted() -> None:
    metadata = to_metadata(DecisionRecord(id="a", title="A"))
    assert from_metadata("b", metadata).title == "A"  # flat fields, id from the store
    assert from_metadata("b", metadata).id == "b"
