"""Issue 25 edge 1: a write Chroma stored whose revision change failed (-32003) stayed
invisible to every replica after its retry (`created: false`). A fault-injecting HTTP proxy
between `cstp serve` and a `chroma run` server fails the marker change (a collection PUT)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.decisions.wire import FAST_MODEL, TOKENS, call
from tests.servers import free_port, start_chroma, start_cstp, stop


class FaultProxy:
    """Forwards HTTP to Chroma; while `fail_modify` is set, a collection PUT (Chroma's
    `modify`, which carries the revision marker) gets HTTP 500 without reaching Chroma."""

    def __init__(self, upstream: str) -> None:
        self.fail_modify = threading.Event()
        self.failed = 0
        self._upstream = upstream

        async def forward(request: Request) -> Response:
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


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[str], FaultProxy]]:
    folder: Path = tmp_path_factory.mktemp("retry-visible")
    chroma_port, proxy_port = free_port(), free_port()
    chroma = start_chroma(folder / "chroma", chroma_port)
    proxy = FaultProxy(f"http://127.0.0.1:{chroma_port}")
    server = uvicorn.Server(
        uvicorn.Config(proxy.app, host="127.0.0.1", port=proxy_port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    servers = []
    try:
        for n in range(2):
            env = {
                "CSTP_EMBEDDING_MODEL": FAST_MODEL,
                "CSTP_AUTH_TOKENS": TOKENS,
                "CSTP_DATA_DIR": str(folder / f"data{n}"),
                "CSTP_CHROMA_URL": f"http://127.0.0.1:{proxy_port}",
            }
            port = free_port()
            servers.append(start_cstp(port, env))
            yield_url = f"http://127.0.0.1:{port}"
            servers[-1].url = yield_url  # type: ignore[attr-defined]
        yield [s.url for s in servers], proxy  # type: ignore[attr-defined]
    finally:
        for process in servers:
            stop(process)
        server.should_exit = True
        thread.join(timeout=10)
        stop(chroma)


def _listed(url: str) -> set[str]:
    answer = call(url, "cstp.listDecisions", {"limit": 100})
    return {d["id"] for d in answer["result"]["decisions"]}


def test_a_retry_after_a_failed_marker_change_is_visible_on_every_replica(
    replicas: tuple[list[str], FaultProxy],
) -> None:
    urls, proxy = replicas
    # Both replicas loaded and fresh before the fault.
    call(urls[0], "cstp.recordDecision", {"decision": {"id": "warm", "title": "Warm up"}})
    assert all("warm" in _listed(url) for url in urls)
    decision = {"id": "lost-marker", "title": "Stored but not announced"}
    proxy.fail_modify.set()
    try:
        first = call(urls[0], "cstp.recordDecision", {"decision": decision})
    finally:
        proxy.fail_modify.clear()
    assert proxy.failed > 0 and first["error"]["code"] == -32003, first
    retry = call(urls[0], "cstp.recordDecision", {"decision": decision})
    assert retry["result"]["created"] is False, retry
    for url in urls:
        assert "lost-marker" in _listed(url), url
        query = call(url, "cstp.queryDecisions", {"query": "stored but not announced"})
        assert "lost-marker" in {d["id"] for d in query["result"]["decisions"]}, url
