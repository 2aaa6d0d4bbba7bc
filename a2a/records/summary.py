"""DecisionMetadata: the summary of a decision that every answer shows, and the one place
it is taken from a record."""

from __future__ import annotations

from typing import Any, Final, Self

from pydantic import MISSING, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from pydantic.json_schema import SkipJsonSchema

from a2a.records import DecisionRecord
from a2a.records.dates import date_text

#: The fields every summary shows of a decision besides its id (and its tenant), in wire
#: order (CONTRACT.md, DecisionMetadata).
SUMMARY_FIELDS: Final = (
    "title",
    "category",
    "confidence",
    "stakes",
    "status",
    "outcome",
    "date",
    "source",
    "recorded_by",
)


class DecisionMetadata(BaseModel):
    """The metadata every result shows of a decision; None where the record lacks a field."""

    # `date`: RFC 3339 UTC text (`2026-01-20T14:00:00Z`); `confidence` in [0, 1]. The
    # docstring above is the model's description in rpc.discover: kept as it was.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    id: str
    title: str | None
    category: str | None
    confidence: float | None
    stakes: str | None
    status: str | None
    outcome: str | None
    date: str | None
    source: str | None
    #: Agent id of the writer for records written over the protocol, None for files.
    recorded_by: str | None = None
    #: The tenant the decision belongs to (CONTRACT.md, Tenants); set on every answer.
    tenant: str | None = Field(default=None, description="the tenant of the decision")
    #: The peer service that answered it (CONTRACT.md, Federation): its configured name, or
    #: None for this service's own; absent (MISSING) from the answer of a call without peers.
    peer: SkipJsonSchema[str | MISSING | None] = MISSING

    @classmethod
    def of(cls, record: DecisionRecord) -> Self:
        """The summary of `record` (tenant unset)."""
        return cls(**summary_fields(record))

    def with_tenant(self, tenant: str) -> Self:
        """This decision naming `tenant` (in place): the tenant stamp (a2a.results). A
        peer's decision keeps the tenant its peer named."""
        if not isinstance(self.peer, str):
            self.tenant = tenant
        return self


def summary_fields(record: DecisionRecord) -> dict[str, Any]:
    """The summary fields of `record` (id, then SUMMARY_FIELDS) by field name, `date` as
    RFC 3339 UTC text: the one place they are copied from a record."""
    fields = {name: getattr(record, name) for name in ("id", *SUMMARY_FIELDS)}
    return fields | {"date": date_text(record.date)}
