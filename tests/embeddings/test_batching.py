"""Dynamic batching of query embeddings (a2a.embeddings.batching) and MiniLM's batched
queries, which must be bit for bit the vectors of lone ones."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt
import pytest

from a2a.embeddings import is_batchable, load_embedder
from a2a.embeddings.batching import DynamicBatcher, query_batcher
from a2a.embeddings.minilm_onnx import CALL_PIECES, MAX_TOKENS, MiniLMOnnxEmbedder
from a2a.errors import Saturated

Group = tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]


def vector_of(text: str) -> npt.NDArray[np.float32]:
    """A vector that names its text: its length and its first character's code."""
    return np.array([len(text), ord(text[0]) if text else 0], dtype=np.float32)


class Model:
    """A batchable fake: records each call's texts; the first `held` calls wait for `go`."""

    def __init__(self, held: int = 0) -> None:
        self.calls: list[list[str]] = []
        self.held, self.go, self.entered = held, threading.Event(), threading.Semaphore(0)
        self.fail: BaseException | None = None
        self._lock = threading.Lock()

    def __call__(self, texts: Sequence[str]) -> Iterator[Group]:
        with self._lock:
            self.calls.append(list(texts))
            hold = len(self.calls) <= self.held
        self.entered.release()
        if hold:
            assert self.go.wait(10)
        if self.fail is not None:
            raise self.fail
        yield np.arange(len(texts)), np.stack([vector_of(t) for t in texts])


async def entered(model: Model, calls: int = 1) -> None:
    for _ in range(calls):
        assert await asyncio.to_thread(model.entered.acquire, True, 10)


async def queued(batcher: DynamicBatcher, count: int) -> None:
    for _ in range(1000):
        if batcher.waiting == count:
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"{batcher.waiting} queries wait, not {count}")


async def test_queries_that_wait_for_the_model_share_its_next_call() -> None:
    model, sizes = Model(held=1), []
    batcher = DynamicBatcher(model, threads=1, queue=10, max_wait_seconds=5, on_batch=sizes.append)
    try:
        first = asyncio.create_task(batcher.embed("lone"))
        await entered(model)
        texts = ["alpha", "be", "gamma ray", "d"]
        rest = [asyncio.create_task(batcher.embed(t)) for t in texts]
        await queued(batcher, 4)
        model.go.set()
        got = await asyncio.gather(first, *rest)
    finally:
        batcher.close()
    assert model.calls == [["lone"], texts]
    assert sizes == [1, 4]
    for text, vector in zip(["lone", *texts], got, strict=True):
        np.testing.assert_array_equal(vector, vector_of(text))


async def test_two_threads_split_a_backlog_and_never_pair_two_lone_queries() -> None:
    model = Model(held=2)
    batcher = DynamicBatcher(model, threads=2, queue=20, max_wait_seconds=5)
    try:
        busy = [asyncio.create_task(batcher.embed(t)) for t in ("x1", "x2")]
        await entered(model, 2)  # two waiting queries, two threads: one each
        texts = [f"q{n}" for n in range(6)]
        rest = [asyncio.create_task(batcher.embed(t)) for t in texts]
        await queued(batcher, 6)
        model.go.set()
        got = await asyncio.gather(*busy, *rest)
    finally:
        batcher.close()
    assert sorted(model.calls[:2]) == [["x1"], ["x2"]]
    # 6 waiting, 2 threads: the first free one takes 3, the next ceil(3/2) = 2, then 1.
    assert sorted(len(call) for call in model.calls[2:]) == [1, 2, 3]
    assert sorted(t for call in model.calls[2:] for t in call) == texts
    for text, vector in zip(["x1", "x2", *texts], got, strict=True):
        np.testing.assert_array_equal(vector, vector_of(text))


async def test_a_call_takes_at_most_max_batch_queries() -> None:
    model = Model(held=1)
    batcher = DynamicBatcher(model, threads=1, queue=20, max_wait_seconds=5, max_batch=2)
    try:
        first = asyncio.create_task(batcher.embed("0"))
        await entered(model)
        rest = [asyncio.create_task(batcher.embed(str(n))) for n in range(1, 6)]
        await queued(batcher, 5)
        model.go.set()
        await asyncio.gather(first, *rest)
    finally:
        batcher.close()
    assert model.calls == [["0"], ["1", "2"], ["3", "4"], ["5"]]


async def test_a_full_queue_is_refused_at_once_and_nothing_refused_is_embedded() -> None:
    model = Model(held=1)
    batcher = DynamicBatcher(model, threads=1, queue=2, max_wait_seconds=3.5)
    try:
        first = asyncio.create_task(batcher.embed("running"))
        await entered(model)
        waiting = [asyncio.create_task(batcher.embed(t)) for t in ("w1", "w2")]
        await queued(batcher, 2)
        with pytest.raises(Saturated) as refused:
            await batcher.embed("refused")
        assert refused.value.retry_after == 4  # the wait bound, rounded up
        model.go.set()
        await asyncio.gather(first, *waiting)
    finally:
        batcher.close()
    assert model.calls == [["running"], ["w1", "w2"]]


