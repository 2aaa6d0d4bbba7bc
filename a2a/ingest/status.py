"""Map the status words people write in ADRs onto the record status vocabulary."""

from __future__ import annotations

import re
from typing import Final

from a2a.records import Status

#: Leading phrase (lower case, words separated by single spaces) -> record status.
#: Extras beyond the obvious: "on hold" counts as pending (the decision waits), the common
#: misspelling "superceded" as superseded.
STATUS_WORDS: Final[dict[str, Status]] = {
    "accepted": "decided",
    "approved": "decided",
    "agreed": "decided",
    "adopted": "decided",
    "decided": "decided",
    "done": "decided",
    "implemented": "decided",
    "proposed": "proposed",
    "proposal": "proposed",
    "draft": "proposed",
    "open": "proposed",
    "in progress": "proposed",
    "work in progress": "proposed",
    "wip": "proposed",
    "under review": "proposed",
    "in review": "proposed",
    "under discussion": "proposed",
    "superseded": "superseded",
    "superceded": "superseded",
    "replaced": "superseded",
    "deprecated": "deprecated",
    "retired": "deprecated",
    "obsolete": "deprecated",
    "rejected": "rejected",
    "declined": "rejected",
    "abandoned": "rejected",
    "withdrawn": "rejected",
    "pending": "pending",
    "on hold": "pending",
    "reviewed": "reviewed",
}

_LINK: Final = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_NON_WORD: Final = re.compile(r"[^a-z0-9]+")
_PHRASES: Final = sorted(STATUS_WORDS, key=len, reverse=True)


def normalise_status_text(raw: str) -> str:
    """`raw` lower-cased with links reduced to their text and everything but letters and digits
    collapsed to single spaces: "✅ **Accepted** (2020-01-02)" -> "accepted 2020 01 02"."""
    text = _LINK.sub(r"\1", raw).lower()
    return _NON_WORD.sub(" ", text).strip()


def _leading_status(words: str) -> Status | None:
    for phrase in _PHRASES:
        if words == phrase or words.startswith(phrase + " "):
            return STATUS_WORDS[phrase]
    return None


def _is_choice(words: str, first: str) -> bool:
    """True for an unfilled template like "Accepted or Rejected"."""
    for phrase in _PHRASES:
        if words.startswith(phrase + " "):
            rest = words[len(phrase) + 1 :]
            if rest.startswith("or "):
                second = _leading_status(rest[3:])
                return second is not None and second != first
    return False


def map_status(raw: str) -> Status | None:
    """The record status for an ADR status text, or None when it names no known status.

    Tolerates case, emoji, Markdown bold/code/links and anything after the status word:
    "Superseded by [ADR 16](0016.md)" -> "superseded", "✅ Accepted (2020-01-02)" ->
    "decided", "Accepted or Rejected" (an unfilled template) -> None.
    """
    words = normalise_status_text(raw)
    status = _leading_status(words)
    if status is None or _is_choice(words, status):
        return None
    return status
