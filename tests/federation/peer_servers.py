"""Real servers standing in for peers, for the federation tests: a peer that answers
garbage (one per path), a TCP proxy that adds latency, and uvicorn in a thread to serve
an app on a chosen port."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from tests.servers import free_port

#: The embedding model the `good` case's agent card names.
GOOD_MODEL = {"name": "fake-model", "dimensions": 3}
#: The answer cap of a2a.federation.client (1 MiB), which a `huge` answer passes.
ANSWER_CAP = 1_048_576


def summary(id: str, distance: Any = 0.25, **fields: Any) -> dict[str, Any]:
    """A decision summary as a cstp service sends it, `fields` on top."""
    return {
        "id": id,
        "title": f"Decision {id}",
        "category": "architecture",
        "confidence": 0.8,
        "stakes": "high",
        "status": "decided",
        "outcome": None,
        "date": "2026-01-20T14:00:00Z",
        "source": None,
        "recordedBy": "fake",
        "tenant": "default",
        "distance": distance,
        **fields,
    }


def query_result(decisions: list[dict[str, Any]]) -> dict[str, Any]:
    """A cstp.queryDecisions result carrying `decisions`."""
    return {
        "decisions": decisions,
        "total": len(decisions),
        "query": "anything",
        "queryTimeMs": 1,
        "agent": "fake-peer",
    }


def _rpc(result: Any = None, error: Any = None, id: Any = 1) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": id}
    if error is not None:
        body["error"] = error
    else:
        body["result"] = result
    return json.dumps(body).encode()


#: Each garbage case of GarbagePeer and the reason a2a.federation gives for it (CONTRACT.md:
#: `failed` with a short reason of ours, never the peer's text, a token or a stack).
GARBAGE = {
    "html": "the peer's answer is not JSON",
    "http-500": "the peer answered HTTP 500",
    "rpc-error": "the peer answered error -32603",
    "huge": f"the peer's answer is over {ANSWER_CAP} bytes",
    "huge-stream": f"the peer's answer is over {ANSWER_CAP} bytes",
    "nan": "the peer's answer is not JSON",
    "bad-field": "the peer's answer is not a valid result (decisions.0.distance)",
    "too-many": "the peer's answer is not a valid result (3 decisions for a limit of 2)",
    "echo-token": "the peer answered error -32001",
    "other-id": "the peer's answer is not a JSON-RPC response to the call",
    "no-distance": "the peer's answer is not a valid result (a decision without a distance)",
    "redirect": "the peer answered HTTP 307",
}
#: The decision of GarbagePeer's `stale` case: it names another peer and tenant, and its
#: answer is stale since STALE_SINCE.
STALE = summary("s1", 0.05, peer="someone-else", tenant="their-tenant")
STALE_SINCE = "2026-12-06T06:00:00Z"


class GarbagePeer:
    """A peer that answers each call to `/{case}/cstp` as `case` says (GARBAGE), whatever
    the call; `good` answers one decision, `g1`, and `stale` one marked stale (STALE).
    Agent cards are a 404, but the `good` case's, which names GOOD_MODEL. `tokens`: the
    bearer token of each call, in order (the `echo-token` case sends it back); `federated`:
    the CSTP-Federated header of each (None: not sent)."""

    def __init__(self) -> None:
        self.tokens: list[str] = []
        self.federated: list[str | None] = []
        routes = [
            Route("/{case}/cstp", self._call, methods=["POST"]),
            Route("/good/.well-known/agent-card.json", self._card),
        ]
        self.app = Starlette(routes=routes)

    async def _card(self, request: Request) -> Response:
        extension = {"uri": "urn:cstp:embedding-model:v1", "params": GOOD_MODEL}
        card = {"name": "fake", "capabilities": {"extensions": [extension]}}
        return Response(json.dumps(card).encode(), media_type="application/json")

    async def _call(self, request: Request) -> Response:
        case = request.path_params["case"]
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        self.tokens.append(token)
        self.federated.append(request.headers.get("cstp-federated"))
        if case == "good":
            return Response(_rpc(query_result([summary("g1", 0.1)])), media_type="application/json")
        if case == "html":
            html = b"<!doctype html><html><body><h1>502 Bad Gateway</h1></body></html>"
            return Response(html, media_type="text/html")
        if case == "http-500":
            return Response(b"Traceback (most recent call last):\n  ...", status_code=500)
        if case == "rpc-error":
            error = {"code": -32603, "message": 'Traceback: File "/srv/cstp/app.py", line 1'}
            return Response(_rpc(error=error), media_type="application/json")
        if case == "huge":
            big = query_result([summary("h1", title="x" * ANSWER_CAP)])
            return Response(_rpc(big), media_type="application/json")
        if case == "huge-stream":
            return StreamingResponse(_chunks(), media_type="application/json")
        if case == "nan":
            body = _rpc(query_result([summary("n1", 0.5)])).replace(b"0.5", b"NaN")
            return Response(body, media_type="application/json")
        if case == "bad-field":
            decisions = [summary("b1", "far")]
            return Response(_rpc(query_result(decisions)), media_type="application/json")
        if case == "too-many":
            decisions = [summary(f"t{n}", 0.1 * n) for n in range(1, 4)]
            return Response(_rpc(query_result(decisions)), media_type="application/json")
        if case == "echo-token":
            error = {"code": -32001, "message": f"bad token {token}", "data": {"token": token}}
            return Response(_rpc(error=error), media_type="application/json")
        if case == "no-distance":
            decisions = [summary("d1", None)]
            return Response(_rpc(query_result(decisions)), media_type="application/json")
        if case == "stale":
            stale = {**query_result([STALE]), "stale": {"since": STALE_SINCE}}
            return Response(_rpc(stale), media_type="application/json")
        if case == "redirect":  # elsewhere, where our token would be echoed: not followed
            return Response(status_code=307, headers={"location": "/echo-token/cstp"})
        if case == "other-id":
            return Response(_rpc(query_result([]), id=2), media_type="application/json")
        return Response(b"no such case", status_code=404)


async def _chunks() -> AsyncIterator[bytes]:
    """A JSON answer streamed (no Content-Length), past the cap by its last chunk."""
    yield b'{"jsonrpc": "2.0", "id": 1, "result": {"query": "'
    for _ in range(ANSWER_CAP // 65_536 + 1):
        yield b"x" * 65_536
    yield b'"}}'


@contextmanager
def serving(app: Any, port: int | None = None) -> Iterator[str]:
    """`app` served by uvicorn on 127.0.0.1:`port` (a free one when None), in a thread;
    its base URL."""
    port = free_port() if port is None else port
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError(f"uvicorn did not start on port {port}")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


class LatencyProxy:
    """A TCP proxy to 127.0.0.1:`upstream` that holds each chunk a client sends for
    `delay` seconds before passing it on (so each HTTP request arrives that much later);
    answers come back as they are. Runs its own event loop in a thread: `start`, `close`."""

    def __init__(self, upstream: int, delay: float = 0.0) -> None:
        self.upstream = upstream
        self.delay = delay
        self.port = free_port()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LatencyProxy:
        self._thread.start()
        start = asyncio.start_server(self._connect, "127.0.0.1", self.port)
        self._server = asyncio.run_coroutine_threadsafe(start, self._loop).result(10)
        return self

    def close(self) -> None:
        async def stop() -> None:
            assert self._server is not None
            self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _connect(
        self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter
    ) -> None:
        try:
            upstream_r, upstream_w = await asyncio.open_connection("127.0.0.1", self.upstream)
        except OSError:
            client_w.close()
            return
        await asyncio.gather(
            self._pipe(client_r, upstream_w, delayed=True),
            self._pipe(upstream_r, client_w, delayed=False),
            return_exceptions=True,
        )

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delayed: bool
    ) -> None:
        try:
            while chunk := await reader.read(65_536):
                if delayed and self.delay:
                    await asyncio.sleep(self.delay)
                writer.write(chunk)
                await writer.drain()
        finally:
            with contextlib.suppress(OSError, RuntimeError):
                writer.close()
