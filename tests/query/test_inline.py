"""Cheap queries of a static embedder skip the worker pool; everything else still uses it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TypeVar

import pytest

from a2a.concurrency import Admission, Lane
from a2a.embeddings import Embedder, is_static
from a2a.errors import Saturated
from a2a.query.params import QueryDecisionsParams
from a2a.query.service import INLINE_BURST_SECONDS, InlinePolicy, QueryService
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore
from tests.conftest import SAMPLE, index_records

T = TypeVar("T")
QUERY = QueryDecisionsParams.model_validate({"query": "database migration", "limit": 3})


class Undeclared:
    """The same model without its `static` declaration: as a network model behaves."""

    def __init__(self, inner: Embedder) -> None:
        self._inner, self.name = inner, inner.name

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._inner.embed_query(text)


@pytest.fixture
def store(fast_store: ChromaDecisionStore) -> ChromaDecisionStore:
    return fast_store


@pytest.fixture
async def busy() -> AsyncIterator[Lane]:
    """A pool of one thread, busy, with no queue: any call that needs a worker is refused."""
    pool, release = Lane(1, Admission(queue=0, max_wait_seconds=0.1)), threading.Event()
    blocker = asyncio.create_task(pool.run(lambda: release.wait(10)))
    await asyncio.sleep(0.05)
    yield pool
    release.set()
    await blocker
    pool.close()


async def _ids(service: QueryService) -> list[str]:
    return [d.id for d in (await service.query_decisions(QUERY)).decisions]


def test_only_wordllama_declares_itself_static(fast: Embedder) -> None:
    assert is_static(fast) and not is_static(Undeclared(fast))


async def test_a_cheap_query_is_answered_while_every_worker_is_busy(
    store: ChromaDecisionStore, fast: Embedder, busy: Lane
) -> None:
    free = QueryService(AsyncStore(store, 10), fast, "a")
    want = await _ids(free)
    assert len(want) == 3
    inline = QueryService(AsyncStore(store, 10), fast, "a", index=free._live, workers=busy)
    assert await _ids(inline) == want
    model = QueryService(
        AsyncStore(store, 10), Undeclared(fast), "a", index=free._live, workers=busy
    )
    with pytest.raises(Saturated):
        await _ids(model)


async def test_a_broad_filter_or_an_index_being_written_goes_to_a_worker(
    store: ChromaDecisionStore, fast: Embedder, busy: Lane
) -> None:
    free = QueryService(AsyncStore(store, 10), fast, "a")
    await _ids(free)  # loads the index
    service = QueryService(AsyncStore(store, 10), fast, "a", index=free._live, workers=busy)
    # Every row passes: one row over the bound (wordllama's vectors have 256 dimensions).
    service.inline = InlinePolicy(work=(len(SAMPLE) - 1) * 256)
    with pytest.raises(Saturated):
        await _ids(service)
    service.inline = InlinePolicy()
    writing, done = threading.Event(), threading.Event()

    def writer() -> None:
        with free._live.index.lock.writing():
            writing.set()
            done.wait(10)

    thread = threading.Thread(target=writer)
    thread.start()
    writing.wait(10)
    try:
        with pytest.raises(Saturated):  # never waits for the writer on the event loop
            await _ids(service)
    finally:
        done.set()
        thread.join()
    assert len(await _ids(service)) == 3


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
async def test_a_keyword_or_hybrid_query_goes_to_a_worker_even_with_a_narrow_filter(
    store: ChromaDecisionStore, fast: Embedder, busy: Lane, mode: str
) -> None:
    """BM25 statistics are rebuilt over every row after each write, and a term's weights
    over all its postings: the cost follows the store's size, not the filter's (~10 ms of
    event loop at 300k rows after a write), so it never runs on the event loop."""
    free = QueryService(AsyncStore(store, 10), fast, "a")
    narrow = QueryDecisionsParams.model_validate(
        {"query": "database migration", "limit": 3, "retrievalMode": mode}
    )
    assert (await free.query_decisions(narrow)).decisions
    service = QueryService(AsyncStore(store, 10), fast, "a", index=free._live, workers=busy)
    with pytest.raises(Saturated):
        await service.query_decisions(narrow)
    semantic = {"query": "database migration", "limit": 3, "retrievalMode": "semantic"}
    params = QueryDecisionsParams.model_validate(semantic)
    assert len((await service.query_decisions(params)).decisions) == 3


class Counted(Lane):
    """A pool that counts the calls sent to its threads."""

    def __init__(self) -> None:
        super().__init__(2, Admission(queue=10, max_wait_seconds=5))
        self.calls = 0

    async def run(self, fn: Callable[[], T], *, deadline_seconds: float | None = None) -> T:
        self.calls += 1
        return await super().run(fn, deadline_seconds=deadline_seconds)


async def test_a_lone_caller_is_answered_inline_in_every_mode_once_bm25_statistics_exist(
    store: ChromaDecisionStore, fast: Embedder
) -> None:
    never_shuts = InlinePolicy(burst_seconds=3600.0)
    pool = Counted()
    service = QueryService(AsyncStore(store, 10), fast, "a", workers=pool, inline=never_shuts)
    reference = QueryService(
        AsyncStore(store, 10), fast, "a", index=service._live, inline=InlinePolicy.never()
    )

    async def sent(mode: str) -> int:
        """Calls this query sent to a worker; its answer equals the worker-only one."""
        params = QueryDecisionsParams.model_validate(
            {"query": "database migration", "limit": 3, "retrievalMode": mode}
        )
        before = pool.calls
        got = [d.model_dump() for d in (await service.query_decisions(params)).decisions]
        want = [d.model_dump() for d in (await reference.query_decisions(params)).decisions]
        assert got == want and len(got) >= 2
        return pool.calls - before

    assert await sent("semantic") == 0
    assert await sent("keyword") == 0  # the load computed the statistics (LiveIndex)
    assert await sent("hybrid") == 0
    changed = SAMPLE[0].model_copy(update={"title": "Database migration, blue-green, again"})
    index_records(store, fast, [changed])  # a write: new statistics to compute
    assert await sent("hybrid") == 1
    assert await sent("hybrid") == 0
    service.inline = InlinePolicy(burst_seconds=3600.0, idle_work=len(SAMPLE) * 256 - 1)
    assert await sent("semantic") == 1  # over the idle bound


async def test_a_busy_pool_sends_all_but_narrow_semantic_queries_to_a_worker(
    store: ChromaDecisionStore, fast: Embedder
) -> None:
    pool = Counted()
    service = QueryService(AsyncStore(store, 10), fast, "a", workers=pool)
    for mode in ("keyword", "keyword", "semantic"):  # statistics computed; all inline
        params = {"query": "database migration", "limit": 3, "retrievalMode": mode}
        await service.query_decisions(QueryDecisionsParams.model_validate(params))
    release = threading.Event()
    blocker = asyncio.create_task(pool.run(lambda: release.wait(10)))
    await asyncio.sleep(0.05)
    before = pool.calls
    try:
        for mode in ("keyword", "hybrid", "semantic"):
            params = {"query": "database migration", "limit": 3, "retrievalMode": mode}
            await service.query_decisions(QueryDecisionsParams.model_validate(params))
    finally:
        release.set()
        await blocker
    assert pool.calls - before == 2  # keyword and hybrid; semantic is within INLINE_WORK


async def test_after_an_answer_on_the_loop_the_idle_path_shuts_for_its_share(
    store: ChromaDecisionStore, fast: Embedder
) -> None:
    """Answers on the loop never make the pool busy: without a share, concurrent callers
    would all be answered there, one after another, and hold the loop."""
    pool = Counted()
    service = QueryService(AsyncStore(store, 10), fast, "a", workers=pool)

    async def sent(mode: str) -> int:
        before = pool.calls
        params = {"query": "database migration", "limit": 3, "retrievalMode": mode}
        await service.query_decisions(QueryDecisionsParams.model_validate(params))
        return pool.calls - before

    await sent("keyword")  # computes the BM25 statistics
    assert await sent("keyword") == 0
    service._inline_credit = 1e-9  # what is left after a burst of answers on the loop
    service.inline = InlinePolicy(share=1e-9)  # and ~no accrual since
    assert await sent("keyword") == 0  # credit was left: answered here, which spent it
    assert await sent("keyword") == 1
    assert await sent("hybrid") == 1
    assert await sent("semantic") == 0  # within INLINE_WORK, which holds always
    service.inline = InlinePolicy()
    await asyncio.sleep(0.05)  # 25 ms of credit accrues, capped at INLINE_BURST_SECONDS
    assert 0 < service._credit(time.perf_counter()) <= INLINE_BURST_SECONDS
    assert await sent("keyword") == 0


class Held(Undeclared):
    """A network-like model whose embed_query waits for `release` once `entered` is set."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.entered, self.release = threading.Event(), threading.Event()

    def embed_query(self, text: str) -> list[float]:
        self.entered.set()
        self.release.wait(10)
        return super().embed_query(text)


async def test_an_index_write_never_waits_for_a_query_being_embedded(
    store: ChromaDecisionStore, fast: Embedder
) -> None:
    """A network model takes ~5 ms a query (MiniLM): embedded under the index's read lock,
    every concurrent query would hold a writer back that long, and the readers queued
    behind the writer with it."""
    free = QueryService(AsyncStore(store, 10), fast, "a")
    want = await _ids(free)
    held = Held(fast)
    service = QueryService(AsyncStore(store, 10), held, "a", index=free._live)
    query = asyncio.create_task(_ids(service))
    try:
        assert await asyncio.to_thread(held.entered.wait, 10)
        wrote = threading.Event()

        def writer() -> None:
            with free._live.index.lock.writing():
                wrote.set()

        thread = threading.Thread(target=writer)
        thread.start()
        assert await asyncio.to_thread(wrote.wait, 5), "the writer waited for the model"
        await asyncio.to_thread(thread.join, 5)
    finally:
        held.release.set()
    assert await query == want
