"""Params of the decision methods as sent on the wire, validated strictly (CONTRACT.md,
"Decision records written over the protocol")."""

from __future__ import annotations

import copy
import re
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

from pydantic import AfterValidator, Field, StrictInt, StrictStr, create_model

from a2a.records import Outcome, Stakes, Status
from a2a.records.dates import parse_bound
from a2a.records.filters import Confidence, QueryFilters, WireModel

MAX_TITLE_CHARS: Final = 500
MAX_REASONS: Final = 20
MAX_TAGS: Final = 64
MAX_LESSONS_CHARS: Final = 4000
MAX_ID_CHARS: Final = 200
MAX_LIST_LIMIT: Final = 100
#: Longest cursor read: ours are about 150 characters; a bound keeps a huge one cheap.
MAX_CURSOR_CHARS: Final = 1000
#: Most ids in one of `supersedes` / `relatedTo` (CONTRACT.md, Lifecycle: Links).
MAX_LINKS: Final = 20
#: Longest `reason` of an update or a delete, and a reason's text (CONTRACT.md, Lifecycle;
#: "Bounded text").
MAX_REASON_CHARS: Final = 1000
#: Longest `context` and `decision` texts (CONTRACT.md, "Bounded text").
MAX_TEXT_CHARS: Final = 10_000
#: Longest tag; a tag has at least one character.
MAX_TAG_CHARS: Final = 64
_DATE_ONLY = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


def _instant(value: str) -> str:
    """An RFC 3339 date-time with an offset (a bare date or a naive time is refused)."""
    if _DATE_ONLY.match(value):
        raise ValueError("expected an RFC 3339 date-time with offset, not a bare date")
    parse_bound(value, "after")
    return value


def _has_text(value: str) -> str:
    if not value.strip():
        raise ValueError("is empty")
    return value


#: An id a writer may choose: 1..200 characters of `[A-Za-z0-9._:-]` (no `/`, no spaces).
NewDecisionId = Annotated[
    StrictStr, Field(min_length=1, max_length=MAX_ID_CHARS, pattern=r"^[A-Za-z0-9._:-]+$")
]
#: Any stored id (records from files may use other characters).
DecisionId = Annotated[StrictStr, Field(min_length=1, max_length=MAX_ID_CHARS)]
Instant = Annotated[StrictStr, AfterValidator(_instant)]
Text = Annotated[StrictStr, AfterValidator(_has_text)]
ReviewStatus = Literal["reviewed", "superseded", "deprecated"]
Order = Literal["dateDesc", "dateAsc"]


class ReasonInput(WireModel):
    """One reason: its type (`analysis`, `pattern`, `alternative`, ...) and its text."""

    type: Annotated[Text, Field(max_length=100)]
    text: Annotated[StrictStr, Field(max_length=MAX_REASON_CHARS)] = ""


class DecisionInput(WireModel):
    """A decision as a writer sends it. Unknown keys (`recordedBy`, `recordedAt` included)
    are refused: those two come from the token and the server clock.
    """

    id: NewDecisionId | None = None
    title: Annotated[Text, Field(max_length=MAX_TITLE_CHARS)]
    category: Annotated[Text, Field(max_length=200)] | None = None
    confidence: Confidence | None = None
    stakes: Stakes | None = None
    status: Status | None = None
    outcome: Outcome | None = None
    date: Instant | None = None
    context: Annotated[StrictStr, Field(max_length=MAX_TEXT_CHARS)] | None = None
    decision: Annotated[StrictStr, Field(max_length=MAX_TEXT_CHARS)] | None = None
    reasons: Annotated[list[ReasonInput], Field(max_length=MAX_REASONS)] = Field(
        default_factory=list
    )
    tags: Annotated[
        list[Annotated[Text, Field(min_length=1, max_length=MAX_TAG_CHARS)]],
        Field(max_length=MAX_TAGS),
    ] = Field(default_factory=list)
    supersedes: Annotated[list[DecisionId], Field(max_length=MAX_LINKS)] = Field(
        default_factory=list
    )
    related_to: Annotated[list[DecisionId], Field(max_length=MAX_LINKS)] = Field(
        default_factory=list
    )

    def digest_fields(self) -> dict[str, object]:
        """What identifies the content sent (a retry's test): the fields as JSON, empty
        link lists left out so a decision recorded before links existed keeps its digest."""
        empty = {name for name in ("supersedes", "related_to") if not getattr(self, name)}
        return self.model_dump(mode="json", exclude=empty)


