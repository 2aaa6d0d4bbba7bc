"""JSON-RPC 2.0 over one HTTP body: parse, envelope and batch handling around the Pipeline."""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass, field
from typing import Any

from a2a.concurrency import Lane
from a2a.errors import InvalidRequest, ParseError
from a2a.rpc import protocol
from a2a.rpc.errors import ErrorObject
from a2a.rpc.methods import CallContext
from a2a.rpc.pipeline import Outcome, Pipeline

#: Bodies at least this large are parsed off the event loop, one at a time, on the parser
#: lane (one thread, a2a.concurrency.Lanes.parser): the loop then keeps answering (/health,
#: small calls) between the parser's GIL slices instead of stalling for the whole parse of
#: each 1 MiB body.
THREAD_PARSE_BYTES = 64 * 1024


@dataclass(slots=True)
class Reply:
    """The body to send (None: nothing is owed, HTTP 204) and each call's outcome."""

    body: dict[str, Any] | list[dict[str, Any]] | None
    outcomes: list[Outcome] = field(default_factory=list)


class Dispatcher:
    """Runs a JSON-RPC 2.0 request or batch (CONTRACT.md) through `pipeline`.

    Steps before the pipeline: parse (-32700), batch shape (-32600 for the whole body),
    envelope of each call (-32600 with that element's id when valid, else null). Large
    bodies are parsed on `parser` (default: a lane of one thread of its own).
    """

    def __init__(
        self,
        pipeline: Pipeline,
        *,
        max_batch_size: int = 50,
        max_json_depth: int = 64,
        parser: Lane | None = None,
    ) -> None:
        self.pipeline = pipeline
        self._max_batch = max_batch_size
        self._max_depth = max_json_depth
        self._parser = parser or Lane(1, name="cstp-parse")

    async def dispatch(self, body: bytes, ctx: CallContext) -> Reply:
        """The reply to one HTTP body: a request object or a batch."""
        try:
            payload = await self.parse(body)
        except ParseError as exc:
            return _whole_body_error(protocol.PARSE_ERROR, "Parse error", str(exc))
        if not isinstance(payload, list):
            outcome, response = await self._one(payload, ctx)
            return Reply(response, [outcome])
        if not payload:
            return _whole_body_error(protocol.INVALID_REQUEST, "Invalid Request", "empty batch")
        if len(payload) > self._max_batch:
            return _whole_body_error(
                protocol.INVALID_REQUEST,
                "Invalid Request",
                f"batch of {len(payload)} calls; at most {self._max_batch}",
            )
        results = await asyncio.gather(*(self._one(item, ctx) for item in payload))
        responses = [response for _, response in results if response is not None]
        return Reply(responses or None, [outcome for outcome, _ in results])

    async def parse(self, body: bytes) -> Any:
        """`protocol.parse_json` of `body`, large bodies on the parser lane; the door of
        /mcp reads its bodies here too. Raises ParseError."""
        if len(body) < THREAD_PARSE_BYTES:
            return protocol.parse_json(body, self._max_depth)
        return await self._parser.run(functools.partial(protocol.parse_json, body, self._max_depth))

    async def _one(self, obj: Any, ctx: CallContext) -> tuple[Outcome, dict[str, Any] | None]:
        try:
            request = protocol.read_request(obj)
        except InvalidRequest as exc:
            # An invalid object is always answered, `id` or not.
            error = ErrorObject(protocol.INVALID_REQUEST, "Invalid Request", {"reason": str(exc)})
            return Outcome(None, error=error), response_for(exc.id, Outcome(None, error=error))
        outcome = await self.pipeline.call(request.method, request.params, ctx)
        # A notification runs but is never answered, errors included (JSON-RPC 2.0 section 4.1).
        return outcome, None if request.is_notification else response_for(request.id, outcome)


def response_for(id: protocol.Id, outcome: Outcome) -> dict[str, Any]:
    """The response object of one call's outcome."""
    if outcome.error is None:
        return protocol.success(id, outcome.result)
    return protocol.failure(id, outcome.error.code, outcome.error.message, outcome.error.data)


def _whole_body_error(code: int, message: str, reason: str) -> Reply:
    error = ErrorObject(code, message, {"reason": reason})
    outcome = Outcome(None, error=error)
    return Reply(response_for(None, outcome), [outcome])
