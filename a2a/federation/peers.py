"""The configured peers of a service: who they are, whether to call them now (a circuit
breaker each), which embedding model each uses, and one call to several of them at once.

Each peer call has its own deadline (CSTP_PEER_TIMEOUT_SECONDS) and never raises: it ends
`successful` (its result validated), `failed` (with a PeerError: code and a message of
ours) or `skipped` (its circuit open). The breaker is the back-off every shared service of
ours has (a2a.limits.outage.Outage): open after BREAKER_FAILURES failures in a row, tried
again after 1, 2, 4 ... 30 s, closed by one success.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

import httpx
import orjson
from pydantic import BaseModel, SecretStr, ValidationError

from a2a.errors import FieldError, InvalidParams, PeerFailure
from a2a.federation.client import UNAVAILABLE, call_peer, read_card
from a2a.federation.config import PeerConfig
from a2a.limits.outage import Outage
from a2a.results import EMBEDDING_MODEL_EXTENSION, EmbeddingModel, PeerError, PeerStatus

log = logging.getLogger(__name__)

#: Failures in a row that open a peer's circuit (CONTRACT.md, Federation).
BREAKER_FAILURES = 3
#: How long a peer's agent card (its embedding model) is trusted before it is read again.
CARD_TTL_SECONDS = 300.0
#: How long a card that did not answer is taken as naming no model before it is read again.
CARD_RETRY_SECONDS = 10.0
#: The deepest nesting of objects and arrays a peer's result may have. A cstp result is a
#: few levels deep, but `explain` and a record's `history` changes take any JSON, and a
#: result nested past ~250 levels cannot be sent on (pydantic's serialisation limit): our
#: caller would get -32603 for a peer's answer.
MAX_DEPTH = 32
#: Requests in flight to one peer at most (calls and card reads); more wait for a turn within
#: their deadline. Our own bound, not the HTTP pool's: httpcore leaks a pool slot for good
#: when a request waiting for one is cancelled (encode/httpcore#1093), which a peer deadline
#: does, so a bounded pool filled for good under a frozen peer and every peer then timed out
#: until restart. The pool itself is unbounded; a waiter cancelled on a semaphore is clean.
MAX_IN_FLIGHT = 32

M = TypeVar("M", bound=BaseModel)


class PeerCounter(Protocol):
    """Told of each peer call (a2a.observability.metrics.Metrics.peer_called)."""

    def peer_called(self, peer: str, status: str, seconds: float | None) -> None: ...


@dataclass(frozen=True, slots=True)
class PeerAnswer(Generic[M]):
    """One peer's part in a call: its `status`, wall time in seconds (0 when skipped),
    its validated `result` (successful) or `error` (failed)."""

    peer: str
    status: PeerStatus
    seconds: float
    result: M | None = None
    error: PeerError | None = None
    #: The `data` of the peer's own JSON-RPC error, unvalidated (never on our wire as is).
    error_data: Any = None


@dataclass(frozen=True, slots=True)
class PeerState:
    """What is known of a peer now (cstp.listPeers): whether its card answered, its
    circuit, its embedding model (None: unknown or not named by its card)."""

    name: str
    reachable: bool
    circuit: Literal["closed", "open"]
    embedding_model: EmbeddingModel | None


class Peers:
    """The peers of the peers file, in its order, called with `http` (None: a client of
    our own, closed by `aclose`) within `timeout` seconds each.

    `clock` (monotonic seconds) times the circuit breakers and the card cache (a manual
    clock in tests); `metrics` counts every call by peer and status.
    """

    def __init__(
        self,
        configs: Sequence[PeerConfig],
        timeout: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        metrics: PeerCounter | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self._configs = {config.name: config for config in configs}
        self.timeout = timeout
        self._clock = clock
        self._metrics = metrics
        self._http = http
        self._own_http = http is None
        self._breakers = {
            name: Outage(
                f"peer {name}", clock, restored="calls to it resume", threshold=BREAKER_FAILURES
            )
            for name in self._configs
        }
        self._turns = {name: asyncio.Semaphore(MAX_IN_FLIGHT) for name in self._configs}
        #: name -> (when to read it again, its model or None); absent: never read.
        self._cards: dict[str, tuple[float, EmbeddingModel | None]] = {}

    @property
    def names(self) -> list[str]:
        """Every configured peer, in the file's order."""
        return list(self._configs)

    def __bool__(self) -> bool:
        return bool(self._configs)

    def chosen(self, asked: Sequence[str] | str, federated: bool) -> list[str]:
        """The peers a call's `peers` param names ("*": all of them), in the order given.

        Raises InvalidParams naming `peers` when the call came from a peer (one hop) or no
        peer is configured, and `peers[i]` for an unknown or repeated name.
        """
        self._may_ask(federated, "peers")
        if asked == "*":
            return self.names
        errors, seen = [], set()
        for n, name in enumerate(asked):
            if name not in self._configs:
                errors.append(FieldError(f"peers[{n}]", f"unknown peer {name!r}"))
            elif name in seen:
                errors.append(FieldError(f"peers[{n}]", f"peer {name!r} is named twice"))
            seen.add(name)
        if errors:
            raise InvalidParams(errors)
        return list(asked)

    def one(self, name: str, federated: bool) -> str:
        """The peer a call's `peer` param names (cstp.getDecision). Raises InvalidParams
        naming `peer`: a call from a peer, no peers configured, an unknown name."""
        self._may_ask(federated, "peer")
        if name not in self._configs:
            raise InvalidParams([FieldError("peer", f"unknown peer {name!r}")])
        return name

    def _may_ask(self, federated: bool, field: str) -> None:
        if federated:
            raise InvalidParams([FieldError(field, "a call from a peer service cannot ask peers")])
        if not self._configs:
            raise InvalidParams([FieldError(field, "this service has no peers configured")])

    async def ask(
        self,
        names: Sequence[str],
        method: str,
        params: dict[str, Any],
        model: type[M],
        check: Callable[[M], str | None] = lambda _: None,
    ) -> list[PeerAnswer[M]]:
        """Each peer of `names` called concurrently with `method` and `params` (its own
        `tenant` added), its result validated as `model` and then by `check` (a reason it
        is unusable, or None). Never raises for a peer's fault."""
        return list(
            await asyncio.gather(*(self._ask(name, method, params, model, check) for name in names))
        )

    async def model_of(self, name: str) -> EmbeddingModel | None:
        """`name`'s embedding model, as its agent card names it, read at its first call and
        again past CARD_TTL_SECONDS; None when unknown (the card unreadable, or naming none),
        which merges by rank. Not read while its circuit is open: a skipped peer costs
        nothing (and one back from an outage has its card read again, `_answered`)."""
        cached = self._cards.get(name)
        if self._breakers[name].down:
            return None if cached is None else cached[1]
        if cached is not None and self._clock() < cached[0]:
            return cached[1]
        found, _ = await self._read_model(name)
        return found

    async def states(self) -> list[PeerState]:
        """Each peer's state now: its card read again (within the timeout) to tell whether
        it answers, with its circuit and its model; a peer whose circuit is open is not
        read (unreachable, its last known model), so a frozen one costs nothing here."""

        async def state(name: str) -> PeerState:
            if self._breakers[name].down:
                cached = self._cards.get(name)
                return PeerState(name, False, "open", None if cached is None else cached[1])
            found, reachable = await self._read_model(name)
            return PeerState(name, reachable, "closed", found)

        return list(await asyncio.gather(*(state(name) for name in self._configs)))

    async def call(self, name: str, method: str, params: dict[str, Any], model: type[M]) -> M:
        """`method`'s result from peer `name` (its own tenant added), validated as `model`,
        through its breaker and within the timeout. Raises PeerFailure (code -32003 when it
        did not answer usably, or the peer's own error code) and counts the call."""
        answer = await self._ask(name, method, params, model, lambda _: None)
        if answer.error is not None or answer.result is None:
            error = answer.error or PeerError(code=UNAVAILABLE, message="the peer was skipped")
            raise PeerFailure(error.code, error.message, answer.error_data)
        return answer.result

    async def aclose(self) -> None:
        """Close the HTTP client when it is ours."""
        if self._http is not None and self._own_http:
            await self._http.aclose()

    # -- one peer ---------------------------------------------------------------------

    async def _ask(
        self,
        name: str,
        method: str,
        params: dict[str, Any],
        model: type[M] | None,
        check: Callable[[M], str | None],
    ) -> PeerAnswer[M]:
        config, breaker = self._configs[name], self._breakers[name]
        if breaker.skip():
            self._count(name, "skipped", None)
            return PeerAnswer(name, "skipped", 0.0)
        sent = params if config.tenant is None else {**params, "tenant": config.tenant}
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self.timeout), self._turns[name]:
                raw = await call_peer(self._client(), config, method, sent)
            result = raw if model is None else _validated(model, raw, check, config.token)
        except TimeoutError:
            failure = PeerFailure(UNAVAILABLE, f"the peer did not answer in {self.timeout:g} s")
            return self._failed(name, failure, time.perf_counter() - started)
        except PeerFailure as failure:
            return self._failed(name, failure, time.perf_counter() - started)
        seconds = time.perf_counter() - started
        self._answered(name)
        self._count(name, "successful", seconds)
        return PeerAnswer(name, "successful", seconds, result=result)

    def _failed(self, name: str, failure: PeerFailure, seconds: float) -> PeerAnswer[Any]:
        # A peer's own answer of a call error (-32602 for an unknown id) is an answer, not
        # an outage: only a peer that does not answer usably counts toward its breaker.
        if failure.code == UNAVAILABLE:
            self._breakers[name].failed(_Reason(failure.message), "skipping it")
        else:
            self._answered(name)
        self._count(name, "failed", seconds)
        error = PeerError(code=failure.code, message=failure.message)
        return PeerAnswer(name, "failed", seconds, error=error, error_data=failure.data)

    def _answered(self, name: str) -> None:
        """`name` answered: its circuit closes. Back from an outage, its card is read again
        at its next call (it may have been down when the card was last read, or come back
        with another model)."""
        breaker = self._breakers[name]
        if breaker.down:
            self._cards.pop(name, None)
        breaker.succeeded()

    async def _read_model(self, name: str) -> tuple[EmbeddingModel | None, bool]:
        """`name`'s model from its card now (cached with the time read), and whether the
        card answered."""
        reachable = True
        try:
            async with asyncio.timeout(self.timeout), self._turns[name]:
                card = await read_card(self._client(), self._configs[name])
            found = model_in_card(card)
        except (TimeoutError, PeerFailure):
            found, reachable = None, False
        # A card that did not answer is read again soon: the peer may answer its calls.
        ttl = CARD_TTL_SECONDS if reachable else CARD_RETRY_SECONDS
        self._cards[name] = (self._clock() + ttl, found)
        return found, reachable

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout),
                # Unbounded: MAX_IN_FLIGHT bounds the requests to each peer instead.
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=16),
                follow_redirects=False,
            )
        return self._http

    def _count(self, name: str, status: str, seconds: float | None) -> None:
        if self._metrics is not None:
            self._metrics.peer_called(name, status, seconds)


