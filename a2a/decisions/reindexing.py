"""What the service stored on a record outlives re-indexing its file: a changed file's record
keeps its review, its history and its links, and never replaces a decision recorded over the
protocol."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from a2a.decisions.links import SUPERSEDED
from a2a.records import DecisionRecord
from a2a.store.metadata import record_of
from a2a.store.stored import StoredDecision

if TYPE_CHECKING:
    from a2a.store.interface import DecisionStore

#: What cstp.reviewDecision sets; carried from the stored record onto a re-indexed one.
REVIEW_FIELDS = ("outcome", "status", "lessons", "reviewed_at")
#: What the lifecycle methods set (CONTRACT.md, "Lifecycle of a decision"): a decision's
#: history and its links both ways. No file sets them, so the stored ones always stand.
LIFECYCLE_FIELDS = ("history", "supersedes", "superseded_by", "related_to", "related_from")


def carry_stored(record: DecisionRecord, stored: StoredDecision) -> DecisionRecord:
    """`record` (fresh from its file) with what the service stored on its earlier version.

    - Its history and its links, both ways, as stored: other decisions link to it, and a
      link is kept on both ends (docs/lifecycle.md, "Links").
    - Its review, if it has one: a review is newer knowledge than the file it was given
      on, so its outcome, status, lessons and review time win over the file's.
    - Status `superseded` while another decision supersedes it, whatever the file says.

    The file's own content (title, text, category, ...) replaces the stored content.
    """
    kept = record_of(stored)
    update = {key: getattr(kept, key) for key in LIFECYCLE_FIELDS}
    if stored.reviewed_at is not None:
        update |= {key: getattr(kept, key) for key in REVIEW_FIELDS}
    if kept.superseded_by:
        update["status"] = SUPERSEDED
    # The stored hash stays the file's, so the next run finds the file unchanged.
    return record.model_copy(
        update={**update, "origin_hash": record.origin_hash or record.content_hash()}
    )


@dataclass(frozen=True, slots=True)
class Kept:
    """Records of a `cstp index` batch ready to write, and those refused.

    `refused`: (the file's record, the agent that recorded the stored one) for each id that
    names a decision recorded over the protocol: a file never replaces an agent's decision.
    """

    records: list[DecisionRecord]
    refused: list[tuple[DecisionRecord, str]]


def keep_stored(store: DecisionStore, records: Sequence[DecisionRecord]) -> Kept:
    """`records` about to be rewritten by `cstp index`, each with what the service stored
    on it (`carry_stored`), less those whose id names a decision recorded over the protocol.

    One store read for the batch; raises StoreUnavailable when Chroma fails.
    """
    stored = {row.id: row.decision for row in store.get(ids=[r.id for r in records])}
    kept, refused = [], []
    for record in records:
        old = stored.get(record.id)
        if old is None:
            kept.append(record)
        elif old.recorded_by is not None:
            refused.append((record, old.recorded_by))
        else:
            kept.append(carry_stored(record, old))
    return Kept(kept, refused)
