"""Reading a request body with a size cap and a deadline, before any parsing."""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse

from a2a.errors import BodyTimeout, BodyTooLarge
from a2a.rpc import protocol


async def read_capped_body(request: Request, max_bytes: int, timeout_seconds: float) -> bytes:
    """The whole body, at most `max_bytes`, all of it within `timeout_seconds`.

    A declared Content-Length over the cap is refused without reading; a chunked body is
    counted as it arrives, so an oversized one is never held in memory. Raises BodyTooLarge
    as soon as the body is over the cap, BodyTimeout when it is not complete in time (a body
    sent at 1 byte/s, a Content-Length larger than what is sent), and Starlette's
    ClientDisconnect when the client goes away.

    The deadline is asyncio's own (`asyncio.timeout`): the server runs on asyncio, and an
    anyio cancel scope cost about 0.1 ms of event-loop CPU per request under load.
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise BodyTooLarge
    chunks, size = [], 0
    try:
        async with asyncio.timeout(timeout_seconds):
            async for chunk in request.stream():
                size += len(chunk)
                if size > max_bytes:
                    raise BodyTooLarge
                chunks.append(chunk)
    except TimeoutError:
        raise BodyTimeout from None
    return b"".join(chunks)


def too_large(max_bytes: int) -> JSONResponse:
    """HTTP 413 with the JSON-RPC error object (-32600, `data.maxBytes`); the connection is
    closed after it, so the rest of the body is never read."""
    error = protocol.failure(
        None, protocol.INVALID_REQUEST, "Request body too large", {"maxBytes": max_bytes}
    )
    return JSONResponse(error, status_code=413, headers={"Connection": "close"})


def timed_out(seconds: float) -> JSONResponse:
    """HTTP 408 with the JSON-RPC error object (-32600, `data.timeoutSeconds`); the
    connection is closed after it."""
    error = protocol.failure(
        None, protocol.INVALID_REQUEST, "Request body timeout", {"timeoutSeconds": seconds}
    )
    return JSONResponse(error, status_code=408, headers={"Connection": "close"})
