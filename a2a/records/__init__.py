"""The decision record: the one shape every importer produces and the store keeps."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, Strict, field_validator
from pydantic.alias_generators import to_camel

Stakes = Literal["low", "medium", "high", "critical"]
Status = Literal[
    "proposed", "pending", "decided", "reviewed", "superseded", "deprecated", "rejected"
]

#: Outcomes the write methods accept (CONTRACT.md, "Decision records written over the
#: protocol"); records indexed from files may carry others.
Outcome = Literal["success", "partial", "failure", "abandoned", "pending"]
OUTCOMES: Final[tuple[str, ...]] = get_args(Outcome)

#: Fields set by the service, not by the record's content: left out of `content_hash`, so
#: a review or a re-recording never makes an unchanged file look changed.
#: The lifecycle fields (history and links, CONTRACT.md "Lifecycle of a decision") are
#: service fields too: an update or a link never makes a file look changed.
SERVICE_FIELDS: Final = frozenset(
    {
        "recorded_by",
        "recorded_at",
        "lessons",
        "reviewed_at",
        "history",
        "supersedes",
        "superseded_by",
        "related_to",
        "related_from",
    }
)
#: Bumped when what the store keeps of a record changes, so `cstp index` rewrites every
#: record once (version 2: the whole record kept in metadata for cstp.getDecision).
RECORD_FORMAT: Final = "record-v2"

#: Stakes levels, lowest first (CONTRACT.md, filters.stakes).
STAKES: Final[tuple[str, ...]] = get_args(Stakes)
#: Status vocabulary (CONTRACT.md, filters.status).
STATUSES: Final[tuple[str, ...]] = get_args(Status)

Confidence = Annotated[float, Strict(), Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class Reason(BaseModel):
    """One reason behind a decision: its type (`pattern`, `analysis`, ...) and its text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str = Field(min_length=1)
    text: str = ""


class Change(BaseModel):
    """One entry of a decision's history (cstp.updateDecision): when (UTC), by which agent
    (None for the service itself), why, and each changed field's `[old, new]` values by
    its wire name."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    at: datetime
    by: str | None
    reason: str
    changes: dict[str, tuple[Any, Any]]


def differences(
    old: DecisionRecord, new: DecisionRecord, fields: Sequence[str]
) -> dict[str, tuple[Any, Any]]:
    """A history entry's `changes`: wire (camelCase) name -> (old, new) JSON values of each
    of `fields` (snake_case) that differs between `old` and `new` (stored records keep
    their keys sorted, so a stored entry lists them in alphabetical order)."""
    before = old.model_dump(mode="json", include=set(fields))
    after = new.model_dump(mode="json", include=set(fields))
    return {
        to_camel(name): (before[name], after[name])
        for name in fields
        if before[name] != after[name]
    }


class DecisionRecord(BaseModel):
    """A decision as stored: metadata for filters plus the text that is embedded.

    `date` is timezone-aware UTC. `source` is the file the record came from, relative to
    the folder given to `cstp index` (POSIX separators), or None. `recorded_by` (agent id)
    and `recorded_at` (UTC) are set by the service for records written over the protocol,
    None for records from files; `lessons` and `reviewed_at` by cstp.reviewDecision;
    `history` by cstp.updateDecision. Links are ids of other stored decisions, kept both
    ways so that a delete finds every record pointing at it: `supersedes` and `related_to`
    as written, `superseded_by` and `related_from` their reverse.
    `origin_hash`, never serialised, is the content hash of what the record was first
    written from when it differs from `content_hash()` (a reviewed record keeps the hash of
    its file, so re-indexing the unchanged file leaves the review in place).
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=200)
    title: str = Field(min_length=1)
    category: str | None = None
    confidence: Confidence | None = None
    stakes: Stakes | None = None
    status: Status | None = None
    outcome: str | None = None
    date: datetime | None = None
    context: str | None = None
    decision: str | None = None
    reasons: list[Reason] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    source: str | None = None
    recorded_by: str | None = None
    recorded_at: datetime | None = None
    lessons: str | None = None
    reviewed_at: datetime | None = None
    history: list[Change] = Field(default_factory=list)
    supersedes: list[str] = Field(default_factory=list)
    superseded_by: list[str] = Field(default_factory=list)
    related_to: list[str] = Field(default_factory=list)
    related_from: list[str] = Field(default_factory=list)
    origin_hash: str | None = Field(default=None, exclude=True, repr=False)

    @field_validator("date", "recorded_at", "reviewed_at")
    @classmethod
    def _date_is_utc(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("date needs a UTC offset (RFC 3339)")
        return value.astimezone(UTC)

    @property
    def date_epoch(self) -> int | None:
        """`date` in whole UTC epoch seconds at or before it, None without a date: what
        the date filters compare (a2a.store.metadata.to_where, the index's columns)."""
        # floor, not int(): int() rounds a date before 1970 with a fraction up, past the
        # filter bounds to_where computes.
        return None if self.date is None else math.floor(self.date.timestamp())

    @property
    def reason_types(self) -> list[str]:
        """The type of each reason, in order."""
        return [reason.type for reason in self.reasons]

    def embedding_text(self) -> str:
        """The text that is embedded: title, context, decision, reasons and tags, in that order."""
        parts = [self.title, self.context or "", self.decision or ""]
        parts.extend(reason.text for reason in self.reasons if reason.text)
        if self.tags:
            parts.append("Tags: " + ", ".join(self.tags))
        return "\n\n".join(part.strip() for part in parts if part and part.strip())

    def content_hash(self) -> str:
        """sha256 hex of the record's content as canonical JSON (SERVICE_FIELDS left out,
        RECORD_FORMAT mixed in): equal hashes mean nothing to re-index.
        """
        content = self.model_dump(mode="json", exclude=set(SERVICE_FIELDS))
        return canonical_hash({"format": RECORD_FORMAT, **content})


def normalize_tags(tags: Iterable[str]) -> frozenset[str]:
    """Tags trimmed and case-folded, so `" Postgres"` equals `"postgres"`; blank tags dropped."""
    return frozenset(folded for tag in tags if (folded := tag.strip().casefold()))


def canonical_hash(value: object) -> str:
    """sha256 hex of `value` as canonical JSON (sorted keys, UTF-8, no whitespace)."""
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def derive_id(source: str, index: int | None = None) -> str:
    """A stable id for a record that has none: 12 hex digits of sha1 over its source path.

    `index` distinguishes several records in one file. Same source, same id: indexing
    twice updates instead of duplicating.
    """
    key = source if index is None else f"{source}#{index}"
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]
