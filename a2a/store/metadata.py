"""Decision record <-> Chroma metadata: flat scalars and non-empty lists, no nulls."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Final

from a2a.records import DecisionRecord, Reason

# Chroma rejects None values and empty lists in metadata, so a missing field is an absent
# key; range and `$in` filters then never match it, which is the contract for null fields.
MetadataValue = str | int | float | bool | list[str]

#: Metadata key of the whole record as canonical JSON (what cstp.getDecision returns).
RECORD_KEY: Final = "record"
#: Metadata key of the hash of what the record was written from (a file's record, or the
#: decision a recordDecision call sent); a review leaves it unchanged.
CONTENT_HASH_KEY: Final = "content_hash"
#: Summary fields every result list shows, in wire order (snake_case metadata keys).
SUMMARY_KEYS: Final = (
    "title",
    "category",
    "confidence",
    "stakes",
    "status",
    "outcome",
    "date",
    "source",
    "recorded_by",
)


def to_metadata(record: DecisionRecord) -> dict[str, MetadataValue]:
    """Chroma metadata for `record`.

    Dates go in twice: RFC 3339 text and epoch seconds (int). The whole record also goes
    in as canonical JSON under RECORD_KEY, and `content_hash` is `record.origin_hash` when
    set (a reviewed record keeps the hash of what it was written from), else its own.
    """
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
        CONTENT_HASH_KEY: record.origin_hash or record.content_hash(),
        RECORD_KEY: record_json(record),
    }
    for key in ("date", "recorded_at", "reviewed_at"):
        moment: datetime | None = getattr(record, key)
        if moment is not None:
            values[key] = format_date(moment)
    if record.date is not None:
        values["date_epoch"] = int(record.date.timestamp())
    return {key: value for key, value in values.items() if value is not None}


def record_json(record: DecisionRecord) -> str:
    """The record as compact JSON with sorted keys (`origin_hash` is never included)."""
    return json.dumps(
        record.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )


def from_metadata(record_id: str, metadata: dict[str, Any]) -> DecisionRecord:
    """The record kept in `metadata`, with `origin_hash` set from `content_hash`.

    A record stored before records were kept whole (or whose JSON does not read back) is
    rebuilt from its flat fields: no context, decision or reason texts until the next
    `cstp index` of its file.
    """
    stored_hash = metadata.get(CONTENT_HASH_KEY)
    origin = stored_hash if isinstance(stored_hash, str) else None
    text = metadata.get(RECORD_KEY)
    if isinstance(text, str):
        try:
            record = DecisionRecord.model_validate_json(text)
        except ValueError:
            pass
        else:
            if record.id == record_id:
                return record.model_copy(update={"origin_hash": origin})
    return _from_flat_fields(record_id, metadata, origin)


def _from_flat_fields(
    record_id: str, metadata: dict[str, Any], origin: str | None
) -> DecisionRecord:
    fields = {key: metadata.get(key) for key in SUMMARY_KEYS if key != "date"}
    for key in ("date", "recorded_at", "reviewed_at"):
        value = metadata.get(key)
        fields[key] = datetime.fromisoformat(value) if isinstance(value, str) else None
    fields["title"] = fields["title"] or record_id
    tags = metadata.get("tags")
    return DecisionRecord.model_construct(
        id=record_id,
        **fields,
        reasons=[Reason(type=t) for t in reason_types(metadata)],
        tags=[str(t) for t in tags] if isinstance(tags, list) else [],
        context=None,
        decision=None,
        lessons=None,
        origin_hash=origin,
    )


def format_date(value: datetime) -> str:
    """RFC 3339 in UTC with a `Z`, to the second: `2026-01-20T14:00:00Z`."""
    utc = value.astimezone(UTC)
    # strftime's %Y does not pad years below 1000 on every platform; RFC 3339 needs 4 digits.
    return f"{utc.year:04d}-{utc.strftime('%m-%dT%H:%M:%S')}Z"


def summary_fields(metadata: dict[str, Any]) -> dict[str, Any]:
    """The metadata every result summary shows, None where the record lacks a field."""
    return {key: metadata.get(key) for key in SUMMARY_KEYS}


def reason_types(metadata: dict[str, Any]) -> list[str]:
    """The reason types stored for a record, `[]` when it has none."""
    stored = metadata.get("reason_types")
    if isinstance(stored, str):  # tolerate a JSON-encoded list written by hand
        stored = json.loads(stored)
    return [str(item) for item in stored or []]
