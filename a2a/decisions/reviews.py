"""Reviews outlive re-indexing: a changed file's record keeps the review stored for it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from a2a.records import DecisionRecord
from a2a.store.metadata import record_of
from a2a.store.stored import StoredDecision

if TYPE_CHECKING:
    from a2a.store.interface import DecisionStore

#: What cstp.reviewDecision sets; carried from the stored record onto a re-indexed one.
REVIEW_FIELDS = ("outcome", "status", "lessons", "reviewed_at")


def carry_review(record: DecisionRecord, stored: StoredDecision) -> DecisionRecord:
    """`record` (fresh from its file) with the review of its stored version, if it has one.

    A review is newer knowledge than the file it was given on, so its outcome, status,
    lessons and review time win over the file's.
    """
    if stored.reviewed_at is None:
        return record
    reviewed = record_of(stored)
    update = {key: getattr(reviewed, key) for key in REVIEW_FIELDS}
    # The stored hash stays the file's, so the next run finds the file unchanged.
    return record.model_copy(update={**update, "origin_hash": record.content_hash()})


def keep_reviews(store: DecisionStore, records: Sequence[DecisionRecord]) -> list[DecisionRecord]:
    """`records` about to be rewritten by `cstp index`, each keeping its stored review.

    One store read for the batch; raises StoreUnavailable when Chroma fails.
    """
    stored = {row.id: row.decision for row in store.get(ids=[r.id for r in records])}
    return [carry_review(r, stored[r.id]) if r.id in stored else r for r in records]
