"""Real server processes for tests: `chroma run`, `cstp serve`, on free loopback ports."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(url: str, process: subprocess.Popen[bytes], seconds: float = 60) -> None:
    """Poll `url` until it answers 200; fail early if the process died."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            out = process.stdout.read().decode() if process.stdout else ""
            raise RuntimeError(f"process exited with {process.returncode}: {out[-2000:]}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer within {seconds} s")


def start_chroma(path: Path, port: int) -> subprocess.Popen[bytes]:
    """`chroma run` on 127.0.0.1:`port`, ready to answer."""
    process = subprocess.Popen(
        [
            str(BIN / "chroma"),
            "run",
            "--path",
            str(path),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    wait_for(f"http://127.0.0.1:{port}/api/v2/heartbeat", process)
    return process


def cstp(*args: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run the `cstp` command to completion."""
    return subprocess.run(
        [str(BIN / "cstp"), *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start_cstp(port: int, env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
    """`cstp serve` (uvicorn) on 127.0.0.1:`port`, ready to answer."""
    process = subprocess.Popen(
        [str(BIN / "cstp"), "serve", "--host", "127.0.0.1", "--port", str(port), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, **env},
    )
    wait_for(f"http://127.0.0.1:{port}/health", process, seconds=300)
    return process


def stop(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
