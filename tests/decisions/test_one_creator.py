"""Two replicas (`cstp serve` processes on one `chroma run` server, one Redis) writing one
decision at once.

- Issue 25 edge 2: of identical writes of one new id, exactly one is answered
  `created: true` (was: both, in 38-53 of 200 pairs).
- Updates of one decision through both replicas each land in its history (was: the later
  write won, and the other acknowledged update was lost)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.decisions.wire import WRITER_TOKEN, at_once, record_at_once, replica_env, result
from tests.redis_server import running_redis
from tests.servers import free_port, start_chroma, start_cstp, stop

ROUNDS = 30
#: Rounds of two updates at once: without the replicas' shared lock, 30 of 30 lost one.
UPDATE_ROUNDS = 10


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


def _tags_by_replica(record_id: str) -> Callable[[int], dict[str, Any]]:
    """updateDecision params for replica n: tags `by-n`, reason `n`."""
    return lambda n: {"id": record_id, "changes": {"tags": [f"by-{n}"]}, "reason": f"{n}"}


def test_updates_of_one_decision_through_two_replicas_each_land_in_its_history(
    replicas: list[str],
) -> None:
    """Reported by a break-it pass: two replicas updating one decision at once each read
    the same history, and the later write won: one acknowledged update was lost."""
    for round_ in range(UPDATE_ROUNDS):
        record_id = f"two-updaters-{round_}"
        decision = {"id": record_id, "title": "Two updaters"}
        result(replicas[0], "cstp.recordDecision", {"decision": decision}, WRITER_TOKEN)
        answers = at_once(
            replicas, "cstp.updateDecision", _tags_by_replica(record_id), connect_first=True
        )
        assert all("result" in a for a in answers), (round_, answers)
        stored = result(replicas[1], "cstp.getDecision", {"id": record_id})
        reasons = sorted(entry["reason"] for entry in stored["history"])
        assert reasons == ["0", "1"], (round_, stored["history"])
        last = stored["history"][-1]
        assert stored["tags"] == last["changes"]["tags"][1] == [f"by-{last['reason']}"]
