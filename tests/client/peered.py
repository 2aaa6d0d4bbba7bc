"""A `cstp serve` with peers, for the doors' federation tests (client, CLI, console): a peers
file naming the service itself and a dead port, so a federated call has one peer that
answers and one that fails, at the cost of no server more than the one under test."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import REPO
from tests.servers import free_port, start_cstp, stop

EXAMPLES = REPO / "examples" / "decisions"
#: The peer that is the service itself: its answer is the service's own, marked `self`.
SELF = "self"
#: The peer on a loopback port nothing listens on: `failed` (connection refused), then
#: `skipped` once its circuit opens after 3 failures in a row.
GONE = "gone"
MODEL = "wordllama-l2-supercat-256"


#: The variable the peers file names for the token sent to SELF.
TOKEN_ENV = "CSTP_TEST_PEER_TOKEN"


def self_and_gone(path: Path, port: int, token: str) -> dict[str, str]:
    """Write a peers file at `path` naming SELF (the service on `port`, called with `token`)
    and GONE (a free port, nothing listening); the settings that give it to the service."""
    dead = free_port()
    path.write_text(
        f'[[peer]]\nname = "{SELF}"\nurl = "http://127.0.0.1:{port}"\n'
        f'token_env = "{TOKEN_ENV}"\n\n'
        f'[[peer]]\nname = "{GONE}"\nurl = "http://127.0.0.1:{dead}"\n'
    )
    return {"CSTP_PEERS_FILE": str(path), TOKEN_ENV: token}


@contextmanager
def peered_server(folder: Path, token: str, **env: str) -> Iterator[str]:
    """`cstp serve` (auth on: agent `ops` with `token`, the static WordLlama model) over the
    example decisions, peers SELF and GONE (self_and_gone); its base URL, stopped after the
    block."""
    port = free_port()
    environment = {
        "CSTP_DATA_DIR": str(folder / "data"),
        "CSTP_EMBEDDING_MODEL": MODEL,
        "CSTP_AUTH_TOKENS": f"ops:{token}",
        **self_and_gone(folder / "peers.toml", port, token),
        **env,
    }
    server = start_cstp(port, environment, "--index", str(EXAMPLES))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(server)
