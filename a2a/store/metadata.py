"""Decision record <-> Chroma metadata (flat scalars and non-empty lists), and query
filters -> a Chroma `where` over the same keys: the one place those keys are named."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from a2a.records import DecisionRecord, Reason
from a2a.records.filters import QueryFilters

# Chroma rejects None values and empty lists in metadata, so a missing field is an absent
# key; range and `$in` filters then never match it, which is the contract for null fields.
MetadataValue = str | int | float | bool | list[str]

#: Metadata key of the whole record as canonical JSON (what cstp.getDecision returns).
RECORD_KEY: Final = "record"
#: Metadata key of the hash of what the record was written from (a file's record, or the
#: decision a recordDecision call sent); a review leaves it unchanged.
CONTENT_HASH_KEY: Final = "content_hash"
#: Metadata key: when the record was last written, epoch milliseconds, writer's clock
#: (stamped by the store on every write, a2a.store.chroma).
UPDATED_AT_KEY: Final = "updated_at"
#: Keys `to_metadata` writes only when the record has the field. Chroma's upsert merges a
#: record's metadata with what is stored, so a write sends None (which deletes the key) for
#: each of these it leaves out: a Chroma `where` never sees a value the record lost. Keys
#: only the earlier format wrote may outlive a rewrite; `decode` never reads them then.
OPTIONAL_KEYS: Final = ("category", "confidence", "stakes", "status", "date_epoch")
#: Fields the record's JSON holds and the earlier format wrote as flat keys too.
_JSON_FIELDS: Final = (
    *("title", "outcome", "source", "recorded_by", "tags"),
    *("date", "recorded_at", "reviewed_at"),
)
#: Record fields kept in its JSON only, and only when not empty (cstp.updateDecision's
#: history and the links between decisions).
LIFECYCLE_FIELDS: Final = ("history", "supersedes", "superseded_by", "related_to", "related_from")


def to_metadata(record: DecisionRecord) -> dict[str, MetadataValue]:
    """Chroma metadata for `record`: the keys a Chroma `where` reads, and the whole record.

    Only the keys `to_where` reads (the date as epoch seconds, int), `content_hash`
    and the whole record as canonical JSON under RECORD_KEY are written: every key is a
    row in Chroma's SQLite metadata table, with its index entries, and the other fields
    cost ~40% of Chroma's write CPU; `decode` reads the record back whole. `content_hash`
    is `record.origin_hash` when set (a reviewed record keeps the hash of what it was
    written from), else its own.
    """
    values: dict[str, MetadataValue | None] = {
        "category": record.category,
        "confidence": record.confidence,
        "stakes": record.stakes,
        "status": record.status,
        "date_epoch": record.date_epoch,
        CONTENT_HASH_KEY: record.origin_hash or record.content_hash(),
        RECORD_KEY: record_json(record),
    }
    return {key: value for key, value in values.items() if value is not None}


def to_where(filters: QueryFilters | None) -> dict[str, Any] | None:
    """The Chroma `where` for `filters`, or None when nothing filters.

    Chroma wants exactly one operator per dict and two or more items under `$and`, so a
    single condition is returned bare. Dates compare as integer epoch seconds
    (`date_epoch`): the lower bound is rounded up and the upper bound down, which keeps
    both inclusive for records stored to the second.
    """
    if filters is None:
        return None
    conditions: list[dict[str, Any]] = []
    if filters.category is not None:
        conditions.append({"category": {"$eq": filters.category}})
    if filters.min_confidence is not None:
        conditions.append({"confidence": {"$gte": float(filters.min_confidence)}})
    if filters.max_confidence is not None:
        conditions.append({"confidence": {"$lte": float(filters.max_confidence)}})
    if (after := filters.after) is not None:
        conditions.append({"date_epoch": {"$gte": math.ceil(after.timestamp())}})
    if (before := filters.before) is not None:
        conditions.append({"date_epoch": {"$lte": math.floor(before.timestamp())}})
    if filters.stakes is not None:
        conditions.append({"stakes": {"$in": sorted(set(filters.stakes))}})
    if filters.status is not None:
        conditions.append({"status": {"$in": sorted(set(filters.status))}})
    if not conditions:
        return None
    return conditions[0] if len(conditions) == 1 else {"$and": conditions}


def record_json(record: DecisionRecord) -> str:
    """The record as compact JSON with sorted keys (`origin_hash` is never included).

    Empty lifecycle lists (history, links) are left out, so a record that never had one
    is stored as before they existed (they read back as `[]`).
    """
    empty = {name for name in LIFECYCLE_FIELDS if not getattr(record, name)}
    return json.dumps(
        record.model_dump(mode="json", exclude=empty),
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )


def decode(record_id: str, metadata: Mapping[str, Any]) -> tuple[DecisionRecord, bool]:
    """The record kept in one record's Chroma metadata, and whether it was read whole: the
    one place that metadata is read.

    Whole: the record's JSON under RECORD_KEY, `origin_hash` set from its `content_hash`.
    A record stored before records were kept whole, or whose JSON does not validate or
    names another id, is rebuilt (`False`) from its flat keys and whatever fields its JSON
    has: no context, decision or reason texts until the next `cstp index` of its file; a
    value of the wrong type reads as absent (a title as the id), and `reason_types` stored
    as a JSON-encoded list (written by hand) as that list.
    """
    origin = _text(metadata.get(CONTENT_HASH_KEY))
    text = metadata.get(RECORD_KEY)
    if isinstance(text, str):
        try:
            record = DecisionRecord.model_validate_json(text)
        except ValueError:
            pass
        else:
            if record.id == record_id:
                record.origin_hash = origin  # a fresh object: set, not copied (~12 us less)
                return record, True
    return _from_flat_keys(record_id, {**metadata, **_flat_fields_of(text)}, origin), False


def stored_hash(metadata: Mapping[str, Any]) -> str | None:
    """The `content_hash` in `metadata` (the decoded record's `origin_hash`), read alone."""
    return _text(metadata.get(CONTENT_HASH_KEY))


def updated_at(metadata: Mapping[str, Any]) -> int | None:
    """When the record in `metadata` was last written (epoch ms), None before the stamp."""
    return _integer(metadata.get(UPDATED_AT_KEY))


def _from_flat_keys(
    record_id: str, metadata: Mapping[str, Any], origin: str | None
) -> DecisionRecord:
    return DecisionRecord.model_construct(
        id=record_id,
        title=_text(metadata.get("title")) or record_id,
        category=_text(metadata.get("category")),
        confidence=_number(metadata.get("confidence")),
        stakes=_text(metadata.get("stakes")),
        status=_text(metadata.get("status")),
        outcome=_text(metadata.get("outcome")),
        source=_text(metadata.get("source")),
        recorded_by=_text(metadata.get("recorded_by")),
        date=_moment(metadata.get("date")),
        recorded_at=_moment(metadata.get("recorded_at")),
        reviewed_at=_moment(metadata.get("reviewed_at")),
        reasons=[Reason(type=t) for t in _reason_types(metadata.get("reason_types"))],
        tags=list(_strings(metadata.get("tags"))),
        context=None,
        decision=None,
        lessons=None,
        origin_hash=origin,
    )


def _flat_fields_of(text: object) -> dict[str, Any]:
    """The flat keys the earlier format wrote, read from a record's JSON that does not
    validate ({} for anything that is not a JSON object; None where it lacks a field)."""
    try:
        data = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return {}
    reasons = data.get("reasons")
    reasons = reasons if isinstance(reasons, list) else []
    fields = {key: data.get(key) for key in _JSON_FIELDS}
    return fields | {"reason_types": [r.get("type") for r in reasons if isinstance(r, dict)]}


def _moment(value: object) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _integer(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(item) for item in value) if isinstance(value, list) else ()


def _reason_types(value: object) -> tuple[str, ...]:
    if isinstance(value, str):  # tolerate a JSON-encoded list written by hand
        value = json.loads(value)
    return _strings(value)
