"""A `cstp serve` with peers, for the doors' federation tests (client, CLI, console): one
real process over the example decisions whose peers file names the service itself and a
dead port, so a federated call has one peer that answers and one that fails, at the cost
of one server."""

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


@contextmanager
def peered_server(folder: Path, token: str, **env: str) -> Iterator[str]:
    """`cstp serve` (auth on: agent `ops` with `token`, the static WordLlama model) over the
    example decisions, peers SELF and GONE, its token for SELF read from the environment
    (`token_env`); its base URL, stopped after the block."""
    port, dead = free_port(), free_port()
    peers = folder / "peers.toml"
    peers.write_text(
        f'[[peer]]\nname = "{SELF}"\nurl = "http://127.0.0.1:{port}"\n'
        'token_env = "CSTP_TEST_PEER_TOKEN"\n\n'
        f'[[peer]]\nname = "{GONE}"\nurl = "http://127.0.0.1:{dead}"\n'
    )
    environment = {
        "CSTP_DATA_DIR": str(folder / "data"),
        "CSTP_EMBEDDING_MODEL": MODEL,
        "CSTP_AUTH_TOKENS": f"ops:{token}",
        "CSTP_PEERS_FILE": str(peers),
        "CSTP_TEST_PEER_TOKEN": token,
        **env,
    }
    server = start_cstp(port, environment, "--index", str(EXAMPLES))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(server)
