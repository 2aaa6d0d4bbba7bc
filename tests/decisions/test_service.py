"""DecisionService on the real embedded Chroma: concurrent writers, reviews and re-indexing."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from a2a.app.decisions import decision_service
from a2a.concurrency import Admission, Lane
from a2a.decisions.params import (
    RecordDecisionParams,
    ReviewDecisionParams,
    UpdateDecisionParams,
)
from a2a.decisions.service import DecisionService
from a2a.decisions.table import StoreTable
from a2a.embeddings import Embedder
from a2a.errors import InvalidParams
from a2a.index.sync import LiveIndex
from a2a.records import DecisionRecord
from a2a.settings import Settings
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore
from tests.conftest import SAMPLE, index_records


@pytest.fixture
def service(store: ChromaDecisionStore, embedder: Embedder) -> DecisionService:
    async_store = AsyncStore(store, timeout_seconds=30)
    return DecisionService(
        async_store, embedder, StoreTable(async_store), run=async_store.workers.run
    )


def record_params(record_id: str, title: str) -> RecordDecisionParams:
    return RecordDecisionParams.model_validate({"decision": {"id": record_id, "title": title}})


def stored(store: ChromaDecisionStore, record_id: str) -> DecisionRecord:
    (row,) = store.get(ids=[record_id])
    return row.decision


@pytest.mark.parametrize("rounds", [20])
async def test_two_writers_of_one_id_store_one_record_and_one_created(
    service: DecisionService, store: ChromaDecisionStore, rounds: int
) -> None:
    for n in range(rounds):
        params = record_params(f"same-{n}", "Two writers, one decision")
        answers = await asyncio.gather(
            service.record_decision(params, "a"), service.record_decision(params, "b")
        )
        assert sorted(a.created for a in answers) == [False, True]
    assert store.count() == rounds


async def test_two_writers_of_one_id_with_other_content_get_one_record_and_one_error(
    service: DecisionService, store: ChromaDecisionStore
) -> None:
    first, second = record_params("race", "One"), record_params("race", "Two")
    answers = await asyncio.gather(
        service.record_decision(first, "a"),
        service.record_decision(second, "b"),
        return_exceptions=True,
    )
    errors = [a for a in answers if isinstance(a, InvalidParams)]
    assert len(errors) == 1 and [e.field for e in errors[0].errors] == ["decision.id"]
    assert store.count() == 1


async def test_a_review_of_a_file_record_survives_reindexing_the_unchanged_file(
    service: DecisionService, store: ChromaDecisionStore, embedder: Embedder
) -> None:
    index_records(store, embedder, SAMPLE)
    review = {"id": "d02", "outcome": "failure", "lessons": "Too many brokers."}
    await service.review_decision(ReviewDecisionParams.model_validate(review))
    summary = index_records(store, embedder, SAMPLE)
    assert (summary.unchanged, summary.updated) == (len(SAMPLE), 0)
    kept = stored(store, "d02")
    assert (kept.outcome, kept.status, kept.lessons) == ("failure", "reviewed", "Too many brokers.")
    assert kept.reviewed_at is not None and kept.source == "a.yaml"


async def test_a_changed_file_record_takes_new_content_and_keeps_its_review(
    service: DecisionService, store: ChromaDecisionStore, embedder: Embedder
) -> None:
    index_records(store, embedder, SAMPLE)
    await service.review_decision(
        ReviewDecisionParams.model_validate({"id": "d03", "outcome": "success"})
    )
    changed = [
        r.model_copy(update={"title": "Flags stay in Postgres"}) if r.id == "d03" else r
        for r in SAMPLE
    ]
    summary = index_records(store, embedder, changed)
    assert summary.updated == 1
    record = stored(store, "d03")
    assert (record.title, record.outcome, record.status) == (
        "Flags stay in Postgres",
        "success",
        "reviewed",
    )
    # The next run sees the file unchanged again.
    assert index_records(store, embedder, changed).unchanged == len(SAMPLE)


async def test_a_changed_file_record_keeps_its_history_and_its_links_both_ways(
    service: DecisionService, store: ChromaDecisionStore, embedder: Embedder
) -> None:
    """Reported: `cstp index` of an edited file dropped the links other decisions held to its
    record (supersededBy, relatedTo from them), its history, and its `superseded` status."""
    index_records(store, embedder, SAMPLE)
    later = {"id": "x1", "title": "Flags move to a service", "supersedes": ["d03"]}
    await service.record_decision(
        RecordDecisionParams.model_validate({"decision": {**later, "relatedTo": ["d02"]}}), "a"
    )
    superseded = stored(store, "d03")
    assert superseded.status == "superseded" and len(superseded.history) == 1
    edited = [
        r.model_copy(update={"title": f"{r.title} (edited)"}) if r.id in ("d02", "d03") else r
        for r in SAMPLE
    ]
    at = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    assert index_records(store, embedder, edited, at).updated == 2
    d02, d03 = stored(store, "d02"), stored(store, "d03")
    assert d03.title.endswith("(edited)") and d02.title.endswith("(edited)")
    assert (d03.superseded_by, d03.status, d03.history[:-1]) == (
        ["x1"],
        "superseded",
        superseded.history,
    )
    assert d03.history[-1].changes == {"title": (superseded.title, d03.title)}
    assert d02.related_from == ["x1"]
    x1 = stored(store, "x1")
    assert (x1.supersedes, x1.related_to) == (["d03"], ["d02"])
    assert index_records(store, embedder, edited).unchanged == len(SAMPLE)


async def test_an_update_that_an_edited_file_replaces_stays_in_the_history(
    service: DecisionService, store: ChromaDecisionStore, embedder: Embedder
) -> None:
    """Reported: `cstp index` of an edited file replaced the content an agent had updated,
    and nothing in the record's history said so."""
    index_records(store, embedder, SAMPLE)
    update = {"id": "d02", "changes": {"category": "platform"}, "reason": "Moved teams"}
    await service.update_decision(UpdateDecisionParams.model_validate(update), "ops")
    updated = stored(store, "d02")
    (d02,) = [r for r in SAMPLE if r.id == "d02"]
    edited = [
        r.model_copy(update={"title": "Kafka for events, three brokers"}) if r is d02 else r
        for r in SAMPLE
    ]
    at = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    assert index_records(store, embedder, edited, at).updated == 1
    record = stored(store, "d02")
    assert (record.title, record.category) == ("Kafka for events, three brokers", d02.category)
    assert record.history[:-1] == updated.history
    entry = record.history[-1]
    assert (entry.at, entry.by, entry.reason) == (at, None, "re-indexed from its file a.yaml")
    assert entry.changes == {
        "title": (d02.title, "Kafka for events, three brokers"),
        "category": ("platform", d02.category),
    }
    # An unchanged file adds nothing; a file edited back to what is stored adds nothing.
    assert index_records(store, embedder, edited).unchanged == len(SAMPLE)
    assert stored(store, "d02").history == record.history


