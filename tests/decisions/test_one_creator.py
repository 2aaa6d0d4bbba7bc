"""Issue 25 edge 2: of identical writes of one new id sent at once through two replicas
(`cstp serve` processes on one `chroma run` server, one Redis), exactly one is answered
`created: true` (was: both, in 38-53 of 200 pairs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.decisions.wire import WRITER_TOKEN, record_at_once, replica_env, result
from tests.redis_server import running_redis
from tests.servers import free_port, start_chroma, start_cstp, stop

ROUNDS = 30


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    folder: Path = tmp_path_factory.mktemp("one-creator")
    chroma_port = free_port()
    chroma = start_chroma(folder / "chroma", chroma_port)
    servers = []
    try:
        with running_redis() as redis_uri:
            for n in range(2):
                chroma_url = f"http://127.0.0.1:{chroma_port}"
                env = replica_env(
                    folder / f"data{n}", chroma_url, CSTP_RATE_LIMIT_STORAGE=redis_uri
                )
                port = free_port()
                servers.append((port, start_cstp(port, env)))
            yield [f"http://127.0.0.1:{port}" for port, _ in servers]
    finally:
        for _, server in servers:
            stop(server)
        stop(chroma)


def _identical_at_once(urls: list[str], record_id: str) -> list[dict[str, Any]]:
    return record_at_once(
        urls, lambda n: {"id": record_id, "title": "One creator"}, connect_first=True
    )


def test_identical_writes_through_two_replicas_have_one_creator(replicas: list[str]) -> None:
    for round_ in range(ROUNDS):
        record_id = f"one-creator-{round_}"
        answers = _identical_at_once(replicas, record_id)
        created = sorted(a["result"]["created"] for a in answers)
        assert created == [False, True], (round_, answers)
        for url in replicas:
            assert result(url, "cstp.getDecision", {"id": record_id})["title"] == "One creator"


def test_a_deleted_id_recorded_again_through_the_other_replica_is_created_anew(
    replicas: list[str],
) -> None:
    # The claim of a deleted id is released: recording it again is a creation, on any
    # replica (CONTRACT.md, Lifecycle: "it may be recorded again").
    decision = {"id": "one-creator-again", "title": "One creator"}
    first = result(replicas[0], "cstp.recordDecision", {"decision": decision}, WRITER_TOKEN)
    assert first["created"] is True
    gone = result(
        replicas[1], "cstp.deleteDecision", {"id": decision["id"], "reason": "a test"}, WRITER_TOKEN
    )
    assert gone == {"id": decision["id"], "deleted": True}
    again = result(replicas[1], "cstp.recordDecision", {"decision": decision}, WRITER_TOKEN)
    assert again["created"] is True
