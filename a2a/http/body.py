"""Reading a request body with a size cap, before any parsing."""

from __future__ import annotations

from starlette.requests import Request


class BodyTooLarge(Exception):
    """The body is over the cap (HTTP 413, CONTRACT.md section Transport)."""


async def read_capped_body(request: Request, max_bytes: int) -> bytes:
    """The whole body, at most `max_bytes`; raises BodyTooLarge as soon as it is over.

    A declared Content-Length over the cap is refused without reading; a chunked body is
    counted as it arrives, so an oversized one is never held in memory.
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise BodyTooLarge
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)
