"""StoredDecision: one typed record, the same from Chroma's metadata and from the index."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path

from a2a.records import DecisionRecord, Reason
from a2a.store.chroma import ChromaDecisionStore
from a2a.store.metadata import decode, record_of, to_metadata
from a2a.store.stored import StoredDecision
from tests.conftest import SAMPLE
from tests.index.helpers import index_of, write

FULL = SAMPLE[0].model_copy(
    update={
        "recorded_by": "planner",
        "recorded_at": datetime(2026, 2, 1, 9, 0, tzinfo=UTC),
        "reviewed_at": datetime(2026, 3, 1, 9, 0, tzinfo=UTC),
        "reasons": [Reason(type="analysis", text="a"), Reason(type="pattern", text="b")],
        "tags": ["kafka", "queue"],
    }
)


def test_decode_reads_every_field_to_metadata_writes() -> None:
    stored = decode(FULL.id, to_metadata(FULL))
    assert stored.summary == {
        "title": FULL.title,
        "category": FULL.category,
        "confidence": FULL.confidence,
        "stakes": FULL.stakes,
        "status": FULL.status,
        "outcome": FULL.outcome,
        "date": "2026-01-20T14:00:00Z",
        "source": FULL.source,
        "recorded_by": "planner",
    }
    assert (stored.recorded_at, stored.reviewed_at) == (
        "2026-02-01T09:00:00Z",
        "2026-03-01T09:00:00Z",
    )
    assert stored.tags == ("kafka", "queue")
    assert stored.reason_types == ("analysis", "pattern")
    assert stored.content_hash == FULL.content_hash()
    assert record_of(stored).model_dump() == FULL.model_dump()


def test_values_of_the_wrong_type_read_as_absent() -> None:
    stored = decode("x", {"title": 3, "confidence": "high", "tags": "a", "updated_at": True})
    assert stored == StoredDecision(id="x")


def test_reason_types_written_by_hand_as_json_are_read() -> None:
    assert decode("x", {"reason_types": json.dumps(["a", "b"])}).reason_types == ("a", "b")


def test_the_index_gives_the_record_the_store_gives(tmp_path: Path) -> None:
    store = ChromaDecisionStore(data_dir=tmp_path, collection="typed", embedding_model="t")
    bare = DecisionRecord(id="bare", title="Bare")
    write(store, [FULL, *SAMPLE[1:4], bare])
    index = index_of(store)
    stored = {row.id: row.decision for row in store.get()}
    with index.reading():
        for record_id, decision in stored.items():
            row = index.row_of(record_id)
            assert row is not None
            assert index.record(row) == dataclasses.replace(decision, record_json=None)
    assert stored["bare"].updated_at is not None and stored["bare"].category is None
    store.close()
