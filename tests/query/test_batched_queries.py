"""Queries of a batchable model are embedded by the dynamic batcher (a2a.embeddings.batching):
concurrent ones share model calls, the answers are those of the unbatched service, the
search follows the same inline-or-worker rule, and an index write never waits for them."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt
import pytest

from a2a.embeddings import Embedder
from a2a.embeddings.batching import DynamicBatcher
from a2a.query.params import QueryDecisionsParams
from a2a.query.service import InlinePolicy, QueryService
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore
from tests.query.test_inline import Counted, Undeclared


@pytest.fixture
def store(fast_store: ChromaDecisionStore) -> ChromaDecisionStore:
    return fast_store


TEXTS = ["database migration", "rate limits", "caching layer", "auth tokens", "queue", "search"]


class Batchable(Undeclared):
    """A network-like model whose batched vectors equal its lone ones (it makes them one by
    one); counts lone calls, and holds its first batched call until `go`."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.lone = 0
        self.entered, self.go = threading.Event(), threading.Event()

    def embed_query(self, text: str) -> list[float]:
        self.lone += 1
        return super().embed_query(text)

    def query_groups(
        self, texts: Sequence[str]
    ) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]:
        if not self.entered.is_set():
            self.entered.set()
            assert self.go.wait(10)
        vectors = np.array([self._inner.embed_query(t) for t in texts], dtype=np.float32)
        yield np.arange(len(texts)), vectors


def params(text: str, mode: str = "semantic") -> QueryDecisionsParams:
    return QueryDecisionsParams.model_validate({"query": text, "limit": 3, "retrievalMode": mode})


async def test_concurrent_queries_share_model_calls_and_get_the_unbatched_answers(
    store: ChromaDecisionStore, fast: Embedder
) -> None:
    reference = QueryService(AsyncStore(store, 10), fast, "a")
    want = {t: (await reference.query_decisions(params(t))).model_dump() for t in TEXTS}
    model, sizes, pool = Batchable(fast), [], Counted()
    batcher = DynamicBatcher(model.query_groups, 1, 10, 5, on_batch=sizes.append)
    service = QueryService(
        AsyncStore(store, 10), model, "a", index=reference._live, workers=pool, batcher=batcher
    )
    try:
        first = asyncio.create_task(service.query_decisions(params(TEXTS[0])))
        assert await asyncio.to_thread(model.entered.wait, 10)
        rest = [asyncio.create_task(service.query_decisions(params(t))) for t in TEXTS[1:]]
        while batcher.waiting < len(rest):
            await asyncio.sleep(0.005)
        model.go.set()
        got = await asyncio.gather(first, *rest)
    finally:
        batcher.close()
    assert sizes == [1, len(TEXTS) - 1]
    for text, result in zip(TEXTS, got, strict=True):
        answer = result.model_dump()
        answer["query_time_ms"] = want[text]["query_time_ms"] = 0
        assert answer == want[text]
        assert len(answer["decisions"]) == 3
    # Narrow enough to answer on the loop; nothing embedded twice or one by one.
    assert pool.calls == 0 and model.lone == 0


@pytest.mark.parametrize("mode", ["semantic", "keyword", "hybrid"])
async def test_a_query_too_big_for_the_loop_goes_to_a_worker_with_the_batched_vector(
    store: ChromaDecisionStore, fast: Embedder, mode: str
) -> None:
    reference = QueryService(AsyncStore(store, 10), fast, "a")
    want = [d.id for d in (await reference.query_decisions(params(TEXTS[0], mode))).decisions]
    model, pool = Batchable(fast), Counted()
    model.go.set()
    batcher = DynamicBatcher(model.query_groups, 1, 10, 5)
    service = QueryService(
        AsyncStore(store, 10),
        model,
        "a",
        index=reference._live,
        workers=pool,
        batcher=batcher,
        inline=InlinePolicy.never(),
    )
    try:
        got = [d.id for d in (await service.query_decisions(params(TEXTS[0], mode))).decisions]
    finally:
        batcher.close()
    assert got == want and len(got) >= 2
    assert pool.calls == 1 and model.lone == 0


async def test_an_index_write_never_waits_for_a_query_in_the_batcher(
    store: ChromaDecisionStore, fast: Embedder
) -> None:
    reference = QueryService(AsyncStore(store, 10), fast, "a")
    want = [d.id for d in (await reference.query_decisions(params(TEXTS[0]))).decisions]
    model = Batchable(fast)
    batcher = DynamicBatcher(model.query_groups, 1, 10, 5)
    service = QueryService(
        AsyncStore(store, 10), model, "a", index=reference._live, batcher=batcher
    )
    query = asyncio.create_task(service.query_decisions(params(TEXTS[0])))
    try:
        assert await asyncio.to_thread(model.entered.wait, 10)

        def write() -> None:
            with reference._live.index.lock.writing():
                pass

        await asyncio.wait_for(asyncio.to_thread(write), 5)
    finally:
        model.go.set()
    try:
        assert [d.id for d in (await query).decisions] == want
    finally:
        batcher.close()
