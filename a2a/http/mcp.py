"""The method table as MCP tools over streamable HTTP at /mcp (the official `mcp` SDK).

Each `cstp.*` method is one tool: its params model is the tool's inputSchema, its result
schema the outputSchema, and a successful call returns the JSON-RPC result as
structuredContent (and as JSON text for clients that read only content). A tool call is a
thin door onto the same `a2a.rpc.pipeline.Pipeline` as /cstp: admission (-32002), method
(-32601), scope (-32004), params (-32602), call; its outcome is counted and logged like any
other call. A failed call is a tool result with `isError: true` whose structuredContent is
the JSON-RPC error object (`code`, `message`, `data`), so an agent reads the same codes on
either door.

Before the SDK sees a POST, this door reads the body with the same cap and deadline as
/cstp (our 413 and 408, connection closed), parses it strictly (RFC 8259, -32700) and checks
the envelope (-32600): malformed messages get our error objects, HTTP 400 as streamable
HTTP asks. The session manager runs stateless with JSON responses: every POST is
self-contained, so several server processes can answer /mcp without sticky sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Message, Receive, Scope, Send

from a2a.errors import InvalidRequest, ParseError
from a2a.http.edge import call_context, read_body, record
from a2a.limits.headers import rate_limit_headers
from a2a.observability.calls import CallLog
from a2a.rpc import protocol
from a2a.rpc.methods import Method
from a2a.rpc.pipeline import Outcome, Pipeline

if TYPE_CHECKING:  # the MCP SDK loads with the first /mcp request (McpDoor), not at start
    import mcp_types as types
    from mcp.server import Server, ServerRequestContext
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

#: Scope key of the outcomes of an /mcp request, for its rate-limit headers.
OUTCOMES_KEY = "cstp.outcomes"
#: Methods not offered as tools: `rpc.*` is JSON-RPC's own discovery; MCP has tools/list.
RESERVED_PREFIX = "rpc."


def tool_for(method: Method) -> types.Tool:
    """The MCP Tool describing `method`: name, description (with its scope), schemas."""
    import mcp_types as types

    return types.Tool(
        name=method.name,
        description=f"{method.summary} (token scope: {method.scope})",
        input_schema=method.params_schema(),
        output_schema=method.result_schema or None,
    )


def tools_of(methods: Mapping[str, Method]) -> dict[str, Method]:
    """The methods offered as tools, by name (every method but `rpc.*`)."""
    return {n: m for n, m in methods.items() if not n.startswith(RESERVED_PREFIX)}


def tool_result(outcome: Outcome) -> types.CallToolResult:
    """The CallToolResult of a call's outcome: the result, or the error object (`isError`)."""
    if outcome.error is None:
        result = outcome.result
        payload = result.value if isinstance(result, protocol.RawJson) else result
        return _result(payload, is_error=False)
    error = protocol.failure(None, outcome.error.code, outcome.error.message, outcome.error.data)
    return _result(error["error"], is_error=True)


def _result(payload: dict[str, Any], *, is_error: bool) -> types.CallToolResult:
    import mcp_types as types

    text = types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))
    return types.CallToolResult(content=[text], structured_content=payload, is_error=is_error)


