"""Issue 44 item 5: writes that time out while Chroma is frozen leave no "Future exception
was never retrieved" in the log (the group commit's and the worker pool's futures, once
their caller has gone).

A real `chroma run` stopped with SIGSTOP under concurrent writes, a real `cstp serve` with a
1 s Chroma deadline; its whole output is read after it has stopped. asyncio logs an
unretrieved future when it is collected, and these futures sit in reference cycles (the
error's traceback holds the frames that hold them): only the cyclic collector frees them,
whenever it next runs a full pass. So the server is started with a `sitecustomize` that
runs `gc.collect()` every 0.2 s, or the test would pass or fail by the collector's mood.
"""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.decisions.wire import FAST_MODEL, TOKENS, call
from tests.servers import chroma_server, free_port, freeze, output_of, start_cstp, stop

#: Concurrent writes while Chroma is frozen: more than the worker threads (8).
WRITES = 24

#: Imported by the server's interpreter at start-up (it is first on PYTHONPATH).
COLLECTOR = """\
import gc, threading, time

def _collect():
    while True:
        time.sleep(0.2)
        gc.collect()

threading.Thread(target=_collect, name="test-gc", daemon=True).start()
"""


#: Real `cstp serve` and Chroma processes (end-to-end).
pytestmark = pytest.mark.slow


def test_writes_timing_out_in_a_freeze_log_no_unretrieved_future(tmp_path: Path) -> None:
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(COLLECTOR)
    with chroma_server(tmp_path) as (chroma_url, chroma):
        env = {
            "CSTP_EMBEDDING_MODEL": FAST_MODEL,
            "CSTP_AUTH_TOKENS": TOKENS,
            "CSTP_DATA_DIR": str(tmp_path / "data"),
            "CSTP_CHROMA_URL": chroma_url,
            "CSTP_CHROMA_TIMEOUT_SECONDS": "1",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(hook), os.environ.get("PYTHONPATH")])),
        }
        port = free_port()
        server = start_cstp(port, env)
        url = f"http://127.0.0.1:{port}"
        try:
            before = call(url, "cstp.recordDecision", {"decision": {"title": "Before"}})
            assert before["result"]["created"] is True, before
            freeze(chroma.pid)
            try:
                with ThreadPoolExecutor(WRITES) as pool:
                    answers = list(
                        pool.map(
                            lambda n: call(
                                url,
                                "cstp.recordDecision",
                                {"decision": {"id": f"frozen-{n}", "title": f"Frozen {n}"}},
                            ),
                            range(WRITES),
                        )
                    )
                # The hung Chroma calls end on their own (the HTTP client's 1 s timeout) after
                # their callers were answered: their failures come while nobody waits.
                time.sleep(3)
            finally:
                os.kill(chroma.pid, signal.SIGCONT)
            assert [a.get("error", {}).get("code") for a in answers] == [-32003] * WRITES, answers
            after = write_after_thaw(url)
            assert after["result"]["created"] is True, after
            time.sleep(0.5)  # a collection after the last call
        finally:
            stop(server)
        log = output_of(server)
    assert "test-gc" not in log, log[-4000:]  # the hook ran without failing
    assert "exception was never retrieved" not in log, log[-4000:]
    assert "Traceback" not in log, log[-4000:]


def write_after_thaw(url: str, seconds: float = 15) -> dict[str, object]:
    """A write once Chroma is thawed, retried on -32003 as CONTRACT.md tells clients
    (retryable): with a 1 s deadline on a loaded machine, the first calls after SIGCONT
    may still meet Chroma catching up. The answer of the first that is not -32003."""
    deadline = time.monotonic() + seconds
    while True:
        answer = call(
            url,
            "cstp.recordDecision",
            {"decision": {"id": "after-thaw", "title": "After the thaw"}},
        )
        if answer.get("error", {}).get("code") != -32003 or time.monotonic() > deadline:
            return answer
        time.sleep(0.5)
