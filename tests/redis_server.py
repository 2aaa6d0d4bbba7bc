"""An ephemeral `redis-server` for tests: loopback, a free port, no persistence."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import redis

from tests.servers import free_port, stop


def require_redis_server() -> str:
    """The redis-server executable; skips the test, saying why, when it is not installed."""
    path = shutil.which("redis-server")
    if path is None:
        pytest.skip("redis-server is not installed (apt-get install -y redis-server); CI has it")
    return path


def start_redis(port: int) -> subprocess.Popen[bytes]:
    """`redis-server` on 127.0.0.1:`port`, answering PING; nothing written to disk."""
    process = subprocess.Popen(
        [
            require_redis_server(),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1)
    deadline = time.monotonic() + 20
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                out = process.stdout.read().decode() if process.stdout else ""
                raise RuntimeError(f"redis-server exited with {process.returncode}: {out[-2000:]}")
            try:
                if client.ping():
                    return process
            except redis.ConnectionError:
                time.sleep(0.05)
    finally:
        client.close()
    stop(process)
    raise TimeoutError(f"redis-server on port {port} did not answer within 20 s")


@contextmanager
def running_redis(port: int | None = None) -> Iterator[str]:
    """A fresh redis-server for the duration; yields its `redis://127.0.0.1:PORT` URI."""
    port = port or free_port()
    process = start_redis(port)
    try:
        yield f"redis://127.0.0.1:{port}"
    finally:
        stop(process)