async def idle(batcher: DynamicBatcher, threads: int) -> None:
    for _ in range(1000):
        if batcher._idle == threads:
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the model threads never went idle")


async def test_with_no_queue_a_free_thread_still_takes_a_query() -> None:
    """CSTP_WORKER_QUEUE=0: no query may wait, but one a free thread takes is not waiting."""
    model = Model(held=1)
    batcher = DynamicBatcher(model, threads=1, queue=0, max_wait_seconds=5)
    try:
        await idle(batcher, 1)
        first = asyncio.create_task(batcher.embed("taken"))
        await entered(model)
        with pytest.raises(Saturated):
            await batcher.embed("no thread free")
        model.go.set()
        np.testing.assert_array_equal(await first, vector_of("taken"))
    finally:
        batcher.close()


async def test_a_query_a_free_thread_takes_is_never_timed_out_however_short_the_bound() -> None:
    """The bound is on waiting for a thread: a free thread's wake-up is not waiting
    (a break-it pass saw 85 of 300 lone queries refused with a 0.1 ms bound)."""
    model = Model()
    batcher = DynamicBatcher(model, threads=1, queue=10, max_wait_seconds=1e-6)
    try:
        for n in range(50):
            await idle(batcher, 1)
            np.testing.assert_array_equal(await batcher.embed(f"q{n}"), vector_of(f"q{n}"))
    finally:
        batcher.close()


async def test_a_query_still_waiting_at_the_bound_is_refused_then_not_embedded() -> None:
    """Refused when the bound passes, not when a thread comes back to it (the break-it pass
    saw -32005 up to 750 ms after a 50 ms bound)."""
    model = Model(held=1)
    batcher = DynamicBatcher(model, threads=1, queue=10, max_wait_seconds=0.2)
    try:
        first = asyncio.create_task(batcher.embed("first"))
        await entered(model)
        started = asyncio.get_running_loop().time()
        with pytest.raises(Saturated) as refused:
            await batcher.embed("late")
        waited = asyncio.get_running_loop().time() - started
        assert 0.2 <= waited < 2 and refused.value.retry_after == 1
        assert batcher.waiting == 0 and not first.done()  # the model is still held
        model.go.set()
        np.testing.assert_array_equal(await first, vector_of("first"))
        np.testing.assert_array_equal(await batcher.embed("next"), vector_of("next"))
    finally:
        batcher.close()
    assert model.calls == [["first"], ["next"]]


async def test_each_group_is_answered_as_soon_as_it_is_computed() -> None:
    """A short query sharing a call with a long one does not wait for the long one's group."""
    short_answered = threading.Event()

    def groups(texts: Sequence[str]) -> Iterator[Group]:
        yield np.array([1]), np.stack([vector_of(texts[1])])
        assert short_answered.wait(10), "the short query was not answered before the long"
        yield np.array([0]), np.stack([vector_of(texts[0])])

    gate = Model(held=1)
    models = iter([gate, groups])
    batcher = DynamicBatcher(
        lambda texts: next(models)(texts), threads=1, queue=10, max_wait_seconds=5
    )
    try:
        first = asyncio.create_task(batcher.embed("first"))
        await entered(gate)
        long = asyncio.create_task(batcher.embed("long " * 50))
        short = asyncio.create_task(batcher.embed("short"))
        await queued(batcher, 2)
        gate.go.set()
        np.testing.assert_array_equal(await short, vector_of("short"))
        assert not long.done()
        short_answered.set()
        np.testing.assert_array_equal(await long, vector_of("long " * 50))
        await first
    finally:
        short_answered.set()
        batcher.close()


async def test_a_model_error_reaches_every_query_of_its_call_and_the_next_call_works() -> None:
    model = Model(held=1)
    model.fail = ValueError("model broke")
    batcher = DynamicBatcher(model, threads=1, queue=10, max_wait_seconds=5)
    try:
        first = asyncio.create_task(batcher.embed("a"))
        await entered(model)
        second = asyncio.create_task(batcher.embed("b"))
        await queued(batcher, 1)
        model.go.set()
        for task in (first, second):
            with pytest.raises(ValueError, match="model broke"):
                await task
        model.fail = None
        np.testing.assert_array_equal(await batcher.embed("c"), vector_of("c"))
    finally:
        batcher.close()


