"""cstp.queryDecisions params as sent on the wire, validated strictly (CONTRACT.md table)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictBool, StrictInt, StrictStr, field_validator

from a2a.records.filters import QueryFilters, WireModel

# `semantic`: Chroma cosine distance (F002's behaviour); `keyword`: BM25; `hybrid`: both,
# fused (the method and its parameters are settings: `CSTP_FUSION_METHOD`, `CSTP_HYBRID_*`).
from a2a.settings import RetrievalMode as RetrievalMode

MAX_QUERY_CHARS = 2000
MAX_LIMIT = 50


#: Cosine distance in [0, 2]; strict: bool, strings, NaN and Infinity are refused.
CosineDistance = Annotated[float, Field(ge=0, le=2, allow_inf_nan=False)]
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

    @field_validator("query")
    @classmethod
    def _query_has_text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query is empty")
        return value

    def mode_or(self, default: RetrievalMode) -> RetrievalMode:
        """The retrieval mode asked for, or `default` (the server's setting) when none was."""
        return default if self.retrieval_mode is None else self.retrieval_mode