class RecordDecisionParams(WireModel):
    """Params of cstp.recordDecision: `{"decision": {...}}`."""

    decision: DecisionInput


class ReviewDecisionParams(WireModel):
    """Params of cstp.reviewDecision. `lessons` left out keeps the lessons already stored."""

    id: DecisionId
    outcome: Outcome
    status: ReviewStatus = "reviewed"
    lessons: Annotated[StrictStr, Field(max_length=MAX_LESSONS_CHARS)] | None = None
    reviewed_at: Instant | None = None

    @property
    def reviewed_instant(self) -> datetime | None:
        """reviewedAt as a UTC instant, or None (the service then uses its clock)."""
        return None if self.reviewed_at is None else parse_bound(self.reviewed_at, "after")


class GetDecisionParams(WireModel):
    """Params of cstp.getDecision: `{"id"}`, and `peer` to read a peer service's record
    (CONTRACT.md, Federation; a2a.app.federated)."""

    id: DecisionId
    peer: Annotated[StrictStr, Field(min_length=1, max_length=63)] | None = Field(
        default=None,
        description="The peer service the decision came from: its `peer` in a search"
        " answered with `peers`. Omitted: a decision of this service.",
    )


class ListDecisionsParams(WireModel):
    """Params of cstp.listDecisions; `cursor` is a `nextCursor` from an earlier page."""

    filters: QueryFilters | None = None
    order: Order = "dateDesc"
    limit: StrictInt = Field(default=20, ge=1, le=MAX_LIST_LIMIT)
    cursor: Annotated[StrictStr, Field(max_length=MAX_CURSOR_CHARS)] | None = None


class GetCalibrationParams(WireModel):
    """Params of cstp.getCalibration: filters, and the number of equal-width bins."""

    filters: QueryFilters | None = None
    bins: StrictInt = Field(default=5, ge=2, le=20)


#: The fields cstp.updateDecision may change (CONTRACT.md, Lifecycle), snake_case.
CHANGEABLE: Final = (
    "title",
    "category",
    "confidence",
    "stakes",
    "status",
    "context",
    "decision",
    "reasons",
    "tags",
    "supersedes",
    "related_to",
)


def _changes_model() -> type[WireModel]:
    """DecisionChanges: each CHANGEABLE field with DecisionInput's own rules, all optional.

    Built from DecisionInput's fields, so any rule added there holds for an update too.
    A key sent as null clears that field (refused for `title`, which a record needs, and
    for the lists, which are cleared with `[]`).
    """
    fields: dict[str, Any] = {}
    for name in CHANGEABLE:
        info = copy.copy(DecisionInput.model_fields[name])
        info.default, info.default_factory = None, None
        fields[name] = (info.annotation, info)
    model: type[WireModel] = create_model(
        "DecisionChanges",
        __base__=WireModel,
        __doc__="The changes of cstp.updateDecision: any of the changeable fields.",
        **fields,
    )
    return model


if TYPE_CHECKING:
    DecisionChanges = WireModel
else:
    DecisionChanges = _changes_model()


def _some_change(value: WireModel) -> WireModel:
    if not value.model_fields_set:
        raise ValueError("names no field to change")
    return value


class UpdateDecisionParams(WireModel):
    """Params of cstp.updateDecision: `{"id", "changes": {...}, "reason"}`."""

    id: DecisionId
    changes: Annotated[DecisionChanges, AfterValidator(_some_change)]
    reason: Annotated[Text, Field(max_length=MAX_REASON_CHARS)]


class DeleteDecisionParams(WireModel):
    """Params of cstp.deleteDecision: `{"id", "reason"}`."""

    id: DecisionId
    reason: Annotated[Text, Field(max_length=MAX_REASON_CHARS)]


class GetStatsParams(WireModel):
    """Params of cstp.getStats: filters (as queryDecisions')."""

    filters: QueryFilters | None = None


class CheckDriftParams(WireModel):
    """Params of cstp.checkDrift: the recent and baseline windows (days), the grouping."""

    recent_days: StrictInt = Field(default=30, ge=1, le=365)
    baseline_days: StrictInt = Field(default=180, ge=1, le=3650)
    group_by: Literal["category", "agent"] = "category"
    filters: QueryFilters | None = None
