"""`cstp index` and `--prune` take turns with the service's replicas on a shared Redis: a
run waits while a replica holds a record's lock, then reads what the replica wrote, so
neither loses the other's write (was: 1-3 of ~160 acknowledged updates lost, and a pruned
id written back)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from a2a.cli.exit_codes import STORE as EXIT_STORE
from a2a.decisions.replica_locks import WriterLocks
from a2a.embeddings import Embedder
from a2a.ingest.indexer import Indexer, IndexSummary
from a2a.ingest.prune import Corpus, prune
from a2a.records import Change, DecisionRecord
from a2a.store.chroma import ChromaDecisionStore
from tests.conftest import SAMPLE, index_records
from tests.redis_server import running_redis
from tests.servers import cstp

#: Seconds a run is given to get past a lock it should wait for (it must not).
BLOCKED_SECONDS = 1.0


@pytest.fixture
def redis_uri() -> Iterator[str]:
    with running_redis() as uri:
        yield uri


def locks_of(uri: str, store: ChromaDecisionStore) -> WriterLocks:
    locks = WriterLocks.from_uri(uri, store.collection_name, 30, 10)
    assert locks is not None
    return locks


def stored(store: ChromaDecisionStore, record_id: str) -> DecisionRecord:
    (row,) = store.get(ids=[record_id])
    return row.decision


def update_as_a_replica(store: ChromaDecisionStore, record_id: str, tags: list[str]) -> None:
    """What a replica's cstp.updateDecision of `record_id`'s tags writes (vector kept)."""
    (page,) = store.pages(ids=[record_id], embeddings=True)
    assert page.embeddings is not None
    old = page.rows()[0].decision
    entry = Change(
        at=datetime(2026, 3, 1, tzinfo=UTC),
        by="planner",
        reason="a replica's update",
        changes={"tags": (old.tags, tags)},
    )
    new = old.model_copy(update={"tags": tags, "history": [*old.history, entry]})
    store.upsert([new], page.embeddings)


def run_while_held(
    locks: WriterLocks, held: list[str], run: Callable[[], None], meanwhile: Callable[[], None]
) -> None:
    """`run()` in a thread while `held` are locked as by a replica: it must still be waiting
    after BLOCKED_SECONDS; then `meanwhile()` (the replica's write), the locks go, and the
    run finishes."""
    thread = threading.Thread(target=run)
    with locks.hold_all(held):
        thread.start()
        thread.join(BLOCKED_SECONDS)
        assert thread.is_alive(), "the run did not wait for the replica's lock"
        meanwhile()
    thread.join(60)
    assert not thread.is_alive()


def test_an_edited_file_waits_for_a_replicas_update_and_keeps_it(
    store: ChromaDecisionStore, embedder: Embedder, redis_uri: str
) -> None:
    index_records(store, embedder, SAMPLE)
    edited = [
        r.model_copy(update={"title": "Kafka, three brokers"}) if r.id == "d02" else r
        for r in SAMPLE
    ]
    summary = IndexSummary()
    replica, writer = locks_of(redis_uri, store), locks_of(redis_uri, store)
    run_while_held(
        replica,
        ["d02"],
        lambda: Indexer(store, embedder, locks=writer).write(edited, summary),
        lambda: update_as_a_replica(store, "d02", ["events"]),
    )
    assert (summary.updated, summary.unchanged) == (1, len(SAMPLE) - 1)
    record = stored(store, "d02")
    # The file's content wins (docs/lifecycle.md); the replica's update stays in the
    # history, and the run's own entry starts from what the replica wrote.
    assert (record.title, record.tags) == ("Kafka, three brokers", ["kafka", "events"])
    assert [entry.reason for entry in record.history] == [
        "a replica's update",
        "re-indexed from its file a.yaml",
    ]
    assert record.history[-1].changes["tags"] == (["events"], ["kafka", "events"])


def test_prune_waits_for_a_replicas_update_of_a_linked_record_and_keeps_it(
    store: ChromaDecisionStore, embedder: Embedder, redis_uri: str
) -> None:
    linked = [r.model_copy(update={"related_to": ["d03"]}) if r.id == "d02" else r for r in SAMPLE]
    d03 = next(r for r in SAMPLE if r.id == "d03")
    index_records(store, embedder, [*linked[:2], d03.model_copy(update={"related_from": ["d02"]})])
    corpus = Corpus(
        files=frozenset({"a.yaml"}), ids_by_source={"a.yaml": frozenset({"d01", "d02"})}
    )
    replica, writer = locks_of(redis_uri, store), locks_of(redis_uri, store)
    run_while_held(
        replica,
        ["d02"],
        lambda: prune(store, corpus, locks=writer),
        lambda: update_as_a_replica(store, "d02", ["kept"]),
    )
    assert store.get(ids=["d03"]) == []
    record = stored(store, "d02")
    assert (record.related_to, record.tags) == ([], ["kept"])


@pytest.mark.slow
def test_cstp_index_names_a_decision_a_replica_holds_past_one_chroma_deadline(
    tmp_path: Path, redis_uri: str
) -> None:
    """`cstp index` takes the locks of the Redis in CSTP_RATE_LIMIT_STORAGE: a decision
    another writer holds past CSTP_CHROMA_TIMEOUT_SECONDS stops the run, naming it, after
    saying what it wrote before; the same command run again indexes the rest."""
    folder = tmp_path / "decisions"
    folder.mkdir()
    (folder / "a.yaml").write_text("- id: a1\n  title: First\n- id: a2\n  title: Second\n")
    env = {
        "CSTP_DATA_DIR": str(tmp_path / "data"),
        "CSTP_EMBEDDING_MODEL": "wordllama-l2-supercat-256",
        "CSTP_RATE_LIMIT_STORAGE": redis_uri,
        "CSTP_CHROMA_TIMEOUT_SECONDS": "0.5",
        "CSTP_INDEX_BATCH_SIZE": "1",
    }
    replica = WriterLocks.from_uri(redis_uri, "decisions", 30, 10)
    assert replica is not None
    with replica.hold_all(["a2"]):
        stopped = cstp("index", str(folder), env=env)
    assert stopped.returncode == EXIT_STORE, stopped.stderr
    assert "decision 'a2' stayed locked by another writer for 0.5 s" in stopped.stderr
    assert "lets go within 1.5 s" in stopped.stderr
    assert "1 new, 0 updated, 0 unchanged, 0 failed" in stopped.stderr
    assert "stopped after 1 of 2 records; run the same command again" in stopped.stderr
    again = cstp("index", str(folder), env=env)
    assert again.returncode == 0, again.stderr
    assert "1 new, 0 updated, 1 unchanged, 0 failed" in again.stderr
