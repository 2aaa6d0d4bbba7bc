"""`cstp serve --workers 2` (Redis limits, a `chroma run` server): one service to a client."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.decisions.wire import FAST_MODEL, READER_TOKEN, TOKENS, result
from tests.redis_server import running_redis
from tests.servers import free_port, start_chroma, start_cstp, stop

PAGES = 12


def test_a_cursor_from_one_worker_pages_on_every_worker_without_a_configured_secret(
    tmp_path: Path,
) -> None:
    """Bug found by breakit: without CSTP_CURSOR_SECRET each worker process drew its own
    key, so the second page was -32602 `cursor` whenever another worker answered it."""
    chroma_port, port = free_port(), free_port()
    chroma = start_chroma(tmp_path / "chroma", chroma_port)
    try:
        with running_redis() as redis_uri:
            env = {
                "CSTP_EMBEDDING_MODEL": FAST_MODEL,
                "CSTP_AUTH_TOKENS": TOKENS,
                "CSTP_DATA_DIR": str(tmp_path / "data"),
                "CSTP_CHROMA_URL": f"http://127.0.0.1:{chroma_port}",
                "CSTP_RATE_LIMIT_STORAGE": redis_uri,
            }
            server = start_cstp(port, env, "--workers", "2")
            try:
                url = f"http://127.0.0.1:{port}"
                for n in range(3):
                    result(url, "cstp.recordDecision", {"decision": {"title": f"Paged {n}"}})
                headers = {"Authorization": f"Bearer {READER_TOKEN}"}
                for _ in range(PAGES):
                    # A new connection each time: the kernel spreads them over the workers.
                    first = result(url, "cstp.listDecisions", {"limit": 1}, READER_TOKEN)
                    body = {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "cstp.listDecisions",
                        "params": {"limit": 1, "cursor": first["nextCursor"]},
                    }
                    answer = httpx.post(
                        f"{url}/cstp", json=body, headers=headers, verify=False
                    ).json()
                    assert "result" in answer, answer
            finally:
                stop(server)
    finally:
        stop(chroma)
