"""An ephemeral `redis-server` for tests: loopback, a free port, no persistence."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis

from tests.servers import free_port, stop


def require_redis_server() -> str:
    """The redis-server executable; skips the test, saying why, when it is not installed."""
    path = shutil.which("redis-server")
    if path is None:
        pytest.skip("redis-server is not installed (apt-get install -y redis-server); CI has it")
    return path


def start_redis(port: int, unix_socket: Path | None = None) -> subprocess.Popen[bytes]:
    """`redis-server` on 127.0.0.1:`port` (0: no TCP) or on `unix_socket`, answering PING;
    nothing written to disk."""
    listen = ["--port", str(port), "--bind", "127.0.0.1"]
    if unix_socket is not None:
        listen += ["--unixsocket", str(unix_socket), "--unixsocketperm", "700"]
    process = subprocess.Popen(
        [require_redis_server(), *listen, "--save", "", "--appendonly", "no"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    if unix_socket is None:
        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1)
    else:
        client = redis.Redis(unix_socket_path=str(unix_socket), socket_timeout=1)
    deadline = time.monotonic() + 20
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                out = process.stdout.read().decode() if process.stdout else ""
                raise RuntimeError(f"redis-server exited with {process.returncode}: {out[-2000:]}")
            try:
                if client.ping():
                    return process
            except (redis.ConnectionError, FileNotFoundError):
                time.sleep(0.05)
    finally:
        client.close()
    stop(process)
    raise TimeoutError(f"redis-server on port {port} did not answer within 20 s")


@contextmanager
def running_redis(port: int | None = None, unix_socket: Path | None = None) -> Iterator[str]:
    """A fresh redis-server for the duration; yields its `redis://127.0.0.1:PORT` URI, or
    with `unix_socket` (and no TCP port) its `redis+unix://PATH` one."""
    if unix_socket is not None:
        process = start_redis(0, unix_socket)
        uri = f"redis+unix://{unix_socket}"
    else:
        port = port or free_port()
        process = start_redis(port)
        uri = f"redis://127.0.0.1:{port}"
    try:
        yield uri
    finally:
        stop(process)
