"""DecisionService on the real embedded Chroma: concurrent writers, reviews and re-indexing."""

from __future__ import annotations

import asyncio

import pytest

from a2a.decisions.params import RecordDecisionParams, ReviewDecisionParams
from a2a.decisions.service import DecisionService
from a2a.decisions.table import StoreTable
from a2a.embeddings import Embedder
from a2a.errors import InvalidParams
from a2a.records import DecisionRecord
from a2a.store import AsyncStore, ChromaDecisionStore
from a2a.store.metadata import record_of
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
    return record_of(row.decision)


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
