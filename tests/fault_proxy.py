"""A fault-injecting HTTP proxy in front of a `chroma run` server, for tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.servers import free_port


class FaultProxy:
    """Forwards HTTP to Chroma, with faults on request:

    - while `fail_modify` is set, a collection PUT (Chroma's `modify`, which carries the
      revision marker) gets HTTP 500 in Chroma's own error format, without reaching Chroma;
    - while `bare_500` is set, every request gets a bare HTTP 500 (`text/plain`, as a
      reverse proxy answers when its upstream breaks), without reaching Chroma.
    """

    def __init__(self, upstream: str) -> None:
        self.fail_modify = threading.Event()
        self.bare_500 = threading.Event()
        self.failed = 0
        self._upstream = upstream

        async def forward(request: Request) -> Response:
            if self.bare_500.is_set():
                self.failed += 1
                return Response(b"Internal Server Error", status_code=500, media_type="text/plain")
            if self.fail_modify.is_set() and request.method == "PUT":
                self.failed += 1
                return Response(b'{"error":"InternalError","message":"injected"}', status_code=500)
            async with httpx.AsyncClient(base_url=self._upstream, timeout=30) as client:
                answer = await client.request(
                    request.method,
                    request.url.path,
                    params=request.query_params,
                    content=await request.body(),
                    headers={"content-type": request.headers.get("content-type", "")},
                )
            return Response(
                answer.content,
                status_code=answer.status_code,
                media_type=answer.headers.get("content-type"),
            )

        methods = ["GET", "POST", "PUT", "DELETE", "PATCH"]
        self.app = Starlette(routes=[Route("/{path:path}", forward, methods=methods)])


@contextmanager
def running(proxy: FaultProxy) -> Iterator[str]:
    """`proxy` served by uvicorn on a free loopback port, in a thread; its base URL."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(proxy.app, host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
