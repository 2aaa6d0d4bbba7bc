"""Decision record <-> Chroma metadata (flat scalars and non-empty lists), and query
filters -> a Chroma `where` over the same keys: the one place those keys are named."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from a2a.records import DecisionRecord, Reason
from a2a.records.dates import date_text, format_date
from a2a.records.filters import QueryFilters
from a2a.records.summary import summary_fields
from a2a.store.stored import StoredDecision

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
#: Fields read from the record's JSON, not from metadata keys (the earlier format wrote
#: them as keys too).
_JSON_FIELDS: Final = ("title", "outcome", "source", "recorded_by", "tags", "reason_types")
_JSON_DATES: Final = ("date", "recorded_at", "reviewed_at")
#: Record fields kept in its JSON only, and only when not empty (cstp.updateDecision's
#: history and the links between decisions).
LIFECYCLE_FIELDS: Final = ("history", "supersedes", "superseded_by", "related_to", "related_from")


def to_metadata(record: DecisionRecord) -> dict[str, MetadataValue]:
    """Chroma metadata for `record`: the keys a Chroma `where` reads, and the whole record.

    Only the keys `to_where` reads (the date as epoch seconds, int), `content_hash`
    and the whole record as canonical JSON under RECORD_KEY are written: every key is a
    row in Chroma's SQLite metadata table, with its index entries, and the other fields
    cost ~40% of Chroma's write CPU; `decode` reads them back from the record. `content_hash` is
    `record.origin_hash` when set (a reviewed record keeps the hash of what it was written
    from), else its own.
    """
    values: dict[str, MetadataValue | None] = {
        "category": record.category,
        "confidence": record.confidence,
        "stakes": record.stakes,
        "status": record.status,
        CONTENT_HASH_KEY: record.origin_hash or record.content_hash(),
        RECORD_KEY: record_json(record),
    }
    if record.date is not None:
        # Whole seconds at or before the date (floor, not int(): int() rounds a date before
        # 1970 with a fraction up, past the filter bounds `to_where` computes).
        values["date_epoch"] = math.floor(record.date.timestamp())
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


def decode(record_id: str, metadata: Mapping[str, Any]) -> StoredDecision:
    """The typed fields of one record's Chroma metadata: the one place it is read.

    A value of the wrong type reads as absent (None, or `()` for lists). `reason_types`
    stored as a JSON-encoded list (written by hand) is read as that list. The fields
    `to_metadata` does not write as keys are read from the record's JSON when it has one
    (keys of the earlier format left on a rewritten record are stale), else from keys.
    """
    if RECORD_KEY in metadata:
        metadata = {**metadata, **_fields_of_json(metadata[RECORD_KEY])}
    return StoredDecision(
        id=record_id,
        title=_text(metadata.get("title")),
        category=_text(metadata.get("category")),
        confidence=_number(metadata.get("confidence")),
        stakes=_text(metadata.get("stakes")),
        status=_text(metadata.get("status")),
        outcome=_text(metadata.get("outcome")),
        date=_text(metadata.get("date")),
        date_epoch=_integer(metadata.get("date_epoch")),
        source=_text(metadata.get("source")),
        recorded_by=_text(metadata.get("recorded_by")),
        recorded_at=_text(metadata.get("recorded_at")),
        reviewed_at=_text(metadata.get("reviewed_at")),
        tags=_strings(metadata.get("tags")),
        reason_types=_reason_types(metadata.get("reason_types")),
        content_hash=_text(metadata.get(CONTENT_HASH_KEY)),
        updated_at=_integer(metadata.get(UPDATED_AT_KEY)),
        record_json=_text(metadata.get(RECORD_KEY)),
    )


def stored_hash(metadata: Mapping[str, Any]) -> str | None:
    """The `content_hash` in `metadata`: `decode(...).content_hash` without reading the rest."""
    return _text(metadata.get(CONTENT_HASH_KEY))


def as_stored(record: DecisionRecord) -> StoredDecision:
    """`record` as the store keeps it (`updated_at` None: stamped by the store's write)."""
    return stored_of(record, to_metadata(record))


def stored_of(record: DecisionRecord, metadata: Mapping[str, Any]) -> StoredDecision:
    """What `decode(record.id, metadata)` reads from `metadata` written for `record` by
    `to_metadata` (plus `updated_at`), built from `record` without parsing its JSON."""
    return StoredDecision(
        **summary_fields(record),
        date_epoch=_integer(metadata.get("date_epoch")),
        recorded_at=date_text(record.recorded_at),
        reviewed_at=date_text(record.reviewed_at),
        tags=tuple(record.tags),
        reason_types=tuple(reason.type for reason in record.reasons),
        content_hash=_text(metadata.get(CONTENT_HASH_KEY)),
        updated_at=_integer(metadata.get(UPDATED_AT_KEY)),
        record_json=_text(metadata.get(RECORD_KEY)),
    )


def from_metadata(record_id: str, metadata: Mapping[str, Any]) -> DecisionRecord:
    """The record kept in `metadata`: `record_of(decode(record_id, metadata))`."""
    return record_of(decode(record_id, metadata))


def record_of(stored: StoredDecision) -> DecisionRecord:
    """The whole record of `stored`, with `origin_hash` set from its `content_hash`.

    A record stored before records were kept whole (or whose JSON does not read back) is
    rebuilt from its flat fields: no context, decision or reason texts until the next
    `cstp index` of its file.
    """
    origin = stored.content_hash
    if stored.record_json is not None:
        try:
            record = DecisionRecord.model_validate_json(stored.record_json)
        except ValueError:
            pass
        else:
            if record.id == stored.id:
                return record.model_copy(update={"origin_hash": origin})
    return _from_flat_fields(stored)


def _from_flat_fields(stored: StoredDecision) -> DecisionRecord:
    return DecisionRecord.model_construct(
        id=stored.id,
        title=stored.title or stored.id,
        category=stored.category,
        confidence=stored.confidence,
        stakes=stored.stakes,
        status=stored.status,
        outcome=stored.outcome,
        source=stored.source,
        recorded_by=stored.recorded_by,
        date=_moment(stored.date),
        recorded_at=_moment(stored.recorded_at),
        reviewed_at=_moment(stored.reviewed_at),
        reasons=[Reason(type=t) for t in stored.reason_types],
        tags=list(stored.tags),
        context=None,
        decision=None,
        lessons=None,
        origin_hash=stored.content_hash,
    )


def _fields_of_json(text: object) -> dict[str, Any]:
    """The fields `to_metadata` writes no key for, read from a record's JSON ({} for
    anything that is not a JSON object) as the earlier format wrote them (None if absent)."""
    try:
        data = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return {}
    fields = {key: data.get(key) for key in _JSON_FIELDS}
    reasons = data.get("reasons")
    reasons = reasons if isinstance(reasons, list) else []
    fields["reason_types"] = [r.get("type") for r in reasons if isinstance(r, dict)]
    for key in _JSON_DATES:
        moment = data.get(key)
        fields[key] = (
            format_date(datetime.fromisoformat(moment)) if isinstance(moment, str) else None
        )
    return fields


def _moment(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


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
