"""What the service stored on a record outlives re-indexing its file: a changed file's record
keeps its review, its history and its links, and never replaces a decision recorded over the
protocol."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from a2a.decisions.links import SUPERSEDED
from a2a.records import Change, DecisionRecord, differences
from a2a.store.metadata import LIFECYCLE_FIELDS
from a2a.store.pages import StoredRecord

if TYPE_CHECKING:
    from a2a.store.interface import DecisionStore

#: What cstp.reviewDecision sets; carried from the stored record onto a re-indexed one.
REVIEW_FIELDS = ("outcome", "status", "lessons", "reviewed_at")
#: What a re-indexed file may change of a record, compared for its history entry: every
#: field but the id and what the lifecycle methods set (history and links, which no file
#: sets, so the stored ones always stand).
CONTENT_FIELDS = tuple(
    name
    for name in DecisionRecord.model_fields
    if name not in {"id", "origin_hash", *LIFECYCLE_FIELDS}
)


def carry_stored(record: DecisionRecord, stored: StoredRecord, at: datetime) -> DecisionRecord:
    """`record` (fresh from its file) with what the service stored on its earlier version.

    - Its history and its links, both ways, as stored: other decisions link to it, and a
      link is kept on both ends (docs/lifecycle.md, "Links").
    - Its review, if it has one: a review is newer knowledge than the file it was given
      on, so its outcome, status, lessons and review time win over the file's.
    - Status `superseded` while another decision supersedes it, whatever the file says.

    The file's own content (title, text, category, ...) replaces the stored content, and
    a history entry at `at` (UTC), by the service (`by` null), names each field that
    changed, `[old, new]`, as cstp.updateDecision's entries do: an update of the content
    that the file replaces stays in the history.
    """
    kept = stored.decision
    update = {key: getattr(kept, key) for key in LIFECYCLE_FIELDS}
    if kept.reviewed_at is not None:
        update |= {key: getattr(kept, key) for key in REVIEW_FIELDS}
    if kept.superseded_by:
        update["status"] = SUPERSEDED
    # The stored hash stays the file's, so the next run finds the file unchanged.
    new = record.model_copy(
        update={**update, "origin_hash": record.origin_hash or record.content_hash()}
    )
    changes = differences(kept, new, CONTENT_FIELDS)
    if not changes or not stored.whole:
        # A record stored before records were kept whole: its earlier content is unknown.
        return new
    entry = Change(at=at, by=None, reason=f"re-indexed from {_file_of(new)}", changes=changes)
    return new.model_copy(update={"history": [*new.history, entry]})


def _file_of(record: DecisionRecord) -> str:
    return f"its file {record.source}" if record.source else "its file"


@dataclass(frozen=True, slots=True)
class Kept:
    """Records of a `cstp index` batch ready to write, and those refused.

    `refused`: (the file's record, the agent that recorded the stored one) for each id that
    names a decision recorded over the protocol: a file never replaces an agent's decision.
    """

    records: list[DecisionRecord]
    refused: list[tuple[DecisionRecord, str]]


def keep_stored(store: DecisionStore, records: Sequence[DecisionRecord], at: datetime) -> Kept:
    """`records` about to be rewritten by `cstp index` at `at` (UTC), each with what the
    service stored on it (`carry_stored`), less those whose id names a decision recorded
    over the protocol.

    One store read for the batch; raises StoreUnavailable when Chroma fails.
    """
    stored = {row.id: row for row in store.get(ids=[r.id for r in records])}
    kept, refused = [], []
    for record in records:
        old = stored.get(record.id)
        if old is None:
            kept.append(record)
        elif old.decision.recorded_by is not None:
            refused.append((record, old.decision.recorded_by))
        else:
            kept.append(carry_stored(record, old, at))
    return Kept(kept, refused)