async def test_a_file_never_replaces_a_decision_recorded_over_the_protocol(
    service: DecisionService, store: ChromaDecisionStore, embedder: Embedder
) -> None:
    """Reported: a file record with the id of an agent's decision replaced it (its agent and
    confidence lost), and `--prune` then deleted it with the file."""
    spoken = {"id": "px", "title": "Agents choose Redis", "confidence": 0.9}
    await service.record_decision(RecordDecisionParams.model_validate({"decision": spoken}), "a")
    clash = DecisionRecord(id="px", title="Ops choose Memcached", source="ops.yaml")
    summary = index_records(store, embedder, [*SAMPLE, clash])
    assert (summary.new, summary.unchanged, summary.exit_code) == (len(SAMPLE), 0, 1)
    assert [str(f) for f in summary.failures] == [
        "ops.yaml: id 'px' names a decision 'a' recorded over the protocol; "
        "not replaced (give this record another id)"
    ]
    kept = stored(store, "px")
    assert (kept.title, kept.recorded_by, kept.confidence, kept.source) == (
        "Agents choose Redis",
        "a",
        0.9,
        None,
    )


class Crowded(ChromaDecisionStore):
    """Once each write is stored, another call takes the pool's only thread first, and
    holds it for HOLD_SECONDS: longer than the pool lets a call wait for a thread."""

    HOLD_SECONDS = 0.4
    loop: asyncio.AbstractEventLoop
    pool: Lane

    def upsert(self, *args: Any, **kwargs: Any) -> Any:
        stored = super().upsert(*args, **kwargs)
        asyncio.run_coroutine_threadsafe(self._hold(), self.loop)
        deadline = time.monotonic() + 5
        while self.pool.waiting < 1 and time.monotonic() < deadline:
            time.sleep(0.001)  # returns once the other call waits for this thread
        return stored

    async def _hold(self) -> None:
        await self.pool.run(lambda: time.sleep(self.HOLD_SECONDS))


@pytest.mark.parametrize("indexed", [False, True], ids=["no-index", "search-index"])
async def test_a_stored_write_is_answered_even_when_the_pool_is_saturated_after_it(
    tmp_path: Path, embedder: Embedder, settings: Settings, indexed: bool
) -> None:
    """Reported by the break-it pass: a write Chroma had stored was answered -32005 (retry)
    when its read-back or its index update found the pool full; a retry of a decision sent
    without an id then stored it again, under a new id. The read-back and the index update
    now wait for a thread; work before the write is still refused (-32005)."""
    store = Crowded(
        data_dir=tmp_path / "chroma", collection="crowded", embedding_model=embedder.name
    )
    pool = Lane(1, Admission(queue=1, max_wait_seconds=0.05))
    store.loop, store.pool = asyncio.get_running_loop(), pool
    async_store = AsyncStore(store, timeout_seconds=30, workers=pool)
    live = LiveIndex(store) if indexed else None
    if live is not None:
        await live.current()
    service = decision_service(settings, async_store, embedder, index=live)
    try:
        sent = RecordDecisionParams.model_validate({"decision": {"title": "Crowded write"}})
        answer = await service.record_decision(sent, "a")
        assert answer.created and [r.id for r in store.get()] == [answer.id]
        review = ReviewDecisionParams.model_validate({"id": answer.id, "outcome": "success"})
        assert (await service.review_decision(review)).outcome == "success"
        assert stored(store, answer.id).outcome == "success"
        if live is not None:
            row = live.index.row_of(answer.id)
            assert row is not None and live.index.summaries([row])[0].outcome == "success"
    finally:
        await asyncio.sleep(Crowded.HOLD_SECONDS)  # the last holder
        pool.close()
        store.close()