class _Reason(Exception):
    """A peer failure's message, for the breaker's log line."""


def _validated(
    model: type[M], raw: Any, check: Callable[[M], str | None], token: SecretStr | None = None
) -> M:
    """`raw` as `model`, then `check`ed, then `_unsendable`. Raises PeerFailure naming the
    first bad field (its location only: the peer's values are not repeated)."""
    try:
        result = model.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "result"
        bad = f"the peer's answer is not a valid result ({where})"
        raise PeerFailure(UNAVAILABLE, bad) from None
    unusable = check(result) or _unsendable(result, token)
    if unusable is not None:
        raise PeerFailure(UNAVAILABLE, f"the peer's answer is not a valid result ({unusable})")
    return result


def _unsendable(result: BaseModel, token: SecretStr | None) -> str | None:
    """Why a peer's validated `result` (already within the call's `limit`, so small) cannot
    go into our answer: nested deeper than MAX_DEPTH, or carrying the token we sent that
    peer (echoed back, it would reach our caller). None when it can."""
    try:
        wire = result.model_dump(by_alias=True, mode="json")
    except ValueError:  # past pydantic's own depth limit
        return f"nested deeper than {MAX_DEPTH} levels"
    level: list[Any] = [wire]
    for _ in range(MAX_DEPTH):
        level = [
            child
            for value in level
            for child in (value.values() if isinstance(value, dict) else value)
            if isinstance(child, dict | list)
        ]
        if not level:
            break
    else:
        return f"nested deeper than {MAX_DEPTH} levels"
    if token is not None and token.get_secret_value().encode() in orjson.dumps(wire):
        return "it carries this service's token for the peer"
    return None


def model_in_card(card: Any) -> EmbeddingModel | None:
    """The embedding model an agent card names (its `capabilities.extensions` entry of
    EMBEDDING_MODEL_EXTENSION), or None."""
    with contextlib.suppress(AttributeError, KeyError, TypeError):
        for extension in card["capabilities"]["extensions"]:
            if isinstance(extension, dict) and extension.get("uri") == EMBEDDING_MODEL_EXTENSION:
                with contextlib.suppress(ValidationError):
                    return EmbeddingModel.model_validate(extension.get("params"))
    return None
