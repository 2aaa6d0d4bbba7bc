"""StoredDecision: what the store keeps of one decision, as services read it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from a2a.records.summary import SUMMARY_FIELDS


@dataclass(frozen=True, slots=True)
class StoredDecision:
    """One stored decision's fields, typed; None (or `()`) where the record lacks one.

    Decoded from Chroma metadata in one place only (`a2a.store.metadata.decode`), or
    built from the search index's columns (`a2a.index.SearchIndex.record`). Services read
    these fields and never Chroma's metadata dicts.

    - `date`, `recorded_at`, `reviewed_at`: RFC 3339 UTC text as stored
      (`2026-01-20T14:00:00Z`); `date_epoch`: the same date in UTC epoch seconds.
    - `confidence`: in [0, 1]. `tags`, `reason_types`: as stored, in order.
    - `content_hash`: sha256 hex of what the record was written from.
    - `updated_at`: epoch milliseconds of the last write (the writer's clock).
    - `record_json`: the whole record as canonical JSON (read back by
      `a2a.store.metadata.record_of`); None from the search index, which does not keep it.
    """

    id: str
    title: str | None = None
    category: str | None = None
    confidence: float | None = None
    stakes: str | None = None
    status: str | None = None
    outcome: str | None = None
    date: str | None = None
    date_epoch: int | None = None
    source: str | None = None
    recorded_by: str | None = None
    recorded_at: str | None = None
    reviewed_at: str | None = None
    tags: tuple[str, ...] = ()
    reason_types: tuple[str, ...] = ()
    content_hash: str | None = None
    updated_at: int | None = None
    record_json: str | None = None

    @property
    def summary(self) -> dict[str, Any]:
        """The fields every result summary shows (SUMMARY_FIELDS), by their snake_case
        names, in wire order (CONTRACT.md, DecisionMetadata)."""
        return {name: getattr(self, name) for name in SUMMARY_FIELDS}
