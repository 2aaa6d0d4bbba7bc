"""Embedded Chroma's own threads on one CPU core (a2a.store.affinity)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from a2a.settings import load_settings
from a2a.store.affinity import CHROMA_THREADS, pin_chroma_threads
from a2a.store.chroma import ChromaDecisionStore

TASKS = Path("/proc/self/task")
pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="pinning needs Linux thread affinity and at least 2 CPU cores to choose from",
)


def chroma_threads() -> dict[int, set[int]]:
    """Each Chroma thread of this process: its CPU cores."""
    found = {}
    for task in TASKS.iterdir():
        try:
            if (task / "comm").read_text().strip().startswith(CHROMA_THREADS):
                found[int(task.name)] = os.sched_getaffinity(int(task.name))
        except OSError:
            continue
    return found


def opened(tmp_path: Path, single_core: bool) -> dict[int, set[int]]:
    """The Chroma threads that opening a new embedded store started, with their cores."""
    before = set(chroma_threads())
    store = ChromaDecisionStore(
        data_dir=tmp_path, collection="pins", embedding_model="m", single_core=single_core
    )
    assert store.count() == 0  # opens the client
    return {tid: cores for tid, cores in chroma_threads().items() if tid not in before}


def test_an_embedded_store_puts_chromas_threads_on_the_highest_core(tmp_path: Path) -> None:
    allowed = os.sched_getaffinity(0)
    started = opened(tmp_path, single_core=True)
    assert started, "opening an embedded store started no Chroma thread"
    assert set(map(frozenset, started.values())) == {frozenset({max(allowed)})}
    # Only Chroma's: this thread (and so the worker pool, the event loop) stays free.
    assert os.sched_getaffinity(threading.get_native_id()) == allowed


def test_pinning_is_off_unless_asked_for() -> None:
    assert load_settings().chroma_single_core is False
    store = ChromaDecisionStore(data_dir=Path("unused"), collection="pins", embedding_model="m")
    assert store._single_core is False


def test_single_core_off_leaves_chromas_threads_free(tmp_path: Path) -> None:
    allowed = os.sched_getaffinity(0)
    started = opened(tmp_path, single_core=False)
    assert started and all(cores == allowed for cores in started.values())


def test_pinning_again_keeps_every_chroma_thread_on_the_same_core(tmp_path: Path) -> None:
    opened(tmp_path, single_core=False)
    core = max(os.sched_getaffinity(0))
    assert pin_chroma_threads() == core
    assert pin_chroma_threads() == core
    assert set(map(frozenset, chroma_threads().values())) == {frozenset({core})}


def test_threads_chroma_starts_for_concurrent_reads_are_pinned_by_the_next_write(
    tmp_path: Path,
) -> None:
    """Reported: reads from several threads at once made Chroma open SQLite connections
    whose threads, started from ours, were on every core."""
    from a2a.records import DecisionRecord

    store = ChromaDecisionStore(
        data_dir=tmp_path, collection="pins", embedding_model="m", single_core=True
    )
    store.upsert([DecisionRecord(id=f"r{i}", title=f"t{i}") for i in range(50)], [[1.0, 0.0]] * 50)
    before = set(chroma_threads())
    list(store.pages(readers=4, page_size=5))
    list(store.pages(readers=4, page_size=5))
    store.upsert([DecisionRecord(id="late", title="late")], [[0.0, 1.0]])
    core = max(os.sched_getaffinity(0))
    threads = chroma_threads()
    assert set(map(frozenset, threads.values())) == {frozenset({core})}
    assert len(threads) >= len(before)
