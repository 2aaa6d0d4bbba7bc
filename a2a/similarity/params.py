"""cstp.findSimilarDecisions params as sent on the wire, validated strictly."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import (
    AfterValidator,
    Field,
    StrictInt,
    StrictStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from a2a.query.params import MAX_LIMIT, PEERS_DESCRIPTION, Peers
from a2a.records import Stakes
from a2a.records.filters import QueryFilters, WireModel

#: Most tags a proposal may carry, and the longest tag: bounds on work and on error lists.
MAX_TAGS = 64
MAX_TAG_CHARS = 200
#: DecisionRecord.id's own bound: a longer id cannot be stored, so it is refused up front.
MAX_ID_CHARS = 200


def _has_text(value: str) -> str:
    if not value.strip():
        raise ValueError("is empty")
    return value


Tag = Annotated[StrictStr, Field(max_length=MAX_TAG_CHARS), AfterValidator(_has_text)]
TagList = Annotated[list[Tag], Field(max_length=MAX_TAGS)]
Category = Annotated[StrictStr, AfterValidator(_has_text)]
DecisionId = Annotated[StrictStr, Field(min_length=1, max_length=MAX_ID_CHARS)]


class Proposal(WireModel):
    """The structure of a decision under consideration; its wording is not asked for.

    Tags compare case-insensitively after trimming; a field left out scores 0 for its
    component. At least one field is required, or nothing could ever match.
    """

    tags: TagList | None = None
    category: Category | None = None
    stakes: Stakes | None = None

    @model_validator(mode="after")
    def _names_a_field(self) -> Self:
        if self.tags is None and self.category is None and self.stakes is None:
            raise ValueError("needs at least one of tags, category, stakes")
        return self


class FindSimilarDecisionsParams(WireModel):
    """Params of cstp.findSimilarDecisions: exactly one of `proposal` or `decisionId`.

    `filters` and `limit` follow cstp.queryDecisions (CONTRACT.md params table). Both given is
    an error on `decisionId`; neither given is an error on `params` (the object as a whole).
    """

    proposal: Proposal | None = None
    decision_id: DecisionId | None = None
    filters: QueryFilters | None = None
    limit: StrictInt = Field(default=10, ge=1, le=MAX_LIMIT)
    #: Ask these peer services too, by proposal (CONTRACT.md, Federation); None: alone.
    peers: Peers | None = Field(
        default=None,
        description=f"{PEERS_DESCRIPTION} By `proposal` only: a `decisionId` is this service's.",
    )

    @field_validator("decision_id")
    @classmethod
    def _not_with_proposal(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and info.data.get("proposal") is not None:
            raise ValueError("not allowed together with proposal (give exactly one of them)")
        return value

    @model_validator(mode="after")
    def _has_a_probe(self) -> Self:
        if self.proposal is None and self.decision_id is None:
            raise ValueError("give exactly one of proposal or decisionId")
        return self
