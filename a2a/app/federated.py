"""A call answered with peers: this service's source and the peers named by the call's
`peers`, fanned out at once, merged into one list (CONTRACT.md, Federation).

`FederatedSource` is an AnswerSource (a2a.app.sources) over another one (one tenant's, or
every granted tenant's): a call without `peers` is the inner source's alone, untouched.
A call with `peers` asks the inner source and each peer concurrently (each peer within its
own deadline, a2a.federation.peers), merges by distance when every answering service
embeds with this service's model and the call ranks by distance (semantic, no recency),
else by rank (a2a.federation.merge), and marks each decision with its `peer` (None: ours).
The call fails only when the inner source fails: a peer's failure is `partial`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from a2a.app.sources import AnswerSource
from a2a.decisions.params import GetDecisionParams
from a2a.decisions.results import DecisionResult
from a2a.errors import FieldError, InvalidParams, PeerFailure, PeerUnavailable
from a2a.federation.merge import merged
from a2a.federation.peers import PeerAnswer, Peers
from a2a.query.params import QueryDecisionsParams, RetrievalMode
from a2a.query.results import QueryDecisionsResult
from a2a.results import EmbeddingModel, Merge, PeerDetail, PeersBlock, WireModel
from a2a.rpc.methods import CallContext, Method, NoParams, Weight, method
from a2a.similarity.params import FindSimilarDecisionsParams
from a2a.similarity.results import FindSimilarDecisionsResult

R = TypeVar("R", QueryDecisionsResult, FindSimilarDecisionsResult)


@dataclass(frozen=True)
class Federation:
    """The peers of a service and what a federated call needs of the service itself: its
    embedding model (compared with the peers' cards) and its default retrieval mode. One
    per service (a2a.app.service), given to every method table."""

    peers: Peers
    model: EmbeddingModel | None = None
    default_mode: RetrievalMode = "semantic"

    @classmethod
    def alone(cls) -> Federation:
        """No peers: a call naming some gets -32602 `peers`."""
        return cls(Peers((), timeout=1.0))

    def around(self, local: AnswerSource) -> FederatedSource:
        """`local`'s answers, with the peers a call names."""
        return FederatedSource(local, self.peers, self.model, self.default_mode)

    @property
    def weight(self) -> Weight:
        """queryDecisions' and findSimilarDecisions' weight: 1 + the peers asked."""
        return peers_weight(self.peers, "peers")

    @property
    def record_weight(self) -> Weight:
        """getDecision's weight: 2 with a `peer`, else 1."""
        return peers_weight(self.peers, "peer")

    async def get_decision(self, params: GetDecisionParams, ctx: CallContext) -> DecisionResult:
        """cstp.getDecision of peer `params.peer`: its whole record, with `peer` set.

        Raises InvalidParams `peer` (unknown, or a call from a peer), InvalidParams `id`
        when the peer answers -32602 (it has no such decision), PeerUnavailable otherwise.
        """
        assert params.peer is not None
        name = self.peers.one(params.peer, ctx.federated)
        try:
            record = await self.peers.call(
                name, "cstp.getDecision", {"id": params.id}, DecisionResult
            )
        except PeerFailure as failure:
            if failure.code == InvalidParams.code:
                reason = f"peer {name!r} has no decision with this id"
                raise InvalidParams([FieldError("id", reason)]) from None
            raise PeerUnavailable(name, failure.message) from None
        record.peer = name
        return record


class FederatedSource:
    """`local`'s answers, with the peers a call names (module docstring). `model`: this
    service's embedding model; `default_mode`: its retrieval mode for a call naming none
    (sent to the peers, so every service answers in the same mode)."""

    def __init__(
        self,
        local: AnswerSource,
        peers: Peers,
        model: EmbeddingModel | None,
        default_mode: RetrievalMode,
    ) -> None:
        self._local = local
        self._peers = peers
        self._model = model
        self._default_mode = default_mode

    async def query(self, params: QueryDecisionsParams, ctx: CallContext) -> QueryDecisionsResult:
        """cstp.queryDecisions here and at the peers `params.peers` names."""
        if params.peers is None:
            return await self._local.query(params, ctx)
        names = self._peers.chosen(params.peers, ctx.federated)
        mode = params.mode_or(self._default_mode)
        sent = _sent(params) | {"retrievalMode": mode}
        by_distance = mode == "semantic" and params.recency_half_life_days is None
        return await self._federated(
            self._local.query(params, ctx),
            names,
            "cstp.queryDecisions",
            sent,
            QueryDecisionsResult,
            params.limit,
            by_distance,
        )

    async def find_similar(
        self, params: FindSimilarDecisionsParams, ctx: CallContext
    ) -> FindSimilarDecisionsResult:
        """cstp.findSimilarDecisions here and at the peers, by proposal only. Structural
        scores carry no distance, so the lists merge by rank."""
        if params.peers is None:
            return await self._local.find_similar(params, ctx)
        names = self._peers.chosen(params.peers, ctx.federated)
        if params.decision_id is not None:
            reason = "peers are asked by proposal: a decisionId names a decision of this service"
            raise InvalidParams([FieldError("peers", reason)])
        return await self._federated(
            self._local.find_similar(params, ctx),
            names,
            "cstp.findSimilarDecisions",
            _sent(params),
            FindSimilarDecisionsResult,
            params.limit,
            by_distance=False,
        )

    async def _federated(
        self,
        local_call: Any,
        names: list[str],
        method: str,
        sent: dict[str, Any],
        model: type[R],
        limit: int,
        by_distance: bool,
    ) -> R:
        started = time.perf_counter()

        def usable(result: R) -> str | None:
            if len(result.decisions) > limit:
                return f"{len(result.decisions)} decisions for a limit of {limit}"
            if by_distance and any(d.distance is None for d in result.decisions):
                return "a decision without a distance"
            return None

        peers = self._peers
        asked = asyncio.ensure_future(peers.ask(names, method, sent, model, usable))
        models = asyncio.ensure_future(_models(peers, names) if by_distance else _none(names))
        try:
            local: R = await local_call
        except BaseException:  # this service's part failed: so does the call
            asked.cancel()
            models.cancel()
            raise
        answers, their_models = await asked, await models
        for decision in local.decisions:
            decision.peer = None
        lists: list[tuple[str | None, list[Any]]] = [(None, list(local.decisions))]
        for answer in answers:
            if answer.result is not None:
                for decision in answer.result.decisions:
                    decision.peer = answer.peer
                lists.append((answer.peer, list(answer.result.decisions)))
        same_model = self._model is not None and all(
            their_models[a.peer] == self._model for a in answers if a.status == "successful"
        )
        merge: Merge = "distance" if by_distance and same_model else "rank"
        local.decisions = merged(lists, merge, limit)
        local.total = len(local.decisions)
        local.query_time_ms = round((time.perf_counter() - started) * 1000)
        local.peers = PeersBlock.of([_detail(answer) for answer in answers])
        local.merge = merge
        if local.peers.successful < local.peers.total:
            local.partial = True
        return local


class PeerInfo(WireModel):
    """One configured peer as cstp.listPeers shows it: whether its agent card answered
    just now, its circuit (`open`: skipped by federated calls until its next try), its
    embedding model (None: unknown), and whether that is this service's own (distances
    merge then)."""

    name: str
    reachable: bool
    circuit: Literal["closed", "open"]
    embedding_model: EmbeddingModel | None
    same_model: bool


class ListPeersResult(WireModel):
    """cstp.listPeers: the configured peers, in the peers file's order."""

    peers: list[PeerInfo]


def list_peers_method(federation: Federation) -> Method:
    """cstp.listPeers (scope read, no params, no `tenant`)."""

    @method("cstp.listPeers", NoParams, ListPeersResult, examples=({},), tenancy="none")
    async def list_peers(params: NoParams, ctx: CallContext) -> ListPeersResult:
        """List the peer services this service can ask with `peers` in cstp.queryDecisions
        and cstp.findSimilarDecisions.

        Use it to choose `peers`. Returns `peers`, each with its `name`, whether it is
        `reachable` now, its `circuit` (`open`: skipped for a while after failing), its
        `embeddingModel` and `sameModel` (true: its distances merge with this service's).
        """
        states = await federation.peers.states()
        return ListPeersResult(
            peers=[
                PeerInfo(
                    name=state.name,
                    reachable=state.reachable,
                    circuit=state.circuit,
                    embedding_model=state.embedding_model,
                    same_model=state.embedding_model is not None
                    and state.embedding_model == federation.model,
                )
                for state in states
            ]
        )

    return list_peers


def peers_weight(peers: Peers, field: str = "peers") -> Weight:
    """A call's weight against the rate limits (CONTRACT.md, Federation): 1 + the peers
    its raw params name in `field` ("*": every configured one; a single name for
    getDecision's `peer`), 1 when it names none or the params are not an object."""

    def weight(params: dict[str, Any] | list[Any] | None) -> int:
        asked = params.get(field) if isinstance(params, dict) else None
        if asked == "*":
            return 1 + len(peers.names)
        if isinstance(asked, list):
            return 1 + min(len(asked), len(peers.names))
        if isinstance(asked, str):
            return 2
        return 1

    return weight


def _sent(params: QueryDecisionsParams | FindSimilarDecisionsParams) -> dict[str, Any]:
    """What a peer is asked: the call's params as the caller sent them, without `peers`
    (the peer's own `tenant` is added by a2a.federation.peers)."""
    return params.model_dump(by_alias=True, exclude_unset=True, exclude={"peers"}, mode="json")


def _detail(answer: PeerAnswer[Any]) -> PeerDetail:
    result = answer.result
    return PeerDetail(
        peer=answer.peer,
        status=answer.status,
        took_ms=round(answer.seconds * 1000),
        decisions=0 if result is None else len(result.decisions),
        error=answer.error,
        stale=None if result is None else result.stale,
    )


async def _models(peers: Peers, names: list[str]) -> dict[str, EmbeddingModel | None]:
    found = await asyncio.gather(*(peers.model_of(name) for name in names))
    return dict(zip(names, found, strict=True))


async def _none(names: list[str]) -> dict[str, EmbeddingModel | None]:
    return dict.fromkeys(names)
