"""CSTPClient (sync) and AsyncCSTPClient: typed calls to a cstp service over httpx."""

from __future__ import annotations

from types import TracebackType
from typing import Any, Self

import httpx

from a2a.client.decisions import AsyncDecisionCalls, DecisionCalls
from a2a.client.errors import TransportError
from a2a.client.peers import LIST_PEERS, ListPeersResult, PeerNames, peers_param
from a2a.client.tenants import LIST_TENANTS, ListTenantsResult, with_tenant
from a2a.client.wire import DEFAULT_URL, RequestIds, endpoint, headers, read_result, request_body
from a2a.docs.models import SearchDocsResult
from a2a.query.results import QueryDecisionsResult
from a2a.similarity.results import FindSimilarDecisionsResult

#: Seconds to wait for the service (connect, read, write) unless told otherwise.
DEFAULT_TIMEOUT = 30.0


def _query_params(query: str, filters: dict[str, Any] | None, **options: Any) -> dict[str, Any]:
    """Params by wire name; options left at None are not sent (the service's defaults)."""
    wire_names = {
        "limit": "limit",
        "include_reasons": "includeReasons",
        "retrieval_mode": "retrievalMode",
        "explain": "explain",
        "max_distance": "maxDistance",
        "recency_half_life_days": "recencyHalfLifeDays",
        "peers": "peers",
    }
    params: dict[str, Any] = {"query": query}
    if filters:
        params["filters"] = filters
    params.update({wire_names[k]: v for k, v in options.items() if v is not None})
    return params


def _similar_params(
    proposal: dict[str, Any] | None,
    decision_id: str | None,
    filters: dict[str, Any] | None,
    limit: int | None,
    peers: PeerNames | None = None,
) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if proposal is not None:
        params["proposal"] = proposal
    if decision_id is not None:
        params["decisionId"] = decision_id
    if filters:
        params["filters"] = filters
    if limit is not None:
        params["limit"] = limit
    if peers is not None:
        params["peers"] = peers_param(peers)
    return params


