"""Decision record <-> Chroma metadata: flat scalars and non-empty lists, no nulls."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from a2a.records import DecisionRecord

# Chroma rejects None values and empty lists in metadata, so a missing field is an absent
# key; range and `$in` filters then never match it, which is the contract for null fields.
MetadataValue = str | int | float | bool | list[str]


def to_metadata(record: DecisionRecord) -> dict[str, MetadataValue]:
    """Chroma metadata for `record`. Dates go in twice: RFC 3339 text and epoch seconds (int)."""
    values: dict[str, MetadataValue | None] = {
        "title": record.title,
        "category": record.category,
        "confidence": record.confidence,
        "stakes": record.stakes,
        "status": record.status,
        "outcome": record.outcome,
        "source": record.source,
        "tags": list(record.tags) or None,
        "reason_types": [reason.type for reason in record.reasons] or None,
        "content_hash": record.content_hash(),
    }
    if record.date is not None:
        values["date"] = format_date(record.date)
        values["date_epoch"] = int(record.date.timestamp())
    return {key: value for key, value in values.items() if value is not None}


def format_date(value: datetime) -> str:
    """RFC 3339 in UTC with a `Z`, to the second: `2026-01-20T14:00:00Z`."""
    utc = value.astimezone(UTC)
    # strftime's %Y does not pad years below 1000 on every platform; RFC 3339 needs 4 digits.
    return f"{utc.year:04d}-{utc.strftime('%m-%dT%H:%M:%S')}Z"


def summary_fields(metadata: dict[str, Any]) -> dict[str, Any]:
    """The metadata every result summary shows, None where the record lacks a field."""
    keys = ("title", "category", "confidence", "stakes", "status", "outcome", "date", "source")
    return {key: metadata.get(key) for key in keys}


def reason_types(metadata: dict[str, Any]) -> list[str]:
    """The reason types stored for a record, `[]` when it has none."""
    stored = metadata.get("reason_types")
    if isinstance(stored, str):  # tolerate a JSON-encoded list written by hand
        stored = json.loads(stored)
    return [str(item) for item in stored or []]
