"""Real server processes for tests: `chroma run`, `cstp serve`, on free loopback ports."""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import httpx

BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# Server output goes to files, never to pipes: nobody drains a pipe during a test, and a
# full one blocks the server on its next log line.
_LOGS: dict[int, Path] = {}
# Every server started here, killed at exit if a test or fixture left it running (one that
# failed between starting it and its `finally`): no server outlives the test session.
_STARTED: list[subprocess.Popen[bytes]] = []


@atexit.register
def _kill_leftovers() -> None:
    for process in _STARTED:
        if process.poll() is None:
            process.kill()
            process.wait()


def _log_file(log: Path | None) -> tuple[Path, IO[bytes]]:
    if log is None:
        handle, name = tempfile.mkstemp(prefix="cstp-test-", suffix=".log")
        os.close(handle)
        log = Path(name)
    return log, log.open("wb")


def output_of(process: subprocess.Popen[bytes]) -> str:
    """Everything a server started here has printed so far (stdout and stderr)."""
    path = _LOGS.get(process.pid)
    return path.read_text(errors="replace") if path and path.exists() else ""


def wait_for(url: str, process: subprocess.Popen[bytes], seconds: float = 60) -> None:
    """Poll `url` until it answers 200; fail early if the process died."""
    deadline = time.monotonic() + seconds
    # One client for every poll: each new httpx client loads the CA bundle (about 18 ms of
    # CPU), which a poll every 50 ms took from the server starting beside it.
    with httpx.Client(timeout=1) as http:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                out = output_of(process)
                raise RuntimeError(f"process exited with {process.returncode}: {out[-2000:]}")
            try:
                if http.get(url).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
    raise TimeoutError(f"{url} did not answer within {seconds} s")


def start_chroma(path: Path, port: int, log: Path | None = None) -> subprocess.Popen[bytes]:
    """`chroma run` on 127.0.0.1:`port`, ready to answer.

    Its output goes to `log` (a temporary file when None); see output_of.
    """
    log, output = _log_file(log)
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
        stdout=output,
        stderr=subprocess.STDOUT,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    _LOGS[process.pid] = log
    _STARTED.append(process)
    _ready(f"http://127.0.0.1:{port}/api/v2/heartbeat", process, 60)
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
    """`cstp serve` (uvicorn) on 127.0.0.1:`port`, ready to answer; see output_of."""
    log, output = _log_file(None)
    process = subprocess.Popen(
        [str(BIN / "cstp"), "serve", "--host", "127.0.0.1", "--port", str(port), *args],
        stdout=output,
        stderr=subprocess.STDOUT,
        env={**os.environ, **env},
    )
    _LOGS[process.pid] = log
    _STARTED.append(process)
    _ready(f"http://127.0.0.1:{port}/health", process, 300)
    return process


def _ready(url: str, process: subprocess.Popen[bytes], seconds: float) -> None:
    """wait_for, stopping the process when it never gets ready (no server outlives a test)."""
    try:
        wait_for(url, process, seconds)
    except BaseException:
        stop(process)
        raise


def stop(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def chroma_server(folder: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A `chroma run` server on a free port, its data in `folder`/chroma: (its URL, the
    process); stopped after the block."""
    port = free_port()
    chroma = start_chroma(folder / "chroma", port)
    try:
        yield f"http://127.0.0.1:{port}", chroma
    finally:
        stop(chroma)


@contextmanager
def cstp_server(env: dict[str, str], port: int | None = None) -> Iterator[str]:
    """`cstp serve` with `env` on `port` (None: a free one, chosen here): its base URL;
    stopped after the block. A port chosen before lets `env` name the service itself (a
    peers file whose peer is the service)."""
    port = free_port() if port is None else port
    server = start_cstp(port, env)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(server)


@contextmanager
def cstp_on_chroma_server(
    folder: Path, env: dict[str, str]
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`cstp serve` (data in `folder`/data, `env` on top) on a fresh `chroma run` server:
    (the service's base URL, the Chroma process, to stop or signal); both stopped after."""
    with chroma_server(folder) as (chroma_url, chroma):
        settings = {"CSTP_DATA_DIR": str(folder / "data"), "CSTP_CHROMA_URL": chroma_url, **env}
        with cstp_server(settings) as url:
            yield url, chroma


def freeze(pid: int) -> None:
    """SIGSTOP process `pid` and return once every thread of it is stopped: the signal is
    delivered asynchronously, and on a loaded machine a thread may still answer a request
    after os.kill returned. Fails after 10 s."""
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + 10
    tasks = Path(f"/proc/{pid}/task")
    while not all(_stopped(task) for task in tasks.iterdir()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"process {pid} did not stop within 10 s")
        time.sleep(0.005)


def _stopped(task: Path) -> bool:
    try:
        stat = (task / "stat").read_text()
    except FileNotFoundError:  # the thread has ended
        return True
    return stat[stat.rindex(")") + 2] in "Tt"
