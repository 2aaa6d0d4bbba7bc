"""The method table as MCP tools over streamable HTTP at /mcp (the official `mcp` SDK).

Each `cstp.*` method is one tool: its params model is the tool's inputSchema, its result
schema the outputSchema, and a successful call returns the JSON-RPC result as
structuredContent (and as JSON text for clients that read only content). A call goes
through the same steps as on /cstp: params validation (-32602), admission by the same rate
limits with the agent the bearer token maps to (-32002), then the handler. A failed call is
a tool result with `isError: true` whose structuredContent is the JSON-RPC error object
(`code`, `message`, `data`), so an agent can read the same codes on either door.

The session manager runs stateless with JSON responses: every POST is self-contained, so
several server processes can answer /mcp without sticky sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from a2a.rpc.dispatcher import Admission
from a2a.rpc.errors import MethodNotFound, to_error_object
from a2a.rpc.methods import CallContext, Method

#: Methods not offered as tools: `rpc.*` is JSON-RPC's own discovery; MCP has tools/list.
RESERVED_PREFIX = "rpc."


def tool_for(method: Method) -> types.Tool:
    """The MCP Tool describing `method`: name, description, input and output schemas."""
    return types.Tool(
        name=method.name,
        description=method.summary,
        input_schema=method.params_model.model_json_schema(by_alias=True),
        output_schema=method.result_schema or None,
    )


def tools_of(methods: Mapping[str, Method]) -> dict[str, Method]:
    """The methods offered as tools, by name (every method but `rpc.*`)."""
    return {n: m for n, m in methods.items() if not n.startswith(RESERVED_PREFIX)}


async def call_method(
    methods: Mapping[str, Method], admission: Admission, name: str, args: Any, ctx: CallContext
) -> types.CallToolResult:
    """Run one tool call through validation, admission and the handler.

    Never raises for a caller's mistake or a store failure: those become `isError` results
    carrying the JSON-RPC error object (unexpected faults are -32603, logged, not described).
    """
    try:
        method = tools_of(methods).get(name)
        if method is None:
            raise MethodNotFound(name)
        params = method.validate(args if isinstance(args, dict) else None)
        await admission.admit(name, ctx)
        result = await method.handler(params, ctx)
    except Exception as exc:
        wire = to_error_object(exc)
        error = {"code": wire.code, "message": wire.message}
        if wire.data is not None:
            error["data"] = wire.data
        return _result(error, is_error=True)
    return _result(result, is_error=False)


def _result(payload: dict[str, Any], *, is_error: bool) -> types.CallToolResult:
    text = types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))
    return types.CallToolResult(content=[text], structured_content=payload, is_error=is_error)


def caller(request: Any) -> str:
    """The calling agent: the one BearerAuth found, else (auth off) the client address."""
    if isinstance(request, Request):
        agent = getattr(request.state, "agent", None)
        if isinstance(agent, str):
            return agent
        if request.client:
            return request.client.host
    return "unknown"


def mcp_server(
    methods: Mapping[str, Method], admission: Admission, name: str, version: str
) -> Server[Any]:
    """A low-level MCP server answering tools/list and tools/call from the method table."""
    tools = [tool_for(m) for m in tools_of(methods).values()]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        request_id = "" if ctx.request_id is None else str(ctx.request_id)
        call = CallContext(agent=caller(ctx.request), request_id=request_id)
        return await call_method(methods, admission, params.name, params.arguments, call)

    return Server(
        name,
        version=version,
        instructions="Decision memory: query past decisions and search the operator guide.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def session_manager(server: Server[Any], max_body_bytes: int) -> StreamableHTTPSessionManager:
    """Stateless, JSON-response streamable HTTP for `server`; run it in the app's lifespan."""
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


class McpEndpoint:
    """ASGI endpoint for /mcp: hands the request to the session manager in `app.state.mcp`.

    The manager only exists once the lifespan has built the method table, so the route is
    declared with this forwarder and the lifespan fills `app.state.mcp` in.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") == "GET":
            # Stateless: the server never pushes, so the optional GET stream (MCP streamable
            # HTTP) is refused with 405 as the transport allows, instead of an idle stream.
            response = Response(status_code=405, headers={"Allow": "POST, DELETE"})
            await response(scope, receive, send)
            return
        manager: StreamableHTTPSessionManager = scope["app"].state.mcp
        await manager.handle_request(scope, receive, send)
