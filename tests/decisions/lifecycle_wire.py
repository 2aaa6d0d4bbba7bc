"""Servers and tokens for the lifecycle tests: a writer, a second writer, a reader, an admin."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.decisions.wire import FAST_MODEL
from tests.servers import chroma_server, free_port, start_cstp, stop

WRITER, WRITER_TOKEN = "planner", "writer-token-0123456789"
OTHER, OTHER_TOKEN = "builder", "other-token-0123456789"
READER, READER_TOKEN = "auditor", "reader-token-0123456789"
ADMIN, ADMIN_TOKEN = "operator", "admin-token-0123456789"
TOKENS = ",".join(
    [
        f"{WRITER}:{WRITER_TOKEN}:read+write",
        f"{OTHER}:{OTHER_TOKEN}:read+write",
        f"{READER}:{READER_TOKEN}",
        f"{ADMIN}:{ADMIN_TOKEN}:admin",
    ]
)


@dataclass
class Served:
    """A running `cstp serve` (and its `chroma run`, when on a server) with its settings."""

    url: str
    process: subprocess.Popen[bytes]
    env: dict[str, str]


def environment(
    folder: Path, chroma_url: str | None, tokens: str = TOKENS, **extra: str
) -> dict[str, str]:
    """The settings of a service on `folder` (embedded) or on the Chroma at `chroma_url`,
    with `tokens` (CSTP_AUTH_TOKENS) and `extra` settings."""
    env = {
        "CSTP_EMBEDDING_MODEL": FAST_MODEL,
        "CSTP_AUTH_TOKENS": tokens,
        "CSTP_DATA_DIR": str(folder / "data"),
        "CSTP_LOG_FORMAT": "json",
        **extra,
    }
    if chroma_url is not None:
        env["CSTP_CHROMA_URL"] = chroma_url
    return env


@contextmanager
def service(env: dict[str, str]) -> Iterator[Served]:
    """`cstp serve` with `env`, stopped after the block."""
    port = free_port()
    process = start_cstp(port, env)
    try:
        yield Served(f"http://127.0.0.1:{port}", process, env)
    finally:
        stop(process)


@contextmanager
def served(folder: Path, store: str, tokens: str = TOKENS, **extra: str) -> Iterator[Served]:
    """`cstp serve` with `tokens` and `extra` settings on a fresh embedded store or a fresh
    `chroma run` server."""
    if store == "chroma-server":
        with (
            chroma_server(folder) as (chroma_url, _),
            service(environment(folder, chroma_url, tokens, **extra)) as s,
        ):
            yield s
    else:
        with service(environment(folder, None, tokens, **extra)) as s:
            yield s
