"""One deadline per call (a2a.store.deadlines) for AsyncStore's waits on a frozen `chroma run`.

A call's store calls share the deadline the first one fixed: once it has passed, the next
store call of the same call fails at once (-32003) without being started, where it used to
get a whole timeout of its own. Outside a call each store call has its own timeout.
Durations are measured in bench/break_it.py, not asserted here.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from a2a.errors import StoreUnavailable
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore
from a2a.store.deadlines import call_deadline
from tests.servers import free_port, freeze, start_chroma, stop


@pytest.fixture
def frozen(tmp_path: Path) -> Iterator[AsyncStore]:
    """An AsyncStore (timeout 0.5 s) on a `chroma run` server that is SIGSTOPped."""
    port = free_port()
    chroma = start_chroma(tmp_path / "chroma", port)
    sync = ChromaDecisionStore(
        collection="decisions",
        embedding_model="m",
        server_url=f"http://127.0.0.1:{port}",
        timeout_seconds=0.5,
    )
    sync.count()  # connected while it answers
    freeze(chroma.pid)
    try:
        yield AsyncStore(sync, 0.5)
    finally:
        os.kill(chroma.pid, signal.SIGCONT)
        stop(chroma)


async def test_a_call_past_its_deadline_starts_no_further_store_call(frozen: AsyncStore) -> None:
    started: list[str] = []
    with call_deadline():
        with pytest.raises(StoreUnavailable):
            await frozen.get(ids=["a"])
        with pytest.raises(StoreUnavailable, match="did not answer"):
            await frozen.call(lambda: started.append("second"))
    assert started == []


async def test_outside_a_call_each_store_call_has_its_own_timeout(frozen: AsyncStore) -> None:
    started: list[str] = []
    with pytest.raises(StoreUnavailable):
        await frozen.get(ids=["a"])
    await frozen.call(lambda: started.append("second"))
    assert started == ["second"]


async def test_each_call_has_a_deadline_of_its_own(frozen: AsyncStore) -> None:
    """A spent deadline stays with its call: the next call's first store call runs."""
    started: list[str] = []
    with call_deadline(), pytest.raises(StoreUnavailable):
        await frozen.get(ids=["a"])
    with call_deadline():
        await frozen.call(lambda: started.append("next call"))
    assert started == ["next call"]
