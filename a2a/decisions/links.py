"""Links between decisions (supersedes, relatedTo), kept both ways: pure functions over records.

CONTRACT.md, "Lifecycle of a decision": links name decisions of the same store; an unknown
id or a cycle of supersession is refused; a superseded decision gets status `superseded`
and `supersededBy`; a deleted decision leaves no dangling link.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Final

from a2a.errors import FieldError
from a2a.records import Change, DecisionRecord

#: The link lists of a record and, for each, the list that holds its reverse on the target.
REVERSE: Final = {
    "supersedes": "superseded_by",
    "superseded_by": "supersedes",
    "related_to": "related_from",
    "related_from": "related_to",
}
#: Wire names of the link fields a writer sends.
WIRE_NAMES: Final = {"supersedes": "supersedes", "related_to": "relatedTo"}
SUPERSEDED: Final = "superseded"
#: Status a superseded decision returns to when no record supersedes it any more and its
#: history does not say what it was before.
DEFAULT_STATUS: Final = "decided"


def link_errors(
    record_id: str,
    links: Mapping[str, Sequence[str]],
    known: Mapping[str, DecisionRecord],
    prefix: str,
) -> list[FieldError]:
    """-32602 entries for each link that names no stored decision, the record itself, or an
    id already listed (`decision.supersedes[0]`); `links` maps `supersedes` / `related_to`
    to the ids sent, `known` the stored records by id, `prefix` `decision` or `changes`."""
    errors = []
    for name, ids in links.items():
        seen: set[str] = set()
        for n, target in enumerate(ids):
            field = f"{prefix}.{WIRE_NAMES[name]}[{n}]"
            if target == record_id:
                errors.append(FieldError(field, "a decision cannot link to itself"))
            elif target in seen:
                errors.append(FieldError(field, "listed twice"))
            elif target not in known:
                errors.append(FieldError(field, "no decision with this id"))
            seen.add(target)
    return errors


def reaches(start: Sequence[str], goal: str, supersedes: Mapping[str, Sequence[str]]) -> bool:
    """True when `goal` is reachable from any of `start` by following `supersedes` (id ->
    the ids it supersedes; ids missing from the mapping lead nowhere)."""
    seen, frontier = set(start), list(start)
    while frontier:
        node = frontier.pop()
        if node == goal:
            return True
        for nxt in supersedes.get(node, ()):
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    return False


def relink(
    target: DecisionRecord,
    source: str,
    field: str,
    present: bool,
    *,
    at: datetime,
    by: str | None,
) -> DecisionRecord:
    """`target` with `source` added to (`present`) or removed from its reverse list of
    `field` (the source's link field). Becoming superseded sets status `superseded`; losing
    its last superseder restores the status it had before (from its history). Each status
    change is kept in the target's history; the other reverse lists change silently.
    """
    reverse = REVERSE[field]
    before: list[str] = getattr(target, reverse)
    after = [i for i in before if i != source] + ([source] if present else [])
    if after == before or (present and source in before):
        return target
    update: dict[str, object] = {reverse: after}
    if reverse != "superseded_by":
        return target.model_copy(update=update)
    old_status = target.status
    new_status: str | None
    if present:
        new_status = SUPERSEDED
        reason = f"superseded by {source}"
    else:
        new_status = old_status if after or old_status != SUPERSEDED else _status_before(target)
        reason = f"no longer superseded by {source}"
    changes: dict[str, tuple[object, object]] = {"supersededBy": (before, after)}
    if new_status != old_status:
        changes["status"] = (old_status, new_status)
        update["status"] = new_status
    entry = Change(at=at, by=by, reason=reason, changes=changes)
    update["history"] = [*target.history, entry]
    return target.model_copy(update=update)


def _status_before(record: DecisionRecord) -> str | None:
    """The status `record` had before it was superseded, from its history: null if it had
    none (not the text "None"), DEFAULT_STATUS if the history does not say."""
    for entry in reversed(record.history):
        status = entry.changes.get("status")
        if status is not None and status[1] == SUPERSEDED and status[0] != SUPERSEDED:
            return None if status[0] is None else str(status[0])
    return DEFAULT_STATUS


def neighbours(record: DecisionRecord) -> set[str]:
    """Every id `record` links to or is linked from."""
    return {i for name in REVERSE for i in getattr(record, name)}


def unlinked(record: DecisionRecord, gone: str) -> DecisionRecord:
    """`record` with `gone` left out of every link list (a neighbour of a deleted decision).

    The status effect of losing a superseder is `relink`'s; call that for `superseded_by`.
    """
    update = {name: [i for i in getattr(record, name) if i != gone] for name in REVERSE}
    return record.model_copy(update=update)


def detached(
    others: Iterable[DecisionRecord], gone: DecisionRecord, *, at: datetime, by: str | None
) -> list[DecisionRecord]:
    """`others` (neighbours of `gone`, a decision being removed) with every link to it left
    out, in order. One that loses its last superseder gets back the status it had before
    (`relink`), with that change in its history; `by` None is the service itself.
    """
    out = []
    for other in others:
        for name in REVERSE:
            if other.id in getattr(gone, name):
                other = relink(other, gone.id, name, False, at=at, by=by)
        out.append(unlinked(other, gone.id))
    return out
