"""One decision as one line of an export file, and a line back into a decision record.

A line is the record as cstp.getDecision returns it (a2a.decisions.results.DecisionResult,
`history` and `links` included), without `tenant`: the tenant is the one the file is
imported into. A line read back is checked with recordDecision's rules and messages
(a2a.decisions.params.DecisionInput) for a decision written over the protocol
(`recordedBy` set); a record indexed from a file (`recordedBy` null) keeps the looser
rules of files (no bounds on its texts, any outcome), so every exported record goes back
in (CONTRACT.md, "Moving data: export and import").
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Final

from pydantic import Field, StrictStr, ValidationError

from a2a.decisions.params import DecisionId, DecisionInput, Instant
from a2a.decisions.results import DecisionResult
from a2a.errors import ImportLineError
from a2a.records import Change, DecisionRecord, Reason, Stakes, Status
from a2a.records.dates import parse_bound
from a2a.records.filters import Confidence, WireModel
from a2a.rpc.methods import field_errors

#: Longest line read (bytes, newline included); a longer one is a bad line. A record at
#: every bound of recordDecision is ~60 KB; a long history adds its changes.
MAX_LINE_BYTES: Final = 16 * 1024 * 1024
#: The fields of a line that recordDecision checks for a decision written over the protocol.
CONTENT: Final = (
    *("title", "category", "confidence", "stakes", "status", "outcome", "date"),
    *("context", "decision", "reasons", "tags"),
)


def wire_of(record: DecisionRecord) -> dict[str, Any]:
    """`record` as cstp.getDecision returns it, less `tenant` (JSON values, camelCase)."""
    return DecisionResult.of(record).model_dump(mode="json", by_alias=True, exclude={"tenant"})


def line_of(record: DecisionRecord) -> bytes:
    """`record` as one line of an export file: compact UTF-8 JSON and a newline, keys in
    getDecision's order (the same record always gives the same bytes)."""
    text = json.dumps(wire_of(record), ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8") + b"\n"


class ReasonLine(WireModel):
    """A reason as a line holds it."""

    type: Annotated[StrictStr, Field(min_length=1)]
    text: StrictStr = ""


class ChangeLine(WireModel):
    """A history entry as a line holds it (a2a.decisions.results.ChangeResult)."""

    at: Instant
    by: StrictStr | None
    reason: StrictStr
    changes: dict[StrictStr, tuple[Any, Any]]


class LinksLine(WireModel):
    """The links of a line: ids of decisions in the same file or already stored."""

    supersedes: list[DecisionId] = Field(default_factory=list)
    superseded_by: list[DecisionId] = Field(default_factory=list)
    related_to: list[DecisionId] = Field(default_factory=list)


class DecisionLine(WireModel):
    """One line of an import file: getDecision's fields, `id` and `title` required."""

    id: DecisionId
    title: Annotated[StrictStr, Field(min_length=1)]
    category: StrictStr | None = None
    confidence: Confidence | None = None
    stakes: Stakes | None = None
    status: Status | None = None
    outcome: StrictStr | None = None
    date: Instant | None = None
    source: StrictStr | None = None
    recorded_by: StrictStr | None = None
    #: getDecision's tenant stamp, taken and ignored: the import names the tenant.
    tenant: StrictStr | None = None
    recorded_at: Instant | None = None
    context: StrictStr | None = None
    decision: StrictStr | None = None
    reasons: list[ReasonLine] = Field(default_factory=list)
    tags: list[StrictStr] = Field(default_factory=list)
    lessons: StrictStr | None = None
    reviewed_at: Instant | None = None
    superseded_by: DecisionId | None = None
    links: LinksLine = Field(default_factory=LinksLine)
    history: list[ChangeLine] = Field(default_factory=list)

    def targets(self) -> set[str]:
        """Every id this line links to."""
        links = self.links
        return {*links.supersedes, *links.superseded_by, *links.related_to}


def parse_line(raw: bytes, number: int) -> DecisionLine:
    """Line `number` of an import file, checked. Raises ImportLineError naming each bad field
    (`confidence: Input should be less than or equal to 1`), as recordDecision does."""
    if len(raw) >= MAX_LINE_BYTES:
        raise ImportLineError(number, [f"line: longer than {MAX_LINE_BYTES} bytes"])
    try:
        line = DecisionLine.model_validate_json(raw)
    except ValidationError as exc:
        raise ImportLineError(number, _reasons(exc)) from None
    reasons = _protocol_rules(line) + _link_rules(line)
    if reasons:
        raise ImportLineError(number, reasons)
    return line


def record_of(line: DecisionLine) -> DecisionRecord:
    """The record to store for a checked line. Each `relatedTo` id is kept both ways
    (`related_to` and `related_from`): getDecision shows one list for both directions, so
    an export does not say which side wrote the link; kept on both, every later update or
    delete keeps the two ends alike."""
    links = line.links
    return DecisionRecord(
        **line.model_dump(include={"id", "title", "category", "confidence", "stakes"}),
        **line.model_dump(include={"status", "outcome", "source", "recorded_by", "context"}),
        **line.model_dump(include={"decision", "tags", "lessons"}),
        date=_instant(line.date),
        recorded_at=_instant(line.recorded_at),
        reviewed_at=_instant(line.reviewed_at),
        reasons=[Reason(type=r.type, text=r.text) for r in line.reasons],
        history=[
            Change(at=parse_bound(c.at, "after"), by=c.by, reason=c.reason, changes=c.changes)
            for c in line.history
        ],
        supersedes=list(links.supersedes),
        superseded_by=list(links.superseded_by),
        related_to=list(links.related_to),
        related_from=list(links.related_to),
    )


def _instant(text: str | None) -> Any:
    return None if text is None else parse_bound(text, "after")


def _reasons(exc: ValidationError) -> list[str]:
    """pydantic's errors as `field: why`, a line that is no JSON object said plainly."""
    reasons = []
    for error in field_errors(exc):
        if error.reason.startswith("Invalid JSON"):
            reasons.append(f"line: not JSON ({error.reason})")
        elif error.field == "params":
            reasons.append(f"line: {error.reason}")
        else:
            reasons.append(f"{error.field}: {error.reason}")
    return reasons


def _protocol_rules(line: DecisionLine) -> list[str]:
    """recordDecision's rules and messages, for a decision written over the protocol."""
    if line.recorded_by is None:
        return []
    sent = line.model_dump(include=set(CONTENT), by_alias=True)
    sent = {key: value for key, value in sent.items() if value is not None}
    sent |= {"id": line.id, "supersedes": line.links.supersedes}
    try:
        DecisionInput.model_validate(sent)
    except ValidationError as exc:
        return [
            f"{'links.' if e.field.startswith('supersedes') else ''}{e.field}: {e.reason}"
            for e in field_errors(exc)
        ]
    return []


def _link_rules(line: DecisionLine) -> list[str]:
    """A link to the decision itself or to one id twice, and a `supersededBy` that is not
    the last of `links.supersededBy` (as getDecision shows it)."""
    reasons = []
    for name in ("supersedes", "superseded_by", "related_to"):
        seen: set[str] = set()
        wire = {"superseded_by": "supersededBy", "related_to": "relatedTo"}.get(name, name)
        for n, target in enumerate(getattr(line.links, name)):
            if target == line.id:
                reasons.append(f"links.{wire}[{n}]: a decision cannot link to itself")
            elif target in seen:
                reasons.append(f"links.{wire}[{n}]: listed twice")
            seen.add(target)
    last = line.links.superseded_by[-1] if line.links.superseded_by else None
    if line.superseded_by != last:
        reasons.append("supersededBy: must be the last of links.supersededBy")
    return reasons
