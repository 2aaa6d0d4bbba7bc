"""Embedded Chroma's own threads on one CPU core, where its writes cost half as much.

Embedded Chroma (chromadb 1.x) runs a Rust tokio runtime and sqlx SQLite worker threads
inside this process, and a write hands its work between them many times. Under `perf`, a
third of a write's CPU was the kernel waking those threads on other cores (futex wake-ups,
task switches); on one core the hand-offs are cheap. Measured on the 2-core virtual
machine of docs/scaling.md (`python bench/chroma_affinity.py`: 20,000 decision records
through `ChromaDecisionStore.upsert` in upserts of 5,000, three rounds): 1,254-1,273
records/s with the threads free, 1,944-2,154 on one core; kernel CPU fell from 4.9-5.3 s
to 1.8-2.0 s. `cstp index` of 100k records went from 762 to 1,183 records/s. Loading 100k
records into the search index, and single-record reads, took the same time either way.
The process's own threads (the event loop, the worker pool, a model) are left free.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

log = logging.getLogger(__name__)

#: Names (Linux `comm`, cut at 15 bytes) of the threads embedded Chroma starts: its tokio
#: runtime's workers and its sqlx SQLite connections' workers.
CHROMA_THREADS = ("tokio-rt-worker", "sqlx-sqlite-wor")
_TASKS = Path("/proc/self/task")
#: Threads (ids) an earlier call looked at; ids of ended threads are dropped.
_SEEN: set[int] = set()
_LOCK = threading.Lock()


def pin_chroma_threads() -> int | None:
    """Restrict each thread of this process named in CHROMA_THREADS to one CPU core.

    The core is the highest one the calling thread may run on. Threads Chroma starts from
    a pinned thread inherit its core; those it starts from one of our threads (a new
    SQLite connection for a concurrent call, a new client's runtime) are pinned by the
    next call. Only threads not seen by an earlier call are looked at, so a call costs
    one listing of /proc/self/task when nothing is new. Returns the core, or None when
    pinning does not apply (not Linux, fewer than 2 cores allowed). Never raises: a
    thread that ends during the walk, or a core the kernel refuses, is skipped.
    """
    if not hasattr(os, "sched_setaffinity") or not _TASKS.is_dir():
        return None
    allowed = os.sched_getaffinity(0)
    if len(allowed) < 2:
        return None
    core = max(allowed)
    try:
        present = {int(name) for name in os.listdir(_TASKS)}
    except OSError:
        return None
    with _LOCK:
        new = present - _SEEN
        _SEEN.intersection_update(present)
        _SEEN.update(new)
    pinned = 0
    for thread in new:
        try:
            if (_TASKS / str(thread) / "comm").read_text().strip().startswith(CHROMA_THREADS):
                os.sched_setaffinity(thread, {core})
                pinned += 1
        except OSError:  # ended meanwhile, or the core was refused
            continue
    if pinned:
        log.debug("%d of embedded Chroma's threads pinned to CPU core %d", pinned, core)
    return core
