"""The base of every result model: snake_case in Python, camelCase on the wire, the fields
left off the wire while empty, and what any answer may carry besides its own fields (the
stale mark). The wire itself is made once, by a2a.rpc (`protocol.to_wire`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, Self

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from pydantic.json_schema import SkipJsonSchema


def _none(value: object) -> bool:
    return value is None


def absent_when_none(default: Any = None, **field: Any) -> Any:
    """A field left off the wire while it is None (`note`, `reason`, `score`...)."""
    return Field(default, exclude_if=_none, **field)


class WireModel(BaseModel):
    """A result as sent: fields by their camelCase alias (CONTRACT.md), built by field name."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    def with_tenant(self, tenant: str) -> Self:
        """The tenant stamp (CONTRACT.md, Tenants: every summary carries its tenant): this
        result with `tenant` on each decision it carries, in place; unchanged when it
        carries none."""
        return self


class Stale(WireModel):
    """The stale mark: `since`, RFC 3339 UTC of the last successful check with Chroma
    (CONTRACT.md, "Availability of reads and the honesty of writes")."""

    since: str


class Result(WireModel):
    """The result of a method that may answer from the loaded index while Chroma is away:
    `stale` is set then (a2a.app.steps) and absent from a fresh answer; the wire sends it
    last (a2a.rpc.protocol.to_wire). It is described by CONTRACT.md, not by the method's
    result schema."""

    stale: SkipJsonSchema[Stale | None] = absent_when_none()

    def with_stale(self, since: str) -> Self:
        """This result marked stale since `since` (RFC 3339 UTC)."""
        self.stale = Stale(since=since)
        return self


class Stampable(Protocol):
    """A decision in a result, which the tenant stamp names its tenant on."""

    def with_tenant(self, tenant: str) -> Any: ...


class DecisionsResult(Result):
    """A result that carries `decisions` (queryDecisions, findSimilarDecisions,
    listDecisions): the tenant stamp names the tenant on each of them, in place."""

    if TYPE_CHECKING:  # each result declares its own list of decisions
        decisions: Sequence[Stampable]

    def with_tenant(self, tenant: str) -> Self:
        for decision in self.decisions:
            decision.with_tenant(tenant)
        return self
