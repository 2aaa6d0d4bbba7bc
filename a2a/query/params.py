"""cstp.queryDecisions params as sent on the wire, validated strictly (CONTRACT.md table)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
    PlainValidator,
    StrictBool,
    StrictInt,
    StrictStr,
    WithJsonSchema,
    field_validator,
)

from a2a.records.filters import QueryFilters, WireModel

# `semantic`: Chroma cosine distance (F002's behaviour); `keyword`: BM25; `hybrid`: both,
# fused (the method and its parameters are settings: `CSTP_FUSION_METHOD`, `CSTP_HYBRID_*`).
from a2a.settings import RetrievalMode as RetrievalMode

MAX_QUERY_CHARS = 2000
MAX_LIMIT = 50


#: Cosine distance in [0, 2]; strict: bool, strings, NaN and Infinity are refused.
CosineDistance = Annotated[float, Field(ge=0, le=2, allow_inf_nan=False)]
#: Most peer names one call may list.
MAX_PEERS = 32


def _peer_names(value: object) -> list[str] | Literal["*"]:
    if value == "*":
        return "*"
    if (
        not isinstance(value, list)
        or not 1 <= len(value) <= MAX_PEERS
        or not all(isinstance(name, str) and 1 <= len(name) <= 63 for name in value)
    ):
        raise ValueError(f'must be "*" or a list of 1 to {MAX_PEERS} peer names')
    return value


#: `peers` (CONTRACT.md, Federation): peer names (each checked against the peers file by
#: the federated source, a2a.app.federated), or "*" for every configured peer. Each field
#: taking it says what it does there in its own description: MCP clients and the agents
#: reading a tool's input schema see a property's top-level description, not one inside
#: its `anyOf`.
PEERS_DESCRIPTION = (
    'Also ask these peer services (names from cstp.listPeers), or "*" for all of them: one'
    " list of at most `limit`, each decision naming its `peer` (null: this service's own),"
    " with a `peers` block saying which answered, `merge` and `partial`."
)
Peers = Annotated[
    list[str] | Literal["*"],
    PlainValidator(_peer_names),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 32},
                {"const": "*"},
            ],
        }
    ),
]
#: A half-life in days: a finite number above 0 (CONTRACT.md, Lifecycle: Recency).
HalfLifeDays = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class QueryDecisionsParams(WireModel):
    """Params of cstp.queryDecisions (F002; CONTRACT.md section cstp.queryDecisions params).

    `retrievalMode`, `maxDistance` and `explain` extend F002; absent, they give F002's
    behaviour. `retrieval_mode` is None when the caller did not choose: the service then
    uses the server's `default_retrieval_mode` setting (`CSTP_DEFAULT_RETRIEVAL_MODE`,
    itself `semantic` unless configured). `max_distance` (None: no bound) leaves out
    results whose cosine distance exceeds it, in every mode.
    """

    query: StrictStr = Field(max_length=MAX_QUERY_CHARS)
    filters: QueryFilters | None = None
    limit: StrictInt = Field(default=10, ge=1, le=MAX_LIMIT)
    include_reasons: StrictBool = False
    retrieval_mode: RetrievalMode | None = None
    max_distance: CosineDistance | None = None
    explain: StrictBool = False
    #: CONTRACT, Exact or approximate: true always scans; false lets the planner walk the
    #: graph where its measured recall@10 is >= 0.99 (a2a.index.search_index.plan).
    exact: StrictBool = False
    recency_half_life_days: HalfLifeDays | None = None
    #: Ask these peer services too (CONTRACT.md, Federation); None: this service alone.
    peers: Peers | None = Field(default=None, description=PEERS_DESCRIPTION)

    @field_validator("query")
    @classmethod
    def _query_has_text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query is empty")
        return value

    def mode_or(self, default: RetrievalMode) -> RetrievalMode:
        """The retrieval mode asked for, or `default` (the server's setting) when none was."""
        return default if self.retrieval_mode is None else self.retrieval_mode
