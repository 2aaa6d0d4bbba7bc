"""An MCP client session on a running service, over real HTTP (the `mcp` SDK's client)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def mcp_session(url: str, token: str, timeout: float = 60) -> AsyncIterator[ClientSession]:
    """An initialised session on `url`/mcp with `token` as the bearer token; each HTTP
    request waits at most `timeout` seconds."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session
