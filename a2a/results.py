"""The base of every result model: snake_case in Python, camelCase on the wire, the fields
left off the wire while empty, and what any answer may carry besides its own fields (the
stale mark; a federated answer's `peers` block, `partial` and `merge`). The wire itself is
made once, by a2a.rpc (`protocol.to_wire`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self

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


#: The agent card's extension naming the service's embedding model (CONTRACT.md,
#: Federation): peers compare it to tell whether their distances can be merged.
EMBEDDING_MODEL_EXTENSION = "urn:cstp:embedding-model:v1"


class EmbeddingModel(WireModel):
    """An embedding model's identity: the `name` its collection records and the
    `dimensions` of its vectors; two services' distances compare only when both are equal."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str = Field(min_length=1, max_length=200)
    dimensions: int = Field(ge=1, le=65_536, strict=True)


#: How a federated answer's lists were merged (CONTRACT.md, Federation): by `distance`
#: (every answering service embeds with the same model) or by `rank` (reciprocal rank fusion).
Merge = Literal["distance", "rank"]
#: A peer's part in a federated call: answered, failed (error, timeout, bad answer), or
#: skipped (its circuit open).
PeerStatus = Literal["successful", "failed", "skipped"]


class PeerError(WireModel):
    """Why a peer failed: a JSON-RPC `code` (the peer's own, or -32003 when it did not
    answer usably) and a short `message` of ours: never a token, a URL or a stack."""

    code: int
    message: str


class PeerDetail(WireModel):
    """One peer asked: its name, status, wall time (ms), the decisions it returned, and
    `error` (failed) or `stale` (its answer was stale, as it said) when there is one."""

    peer: str
    status: PeerStatus
    took_ms: int
    decisions: int
    error: PeerError | None = absent_when_none()
    stale: Stale | None = absent_when_none()


class PeersBlock(WireModel):
    """The `peers` block of a federated answer, as Elasticsearch's `_clusters`: how many
    peers were asked, how many answered, failed or were skipped, and each one's detail in
    the order asked."""

    total: int
    successful: int
    failed: int
    skipped: int
    details: list[PeerDetail]

    @classmethod
    def of(cls, details: list[PeerDetail]) -> PeersBlock:
        """The block counting `details`."""
        statuses = [d.status for d in details]
        return cls(
            total=len(details),
            successful=statuses.count("successful"),
            failed=statuses.count("failed"),
            skipped=statuses.count("skipped"),
            details=details,
        )


class FederatedResult(DecisionsResult):
    """A result that may have been answered with peers (queryDecisions,
    findSimilarDecisions): `peers`, `merge` and `partial` (true when any peer asked is not
    `successful`) only on a call that named peers. Described by CONTRACT.md, not the
    result schema."""

    peers: SkipJsonSchema[PeersBlock | None] = absent_when_none()
    merge: SkipJsonSchema[Merge | None] = absent_when_none()
    partial: SkipJsonSchema[bool | None] = absent_when_none()