class CSTPClient(DecisionCalls):
    """A blocking client. Every call raises the CSTPError subclass of the code it got.

    `url` is the service's base URL (`/cstp` is added when missing); `token` is sent as
    `Authorization: Bearer <token>`. `tenant` (a name, or "*" where the method takes it) is
    sent as every call's `tenant` but cstp.listTenants'; None sends none (the token's one
    tenant). Use as a context manager, or call `close()`.
    """

    def __init__(
        self,
        url: str = DEFAULT_URL,
        token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
        tenant: str | None = None,
    ) -> None:
        self._tenant = tenant
        self._url = endpoint(url)
        self._http = httpx.Client(headers=headers(token), timeout=timeout, transport=transport)
        self._ids = RequestIds()

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """The raw `result` of one call of `method` with params by name (and the client's
        `tenant`, a2a.client.tenants.with_tenant)."""
        body = request_body(method, with_tenant(method, params, self._tenant), self._ids.next())
        try:
            response = self._http.post(self._url, json=body)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise TransportError(f"{self._url}: {type(exc).__name__}: {exc}") from None
        return read_result(response)

    def query_decisions(
        self,
        query: str,
        filters: dict[str, Any] | None = None,
        limit: int | None = None,
        include_reasons: bool | None = None,
        retrieval_mode: str | None = None,
        explain: bool | None = None,
        max_distance: float | None = None,
        recency_half_life_days: float | None = None,
        peers: PeerNames | None = None,
    ) -> QueryDecisionsResult:
        """cstp.queryDecisions; `filters` in wire form (`{"status": ["decided"]}`).

        `retrieval_mode` is "semantic", "keyword" or "hybrid" (None: the server's default);
        `max_distance` (cosine distance in [0, 2]) leaves out results farther than it;
        `recency_half_life_days` (> 0) orders by similarity halved every that many days.
        `peers` (peer names, or "*" for all: list_peers names them) asks the service's peers
        too: one list, each decision's `peer` its peer's name (None: the service's own;
        pydantic.MISSING, which is truthy, on a call without peers: test it with
        isinstance(d.peer, str)), with the result's `peers` block, `merge` and `partial`
        (a2a.client.peers).
        """
        params = _query_params(
            query,
            filters,
            limit=limit,
            include_reasons=include_reasons,
            retrieval_mode=retrieval_mode,
            explain=explain,
            max_distance=max_distance,
            recency_half_life_days=recency_half_life_days,
            peers=peers_param(peers),
        )
        return QueryDecisionsResult.model_validate(self.call("cstp.queryDecisions", params))

    def find_similar_decisions(
        self,
        proposal: dict[str, Any] | None = None,
        decision_id: str | None = None,
        filters: dict[str, Any] | None = None,
        limit: int | None = None,
        peers: PeerNames | None = None,
    ) -> FindSimilarDecisionsResult:
        """cstp.findSimilarDecisions: by a `proposal` ({tags, category, stakes}) or a stored
        id; `peers` (names or "*") asks the service's peers too, by proposal only (a
        decision id names a decision of this service: -32602 `peers`), merged by rank."""
        params = _similar_params(proposal, decision_id, filters, limit, peers)
        return FindSimilarDecisionsResult.model_validate(
            self.call("cstp.findSimilarDecisions", params)
        )

    def search_docs(self, query: str, max_sections: int | None = None) -> SearchDocsResult:
        """cstp.searchDocs: ranked sections of the operator guide (seed 003)."""
        params: dict[str, Any] = {"query": query}
        if max_sections is not None:
            params["max_sections"] = max_sections
        return SearchDocsResult.model_validate(self.call("cstp.searchDocs", params))

    def discover(self) -> dict[str, Any]:
        """rpc.discover: the OpenRPC document."""
        document: dict[str, Any] = self.call("rpc.discover")
        return document

    def list_tenants(self) -> ListTenantsResult:
        """cstp.listTenants: the tenants this token may use that exist, with their counts."""
        return ListTenantsResult.model_validate(self.call(LIST_TENANTS, {}))

    def list_peers(self) -> ListPeersResult:
        """cstp.listPeers: the peer services this one may ask with `peers`, each with its
        reachability, circuit and embedding model (none without a peers file)."""
        return ListPeersResult.model_validate(self.call(LIST_PEERS, {}))

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncCSTPClient(AsyncDecisionCalls):
    """The asyncio twin of CSTPClient: the same calls, awaited."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
        tenant: str | None = None,
    ) -> None:
        self._tenant = tenant
        self._url = endpoint(url)
        self._http = httpx.AsyncClient(headers=headers(token), timeout=timeout, transport=transport)
        self._ids = RequestIds()

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """The raw `result` of one call of `method` with params by name (and the client's
        `tenant`, a2a.client.tenants.with_tenant)."""
        body = request_body(method, with_tenant(method, params, self._tenant), self._ids.next())
        try:
            response = await self._http.post(self._url, json=body)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise TransportError(f"{self._url}: {type(exc).__name__}: {exc}") from None
        return read_result(response)

    async def query_decisions(
        self,
        query: str,
        filters: dict[str, Any] | None = None,
        limit: int | None = None,
        include_reasons: bool | None = None,
        retrieval_mode: str | None = None,
        explain: bool | None = None,
        max_distance: float | None = None,
        recency_half_life_days: float | None = None,
        peers: PeerNames | None = None,
    ) -> QueryDecisionsResult:
        """See CSTPClient.query_decisions."""
        params = _query_params(
            query,
            filters,
            limit=limit,
            include_reasons=include_reasons,
            retrieval_mode=retrieval_mode,
            explain=explain,
            max_distance=max_distance,
            recency_half_life_days=recency_half_life_days,
            peers=peers_param(peers),
        )
        result = await self.call("cstp.queryDecisions", params)
        return QueryDecisionsResult.model_validate(result)

    async def find_similar_decisions(
        self,
        proposal: dict[str, Any] | None = None,
        decision_id: str | None = None,
        filters: dict[str, Any] | None = None,
        limit: int | None = None,
        peers: PeerNames | None = None,
    ) -> FindSimilarDecisionsResult:
        """See CSTPClient.find_similar_decisions."""
        params = _similar_params(proposal, decision_id, filters, limit, peers)
        result = await self.call("cstp.findSimilarDecisions", params)
        return FindSimilarDecisionsResult.model_validate(result)

    async def search_docs(self, query: str, max_sections: int | None = None) -> SearchDocsResult:
        """cstp.searchDocs: ranked sections of the operator guide (seed 003)."""
        params: dict[str, Any] = {"query": query}
        if max_sections is not None:
            params["max_sections"] = max_sections
        return SearchDocsResult.model_validate(await self.call("cstp.searchDocs", params))

    async def discover(self) -> dict[str, Any]:
        """rpc.discover: the OpenRPC document."""
        document: dict[str, Any] = await self.call("rpc.discover")
        return document

    async def list_tenants(self) -> ListTenantsResult:
        """See CSTPClient.list_tenants."""
        return ListTenantsResult.model_validate(await self.call(LIST_TENANTS, {}))

    async def list_peers(self) -> ListPeersResult:
        """See CSTPClient.list_peers."""
        return ListPeersResult.model_validate(await self.call(LIST_PEERS, {}))

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
