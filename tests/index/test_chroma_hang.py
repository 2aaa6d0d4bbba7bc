"""LiveIndex against a real `chroma run` server that stops answering (SIGSTOP)."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import pytest

from a2a.errors import StoreUnavailable
from a2a.index.sync import LiveIndex
from a2a.store.chroma import ChromaDecisionStore
from tests.conftest import SAMPLE
from tests.index.helpers import write
from tests.servers import free_port, freeze, start_chroma, stop

TIMEOUT = 2.0


async def _elapsed_of_failing_call(live: LiveIndex) -> float:
    started = time.monotonic()
    with pytest.raises(StoreUnavailable):
        await live.current()
    return time.monotonic() - started


async def test_a_query_arriving_during_a_hung_freshness_check_fails_within_one_deadline(
    tmp_path: Path,
) -> None:
    """Bug found by breakit: a call arriving while an older freshness check hung on Chroma
    waited for that check (up to the deadline), then ran its own (another deadline): -32003
    came after up to twice CSTP_CHROMA_TIMEOUT_SECONDS. It now fails with the older check."""
    port = free_port()
    server = start_chroma(tmp_path / "chroma", port)
    store = ChromaDecisionStore(
        collection="hang",
        embedding_model="t",
        server_url=f"http://127.0.0.1:{port}",
        timeout_seconds=TIMEOUT,
    )
    try:
        write(store, SAMPLE[:3])
        live = LiveIndex(store, timeout_seconds=TIMEOUT)
        await live.current()
        freeze(server.pid)
        try:
            first = asyncio.create_task(_elapsed_of_failing_call(live))
            await asyncio.sleep(TIMEOUT / 4)
            second = await _elapsed_of_failing_call(live)
            await first
        finally:
            server.send_signal(signal.SIGCONT)
        # A hang bound, not a speed measurement: one deadline (plus slack), never two.
        assert second < TIMEOUT * 1.5
        await live.current()  # Chroma back: the index answers again
    finally:
        store.close()
        stop(server)
