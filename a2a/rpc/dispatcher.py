"""The JSON-RPC 2.0 dispatcher: bytes in, response objects out, one error code per step."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from a2a.rpc import protocol
from a2a.rpc.errors import MethodNotFound, to_error_object
from a2a.rpc.methods import CallContext, Method


class Admission(Protocol):
    """Decides whether a call may run now (rate limits). Raises RateLimited when not."""

    async def admit(self, method: str, ctx: CallContext) -> None: ...


class AdmitAll:
    """No limits."""

    async def admit(self, method: str, ctx: CallContext) -> None:
        return None


@dataclass(slots=True)
class CallOutcome:
    """What happened to one call: its method (None if unreadable) and error code (None = ok)."""

    method: str | None
    code: int | None
    retry_after: int | None = None


@dataclass(slots=True)
class Reply:
    """The body to send (None: nothing is owed, HTTP 204) and each call's outcome."""

    body: dict[str, Any] | list[dict[str, Any]] | None
    outcomes: list[CallOutcome] = field(default_factory=list)


class Dispatcher:
    """Runs JSON-RPC 2.0 requests and batches against a method table (CONTRACT.md)."""

    def __init__(
        self,
        methods: Mapping[str, Method],
        *,
        max_batch_size: int = 50,
        max_json_depth: int = 64,
        admission: Admission | None = None,
    ) -> None:
        self._methods = methods
        self._max_batch = max_batch_size
        self._max_depth = max_json_depth
        self._admission = admission or AdmitAll()

    async def dispatch(self, body: bytes, ctx: CallContext) -> Reply:
        """The reply to one HTTP body: a request object or a batch."""
        # Step 1: parse (-32700).
        try:
            payload = protocol.parse_json(body, self._max_depth)
        except protocol.ParseError as exc:
            return _whole_body_error(protocol.PARSE_ERROR, "Parse error", str(exc))
        if not isinstance(payload, list):
            outcome, response = await self._call(payload, ctx)
            return Reply(response, [outcome])
        # Step 1b: batch shape (-32600 for the whole batch).
        if not payload:
            return _whole_body_error(protocol.INVALID_REQUEST, "Invalid Request", "empty batch")
        if len(payload) > self._max_batch:
            return _whole_body_error(
                protocol.INVALID_REQUEST,
                "Invalid Request",
                f"batch of {len(payload)} calls; at most {self._max_batch}",
            )
        results = await asyncio.gather(*(self._call(item, ctx) for item in payload))
        responses = [response for _, response in results if response is not None]
        return Reply(responses or None, [outcome for outcome, _ in results])

    async def _call(self, obj: Any, ctx: CallContext) -> tuple[CallOutcome, dict[str, Any] | None]:
        # Step 2: envelope (-32600). An invalid object is always answered.
        try:
            request = protocol.read_request(obj)
        except protocol.InvalidRequest as exc:
            error = protocol.failure(
                exc.id, protocol.INVALID_REQUEST, "Invalid Request", {"reason": str(exc)}
            )
            return CallOutcome(None, protocol.INVALID_REQUEST), error
        try:
            # Step 3: method lookup (-32601).
            method = self._methods.get(request.method)
            if method is None:
                raise MethodNotFound(request.method)
            # Step 4: params (-32602).
            params = method.validate(request.params)
            # Step 5: admission, i.e. rate limits (-32002), before any costly work.
            await self._admission.admit(request.method, ctx)
            # Step 6: the call itself.
            result = await method.handler(params, ctx)
        except Exception as exc:
            wire = to_error_object(exc)
            retry_after = wire.data.get("retryAfter") if isinstance(wire.data, dict) else None
            outcome = CallOutcome(request.method, wire.code, retry_after)
            response = protocol.failure(request.id, wire.code, wire.message, wire.data)
        else:
            outcome, response = (
                CallOutcome(request.method, None),
                protocol.success(request.id, result),
            )
        # A notification runs but is never answered, errors included (JSON-RPC 2.0 section 4.1).
        return outcome, None if request.is_notification else response


def _whole_body_error(code: int, message: str, reason: str) -> Reply:
    return Reply(
        protocol.failure(None, code, message, {"reason": reason}), [CallOutcome(None, code)]
    )
