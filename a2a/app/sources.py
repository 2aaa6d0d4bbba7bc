"""Where answers come from: one seam, as httpx's BaseTransport is one method.

An AnswerSource answers cstp.queryDecisions and cstp.findSimilarDecisions with typed results
(a2a.results; the wire is a2a.rpc's). `TenantSource` is one tenant's services over its
search index; `a2a.app.org.OrgSource` the union of the granted tenants (`tenant: "*"`). The
method table is written once over the seam (a2a.app.methods.answer_methods), so another
source (a peer service) is one more class with these two methods, given to that function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from a2a.query.params import QueryDecisionsParams
from a2a.query.results import QueryDecisionsResult
from a2a.query.service import QueryService
from a2a.rpc.methods import CallContext
from a2a.similarity.params import FindSimilarDecisionsParams
from a2a.similarity.results import FindSimilarDecisionsResult
from a2a.similarity.service import SimilarityService


class AnswerSource(Protocol):
    """Answers the read methods for `ctx`'s caller. Raises what the methods answer as errors
    (InvalidParams, StoreUnavailable, Saturated: CONTRACT.md), never a wire object."""

    async def query(
        self, params: QueryDecisionsParams, ctx: CallContext
    ) -> QueryDecisionsResult: ...

    async def find_similar(
        self, params: FindSimilarDecisionsParams, ctx: CallContext
    ) -> FindSimilarDecisionsResult: ...


@dataclass(frozen=True, slots=True)
class TenantSource:
    """One tenant's answers: its query service and similarity service (over its index)."""

    queries: QueryService
    similar: SimilarityService

    async def query(self, params: QueryDecisionsParams, ctx: CallContext) -> QueryDecisionsResult:
        """The tenant's decisions close to `params.query`, ranked."""
        return await self.queries.query_decisions(params)

    async def find_similar(
        self, params: FindSimilarDecisionsParams, ctx: CallContext
    ) -> FindSimilarDecisionsResult:
        """The tenant's decisions structurally like the probe, ranked."""
        return await self.similar.find_similar_decisions(params)
