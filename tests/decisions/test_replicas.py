"""Two `cstp serve` processes sharing one `chroma run` server, writing one id at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.decisions.wire import FAST_MODEL, TOKENS, record_at_once, result
from tests.servers import free_port, start_chroma, start_cstp, stop

ROUNDS = 15


def _record_at_once(urls: list[str], record_id: str) -> list[dict[str, Any]]:
    """recordDecision of `record_id` on each server at the same moment, other content on each."""
    return record_at_once(urls, lambda n: {"id": record_id, "title": f"Written by replica {n}"})


def test_replicas_writing_one_id_at_once_acknowledge_one_and_refuse_the_other(
    tmp_path: Path,
) -> None:
    """Bug found by breakit: each process checked the id, then upserted; both answered
    `created: true` and the later write silently replaced the acknowledged one. New
    records are now added only where the id is free (Chroma `add`) and read back."""
    chroma_port = free_port()
    chroma = start_chroma(tmp_path / "chroma", chroma_port)
    ports = [free_port(), free_port()]
    servers = []
    try:
        for n, port in enumerate(ports):
            env = {
                "CSTP_EMBEDDING_MODEL": FAST_MODEL,
                "CSTP_AUTH_TOKENS": TOKENS,
                "CSTP_DATA_DIR": str(tmp_path / f"data{n}"),
                "CSTP_CHROMA_URL": f"http://127.0.0.1:{chroma_port}",
            }
            servers.append(start_cstp(port, env))
        urls = [f"http://127.0.0.1:{port}" for port in ports]
        for round_ in range(ROUNDS):
            record_id = f"shared-{round_}"
            answers = _record_at_once(urls, record_id)
            created = [a for a in answers if a.get("result", {}).get("created") is True]
            refused = [a for a in answers if a.get("error", {}).get("code") == -32602]
            assert (len(created), len(refused)) == (1, 1), answers
            assert refused[0]["error"]["data"]["errors"][0]["field"] == "decision.id"
            winner = answers.index(created[0])
            for url in urls:
                stored = result(url, "cstp.getDecision", {"id": record_id})
                assert stored["title"] == f"Written by replica {winner}"
    finally:
        for server in servers:
            stop(server)
        stop(chroma)
