"""The model in a child process (a2a.embeddings.child): same vectors, same stop and error
semantics as the model in this process."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from a2a.embeddings import load_embedder
from a2a.embeddings.child import ModelProcess
from a2a.errors import EmbeddingModelError
from a2a.ingest.indexer import Indexer, IndexSummary
from a2a.ingest.stopping import StopRequest
from a2a.records import DecisionRecord
from a2a.store.chroma import ChromaDecisionStore

FAST = "wordllama-l2-supercat-256"
BATCH = 4


def records(n: int) -> list[DecisionRecord]:
    return [
        DecisionRecord(id=f"r{i:04d}", title=f"Decision number {i} on queues") for i in range(n)
    ]


@pytest.fixture
def fast_store(tmp_path: Path) -> ChromaDecisionStore:
    return ChromaDecisionStore(data_dir=tmp_path, collection="child", embedding_model=FAST)


def test_the_child_gives_the_vectors_the_model_gives_here() -> None:
    texts = ["Use Postgres for the ledger", "Queue writes through Kafka"]
    with ModelProcess(FAST) as model:
        vectors = model.embed(texts)
    here = np.asarray(load_embedder(FAST).embed_documents(texts), dtype=np.float32)
    assert vectors.dtype == np.float32 and vectors.shape == (2, 256)
    np.testing.assert_allclose(vectors, here, atol=1e-6)


def test_a_run_with_the_model_in_a_child_stores_every_record_and_skips_unchanged_ones(
    fast_store: ChromaDecisionStore,
) -> None:
    embedder = load_embedder(FAST)
    indexer = Indexer(fast_store, embedder, BATCH, model_process_min=0)
    first, again = IndexSummary(), IndexSummary()
    indexer.write(records(10), first)
    indexer.write(records(10), again)
    assert (first.new, again.unchanged, again.new, fast_store.count()) == (10, 10, 0, 10)
    (page,) = fast_store.pages(ids=["r0003"], embeddings=True)
    assert page.embeddings is not None
    here = embedder.embed_documents([records(10)[3].embedding_text()])
    np.testing.assert_allclose(page.embeddings[0], here[0], atol=1e-6)


def test_a_stop_stores_what_the_child_has_embedded_and_ends_the_run(
    fast_store: ChromaDecisionStore,
) -> None:
    stop, summary = StopRequest(), IndexSummary()

    def progress(n: int) -> None:
        stop.signal = signal.SIGTERM  # as the handler does when SIGTERM arrives mid-batch

    indexer = Indexer(fast_store, load_embedder(FAST), BATCH, model_process_min=0)
    indexer.write(records(3 * BATCH), summary, progress, stop=stop.is_set)
    assert summary.interrupted
    assert summary.new == fast_store.count()
    # The first batch, and the second when the child had embedded it by the time the first
    # was written (it embeds the next batch meanwhile); the third is never read.
    assert summary.new in (BATCH, 2 * BATCH)


def test_a_model_that_cannot_load_in_the_child_raises_its_error_here() -> None:
    with ModelProcess("no-such-model") as model, pytest.raises(EmbeddingModelError):
        model.embed(["text"])


_ORPHAN_PARENT = """
import sys
import time

from a2a.embeddings.child import ModelProcess

if __name__ == "__main__":
    model = ModelProcess(sys.argv[1])
    model.embed(["load the model"])
    print(*model._pool._processes, flush=True)
    time.sleep(600)
"""


def test_the_child_ends_when_its_parent_is_killed_outright(tmp_path: Path) -> None:
    """kill -9 of `cstp index` leaves no model process behind (it ignores SIGTERM, so
    nothing but the parent's death would ever end it)."""
    script = tmp_path / "parent.py"
    script.write_text(_ORPHAN_PARENT)
    parent = subprocess.Popen(
        [sys.executable, str(script), FAST], stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        (child,) = (int(pid) for pid in parent.stdout.readline().split())
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 15
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = _alive(child)
    if alive:
        os.kill(child, signal.SIGKILL)
    assert not alive


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A child of this process's own test run would be a zombie; this one is not ours.
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_child_killed_mid_run_is_an_embedding_model_error() -> None:
    """`cstp index` reports it as the model being unusable (exit 3), not a traceback."""
    with ModelProcess(FAST) as model:
        model.embed(["load the model"])
        (child,) = model._pool._processes
        os.kill(child, signal.SIGKILL)
        with pytest.raises(EmbeddingModelError):
            model.embed(["after the kill"])


#: Kills the child once it blocks writing to a pipe (its vectors to us), or gives up.
_KILL_WHEN_SENDING = """
for _ in $(seq 3000); do
  if grep -q pipe_write /proc/$1/wchan 2>/dev/null; then kill -9 $1; exit 0; fi
  sleep 0.01
done
exit 1
"""


def test_a_child_killed_while_sending_its_vectors_is_an_embedding_model_error() -> None:
    """As the OOM killer may do: the child dies half-way through sending a batch's
    vectors (megabytes; it blocks on the pipe while Chroma's write holds our GIL). The
    run must end with the model's error (exit 3), not wait for the rest for ever."""
    with ModelProcess(FAST) as model:
        model.embed(["load the model"])
        (child,) = model._pool._processes
        killer = subprocess.Popen(["sh", "-c", _KILL_WHEN_SENDING, "sh", str(child)])
        busy = _cpu_ticks(child)
        # One text, many times: a call of a few kB (pickled once) that fits in the pipe,
        # and 20 MB of vectors back, far more than the pipe holds.
        vectors = model.submit(["a text to embed"] * 20_000)
        if not _embedding(child, busy):
            killer.kill()
            pytest.skip("the child was never seen embedding (/proc/<pid>/stat)")
        # From here our GIL is held until the killer exits (libc's waitpid through PyDLL
        # does not release it): the pool reads nothing meanwhile, so the child, once done
        # embedding, blocks half-way through sending the vectors, and is killed there.
        status = ctypes.c_int()
        ctypes.PyDLL(None).waitpid(killer.pid, ctypes.byref(status), 0)
        killer.returncode = os.waitstatus_to_exitcode(status.value)
        if killer.returncode != 0:
            os.kill(child, signal.SIGKILL)
            pytest.skip("/proc/<pid>/wchan does not show a wait on a pipe here")
        with pytest.raises(EmbeddingModelError):
            vectors.result(timeout=60)  # without the fix: TimeoutError (it never ends)


def _cpu_ticks(pid: int) -> int:
    """CPU time used by `pid` (user + system), in clock ticks."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def _embedding(pid: int, before: int) -> bool:
    """Whether `pid` used 0.1 s of CPU (at 100 ticks a second) since `before`, within
    60 seconds: it has our whole call and embeds it."""
    for _ in range(60_000):
        if _cpu_ticks(pid) - before >= 10:
            return True
        time.sleep(0.001)
    return False
