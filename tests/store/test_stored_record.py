"""StoredRecord: the record Chroma's metadata keeps, the same through the search index."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from a2a.records import DecisionRecord, Reason
from a2a.records.summary import DecisionMetadata
from a2a.store.chroma import ChromaDecisionStore
from a2a.store.metadata import decode, to_metadata, updated_at
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
    record, whole = decode(FULL.id, to_metadata(FULL))
    assert whole
    assert DecisionMetadata.of(record).model_dump() == {
        "id": FULL.id,
        "title": FULL.title,
        "category": FULL.category,
        "confidence": FULL.confidence,
        "stakes": FULL.stakes,
        "status": FULL.status,
        "outcome": FULL.outcome,
        "date": "2026-01-20T14:00:00Z",
        "source": FULL.source,
        "recorded_by": "planner",
        "tenant": None,
    }
    assert (record.recorded_at, record.reviewed_at) == (FULL.recorded_at, FULL.reviewed_at)
    assert record.tags == ["kafka", "queue"]
    assert record.reason_types == ["analysis", "pattern"]
    assert record.origin_hash == FULL.content_hash()
    assert record.model_dump() == FULL.model_dump()


def test_values_of_the_wrong_type_read_as_absent() -> None:
    metadata = {"title": 3, "confidence": "high", "tags": "a", "updated_at": True}
    record, whole = decode("x", metadata)
    assert not whole and updated_at(metadata) is None
    assert DecisionMetadata.of(record) == DecisionMetadata.of(DecisionRecord(id="x", title="x"))
    assert (record.tags, record.reasons, record.origin_hash) == ([], [], None)


def test_reason_types_written_by_hand_as_json_are_read() -> None:
    assert decode("x", {"reason_types": json.dumps(["a", "b"])})[0].reason_types == ["a", "b"]


def test_the_index_gives_the_record_the_store_gives(tmp_path: Path) -> None:
    store = ChromaDecisionStore(data_dir=tmp_path, collection="typed", embedding_model="t")
    bare = DecisionRecord(id="bare", title="Bare")
    write(store, [FULL, *SAMPLE[1:4], bare])
    index = index_of(store)
    stored = {row.id: row for row in store.get()}
    names = ("tags", "reason_types", "content_hash", "updated_at")
    with index.reading():
        for record_id, row in stored.items():
            at = index.row_of(record_id)
            assert at is not None
            assert index.summaries([at]) == [DecisionMetadata.of(row.decision)]
            decision = row.decision
            expected = (tuple(decision.tags), tuple(decision.reason_types), decision.origin_hash)
            assert tuple(c[0] for c in index.fields([at], names)) == (*expected, row.updated_at)
    assert stored["bare"].updated_at is not None and stored["bare"].decision.category is None
    store.close()