def mcp_server(pipeline: Pipeline, calls: CallLog, name: str, version: str) -> Server[Any]:
    """A low-level MCP server answering tools/list from the method table and tools/call
    through `pipeline`, each call's outcome recorded in `calls`."""
    import mcp_types as types
    from mcp.server import Server

    pipeline = pipeline.serving(tools_of(pipeline.methods))
    tools = [tool_for(m) for m in pipeline.methods.values()]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        request = ctx.request
        scope: Scope = request.scope if isinstance(request, Request) else {"type": "http"}
        arguments = params.arguments if isinstance(params.arguments, dict) else None
        outcome = await pipeline.call(params.name, arguments, call_context(scope))
        outcomes = scope.get(OUTCOMES_KEY)
        if isinstance(outcomes, list):
            outcomes.append(outcome)
        record(calls, scope, [outcome], "mcp", 200)
        return tool_result(outcome)

    return Server(
        name,
        version=version,
        instructions="Decision memory: query past decisions and search the operator guide.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def session_manager(server: Server[Any], max_body_bytes: int) -> StreamableHTTPSessionManager:
    """Stateless, JSON-response streamable HTTP for `server`; run it in the app's lifespan."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    return StreamableHTTPSessionManager(
        app=server, json_response=True, stateless=True, max_request_body_size=max_body_bytes
    )


@contextlib.asynccontextmanager
async def running(manager: StreamableHTTPSessionManager) -> AsyncIterator[None]:
    """Runs `manager` for as long as the context is open; use it in the app's lifespan.

    The manager's task group must be entered and left by one task, while an app's lifespan
    may be entered and left by different ones (test harnesses do that), so the manager runs
    in a task of its own. Raises what the manager raises when it cannot start.
    """
    started, stop = asyncio.Event(), asyncio.Event()

    async def serve() -> None:
        async with manager.run():
            started.set()
            await stop.wait()

    task = asyncio.create_task(serve())
    waiter = asyncio.create_task(started.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        waiter.cancel()
        task.result()
    try:
        yield
    finally:
        stop.set()
        await task


class McpDoor:
    """The MCP SDK's session manager of one app, built and started on the first /mcp
    request rather than at start: the SDK is ~0.26 s of CPU to import, which every
    `cstp serve` that is never asked over MCP would pay. Closed by the app's lifespan."""

    def __init__(self, pipeline: Pipeline, calls: CallLog, version: str, max_body: int) -> None:
        self._pipeline, self._calls, self._version, self._max_body = (
            pipeline,
            calls,
            version,
            max_body,
        )
        self._manager: StreamableHTTPSessionManager | None = None
        self._lock = asyncio.Lock()
        self._running = contextlib.AsyncExitStack()

    async def manager(self) -> StreamableHTTPSessionManager:
        """The running session manager; raises what the manager raises when it cannot
        start (the request then fails as any unexpected error does)."""
        if self._manager is None:
            async with self._lock:
                if self._manager is None:
                    server = mcp_server(self._pipeline, self._calls, "cstp", self._version)
                    manager = session_manager(server, self._max_body)
                    await self._running.enter_async_context(running(manager))
                    self._manager = manager
        return self._manager

    async def aclose(self) -> None:
        """Stop the session manager, if a request started it."""
        await self._running.aclose()


class McpEndpoint:
    """ASGI endpoint for /mcp: body and envelope checks, then the session manager in the
    app's state (built by the lifespan, hence this forwarder)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") == "GET":
            # Stateless: the server never pushes, so the optional GET stream (MCP streamable
            # HTTP) is refused with 405 as the transport allows, instead of an idle stream.
            response = Response(status_code=405, headers={"Allow": "POST, DELETE"})
            await response(scope, receive, send)
            return
        # The Service (a2a.app.service) and the MCP door, set by the lifespan.
        state: Any = scope["app"].state.cstp
        manager = await scope["app"].state.mcp.manager()
        if scope.get("method") != "POST":
            await manager.handle_request(scope, receive, send)
            return
        body = await read_body(Request(scope, receive), state.settings, state.calls, "mcp")
        if isinstance(body, Response):
            await body(scope, receive, send)
            return
        message: Any = None
        try:
            message = await state.dispatcher.parse(body)
            refusal = envelope_error(message)
        except ParseError as exc:
            refusal = protocol.failure(
                None, protocol.PARSE_ERROR, "Parse error", {"reason": str(exc)}
            )
        if refusal is not None:
            await JSONResponse(refusal, status_code=400)(scope, receive, send)
            return
        outcomes: list[Outcome] = []
        scope[OUTCOMES_KEY] = outcomes
        method = message.get("method") if isinstance(message, dict) else None
        if isinstance(method, str) and method != "tools/call":
            # Every request counts against the caller's limits, not only tool calls
            # (CONTRACT.md: /mcp counts tools/list, ping, initialize as /cstp rpc.discover).
            counted = await state.pipeline.count(method, call_context(scope))
            outcomes.append(counted)
            if counted.error is not None:
                record(state.calls, scope, [counted], "mcp", 200)
                error = protocol.failure(
                    message.get("id"),
                    counted.error.code,
                    counted.error.message,
                    counted.error.data,
                )
                headers = rate_limit_headers(outcomes)
                await JSONResponse(error, headers=headers)(scope, receive, send)
                return
        await manager.handle_request(scope, _replay(body, receive), _with_headers(send, outcomes))


def envelope_error(message: Any) -> dict[str, Any] | None:
    """Our error object for a parsed body that is not one valid JSON-RPC message, else None.

    -32600 for an array (MCP sends one message per POST) or an object that is neither a
    valid request nor a response.
    """
    if isinstance(message, dict) and "method" not in message and "id" in message:
        return None  # a response to the server: the SDK's to judge
    if isinstance(message, list):
        reason = "one JSON-RPC message per POST; batches are not part of MCP"
        return protocol.failure(
            None, protocol.INVALID_REQUEST, "Invalid Request", {"reason": reason}
        )
    try:
        protocol.read_request(message)
    except InvalidRequest as exc:
        return protocol.failure(
            exc.id, protocol.INVALID_REQUEST, "Invalid Request", {"reason": str(exc)}
        )
    return None


def _with_headers(send: Send, outcomes: list[Outcome]) -> Send:
    """A send that adds the rate-limit headers of `outcomes` (a2a.limits.headers) to the
    response, as /cstp sends them."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            extra = [
                (k.lower().encode(), v.encode()) for k, v in rate_limit_headers(outcomes).items()
            ]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return sending


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that hands `body` over once, then waits on the real one (disconnects)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
