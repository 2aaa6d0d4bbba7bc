"""Stale reads: which calls may be answered from the loaded index while Chroma is away.

CONTRACT.md section "Availability of reads and the honesty of writes": queryDecisions,
findSimilarDecisions, listDecisions and getCalibration answer from the loaded index when
Chroma cannot be reached, for up to CSTP_STALE_READS_SECONDS after the last successful
check, with `"stale": {"since": "<RFC 3339 UTC>"}` in the result. A call opts in by running
inside `stale_allowed()`; the index (a2a.index.sync.LiveIndex) marks the call when it answers
stale. Calls outside it (writes, getDecision) get StoreUnavailable (-32003) as before.
A call that found Chroma down (an org-level call whose tenant listing failed, or was
skipped while Chroma is known down: a2a.app.listing) says so with `mark_chroma_down()`:
its indexes then answer stale at once, without a check of their own (one deadline a call,
CONTRACT.md section Deadlines).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass(slots=True)
class StaleRead:
    """One call's mark: `since` (epoch seconds of the last successful check with Chroma)
    once the call was answered from an index Chroma could not confirm, else None;
    `chroma_down` once the call found Chroma down (`mark_chroma_down`)."""

    since: float | None = None
    chroma_down: bool = False


_CALL: ContextVar[StaleRead | None] = ContextVar("cstp_stale_read", default=None)


@contextmanager
def stale_allowed() -> Iterator[StaleRead]:
    """The block's reads may be answered stale; the yielded mark says whether one was."""
    mark = StaleRead()
    token = _CALL.set(mark)
    try:
        yield mark
    finally:
        _CALL.reset(token)


def may_answer_stale() -> bool:
    """True inside `stale_allowed()`."""
    return _CALL.get() is not None


def mark_stale(since: float) -> None:
    """Record that the current call is answered from the index as of `since` (epoch s)."""
    mark = _CALL.get()
    if mark is not None:
        mark.since = since if mark.since is None else min(mark.since, since)


def mark_chroma_down() -> None:
    """Record that the current call found Chroma down (inside `stale_allowed()`; else
    nothing): its indexes answer stale without asking Chroma again."""
    mark = _CALL.get()
    if mark is not None:
        mark.chroma_down = True


def chroma_known_down() -> bool:
    """True when the current call may answer stale and found Chroma down."""
    mark = _CALL.get()
    return mark is not None and mark.chroma_down


def rfc3339(epoch_seconds: float) -> str:
    """`2026-12-02T18:04:05Z`: UTC, to the second."""
    return datetime.fromtimestamp(int(epoch_seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