async def test_a_cancelled_query_is_not_embedded_and_the_others_are_answered() -> None:
    model = Model(held=1)
    batcher = DynamicBatcher(model, threads=1, queue=10, max_wait_seconds=5)
    try:
        first = asyncio.create_task(batcher.embed("a"))
        await entered(model)
        gone, kept = (asyncio.create_task(batcher.embed(t)) for t in ("gone", "kept"))
        await queued(batcher, 2)
        gone.cancel()
        await asyncio.sleep(0)
        assert batcher.waiting == 1  # taken out of the queue at once
        model.go.set()
        np.testing.assert_array_equal(await first, vector_of("a"))
        np.testing.assert_array_equal(await kept, vector_of("kept"))
        assert gone.cancelled()
    finally:
        batcher.close()
    assert model.calls == [["a"], ["kept"]]


async def test_close_fails_what_waits_refuses_what_comes_and_ends_the_threads() -> None:
    model = Model(held=2)
    batcher = DynamicBatcher(model, threads=2, queue=10, max_wait_seconds=5)
    first = asyncio.create_task(batcher.embed("a"))
    await entered(model)
    second = asyncio.create_task(batcher.embed("b"))
    await entered(model)  # the second thread is held too
    waiting = asyncio.create_task(batcher.embed("c"))
    await queued(batcher, 1)
    batcher.close()
    with pytest.raises(RuntimeError, match="closed"):
        await waiting
    with pytest.raises(RuntimeError, match="closed"):
        await batcher.embed("d")
    model.go.set()
    np.testing.assert_array_equal(await first, vector_of("a"))  # calls in flight finish
    np.testing.assert_array_equal(await second, vector_of("b"))
    for thread in batcher._threads:
        thread.join(5)
        assert not thread.is_alive()


def test_only_minilm_is_batched() -> None:
    minilm = MiniLMOnnxEmbedder()
    assert is_batchable(minilm)
    batcher = query_batcher(minilm, queue=1, max_wait_seconds=1)
    assert batcher is not None
    batcher.close()
    fast = load_embedder("wordllama-l2-supercat-256")
    assert not is_batchable(fast) and query_batcher(fast, queue=1, max_wait_seconds=1) is None


def gathered(minilm: MiniLMOnnxEmbedder, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """Every text's vector from `query_groups`, in the texts' order."""
    vectors = np.full((len(texts), minilm.dimension), np.nan, dtype=np.float32)
    for rows, group in minilm.query_groups(texts):
        vectors[rows] = group
    return vectors


@pytest.fixture(scope="module")
def minilm() -> MiniLMOnnxEmbedder:
    return MiniLMOnnxEmbedder()


TEXTS = [
    "",
    "A",
    "database migration",
    "Use PostgreSQL for the ledger: JSONB, strong consistency and point-in-time recovery",
    "ünïcödé категория 决策 🚀",
    "rate limiting per agent " * 12,
    "x " * (2 * MAX_TOKENS),  # truncated at MAX_TOKENS word pieces
    "Why Redis for the token bucket?",
]


def test_minilm_batched_queries_are_bit_for_bit_their_lone_vectors(
    minilm: MiniLMOnnxEmbedder,
) -> None:
    alone = np.array([minilm.embed_query(t) for t in TEXTS], dtype=np.float32)
    rng = np.random.default_rng(5)
    for _ in range(12):
        picked = rng.choice(len(TEXTS), size=int(rng.integers(2, 9)), replace=True)
        batched = gathered(minilm, [TEXTS[i] for i in picked])
        assert batched.dtype == np.float32 and batched.shape == (len(picked), 384)
        np.testing.assert_array_equal(batched, alone[picked])


def test_minilm_pads_a_group_only_to_twice_its_shortest_plus_the_slack(
    minilm: MiniLMOnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long query never makes short ones pay for its length: 4, 5 and 7 word pieces
    ([CLS] and [SEP] included) share a call padded to 7; 256 gets a call of its own; long
    texts go CALL_PIECES at a time."""
    widths: list[tuple[int, int]] = []
    pooled = minilm._pooled

    def spy(ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        widths.append(ids.shape)
        return pooled(ids, mask)

    monkeypatch.setattr(minilm, "_pooled", spy)
    texts = ["x " * 300, "a b", "a b c", "a b c d e"]
    groups = [rows.tolist() for rows, _ in minilm.query_groups(texts)]
    assert groups == [[1, 2, 3], [0]]  # shortest group first
    assert widths == [(3, 7), (1, MAX_TOKENS)]
    widths.clear()
    long = ["y " * 300, "z " * 280, "w " * 400, "v " * 256]
    gathered(minilm, long)
    assert widths == [(CALL_PIECES // MAX_TOKENS, MAX_TOKENS)] * 2  # never 4 long ones at once
    monkeypatch.undo()
    for batch in (texts, long):
        np.testing.assert_array_equal(
            gathered(minilm, batch), np.array([minilm.embed_query(t) for t in batch])
        )
