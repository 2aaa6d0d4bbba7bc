"""Stores as the earlier format wrote them: every field flat in the metadata, the text as
Chroma's document (to test that they still load, query and re-index)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from a2a.records import DecisionRecord
from a2a.records.dates import format_date
from a2a.store.chroma import ChromaDecisionStore
from a2a.store.metadata import UPDATED_AT_KEY, MetadataValue, record_json


def earlier_metadata(record: DecisionRecord) -> dict[str, MetadataValue]:
    """The metadata the earlier format wrote for `record` (before `updated_at` is added)."""
    values: dict[str, MetadataValue | None] = {
        "title": record.title,
        "category": record.category,
        "confidence": record.confidence,
        "stakes": record.stakes,
        "status": record.status,
        "outcome": record.outcome,
        "source": record.source,
        "recorded_by": record.recorded_by,
        "tags": list(record.tags) or None,
        "reason_types": [reason.type for reason in record.reasons] or None,
        "content_hash": record.origin_hash or record.content_hash(),
        "record": record_json(record),
    }
    for key in ("date", "recorded_at", "reviewed_at"):
        moment = getattr(record, key)
        if moment is not None:
            values[key] = format_date(moment)
    if record.date is not None:
        values["date_epoch"] = math.floor(record.date.timestamp())
    return {key: value for key, value in values.items() if value is not None}


def write_earlier_format(
    store: ChromaDecisionStore,
    records: list[DecisionRecord],
    vectors: npt.NDArray[np.float32],
    updated_at: int = 1,
) -> None:
    """Write `records` straight into the store's collection as the earlier format did."""
    collection: Any = store._get_collection(create=True)
    collection.upsert(
        ids=[r.id for r in records],
        embeddings=vectors,
        metadatas=[{**earlier_metadata(r), UPDATED_AT_KEY: updated_at} for r in records],
        documents=[r.embedding_text() for r in records],
    )
    store._bump_revision(collection)
