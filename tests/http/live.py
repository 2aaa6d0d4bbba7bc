"""The app under real uvicorn, in a thread of the test process, over real HTTP on loopback."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import uvicorn

from a2a.app.runtime import Runtime
from a2a.embeddings import Embedder
from a2a.http.app import create_app
from a2a.rpc.methods import Method
from a2a.settings import Settings
from tests.servers import free_port


@contextmanager
def live_server(
    settings: Settings, embedder: Embedder, extra_methods: Iterable[Method] = ()
) -> Iterator[str]:
    """`http://127.0.0.1:<port>` of the app served by uvicorn as `cstp serve` runs it
    (proxy headers off), until the context closes."""
    runtime = Runtime.open(settings, role="test", embedder=embedder)
    app = create_app(settings, runtime, extra_methods)
    port = free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_config=None, access_log=False, proxy_headers=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
