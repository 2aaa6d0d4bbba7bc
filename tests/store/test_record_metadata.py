"""Whole records in Chroma metadata: round trip, the hash a review keeps, old-format records."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from a2a.records import DecisionRecord
from a2a.store.metadata import decode, to_metadata
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
    back, whole = decode(REVIEWED.id, to_metadata(REVIEWED))
    assert whole and back.recorded_by == "planner"
    assert (back.recorded_at, back.reviewed_at) == (
        datetime(2026, 2, 1, 9, 0, tzinfo=UTC),
        datetime(2026, 3, 1, 9, 0, tzinfo=UTC),
    )
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
    back, whole = decode(record.id, metadata)
    assert whole and back.model_dump() == record.model_dump()


def test_a_record_stored_without_its_json_is_rebuilt_from_flat_fields() -> None:
    metadata = earlier_metadata(SAMPLE[0])
    del metadata["record"]
    back, whole = decode(SAMPLE[0].id, metadata)
    assert not whole
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
    back, whole = decode("b", metadata)
    assert not whole
    assert back.title == "A"  # flat fields, id from the store
    assert back.id == "b"
