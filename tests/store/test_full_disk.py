"""Issue 44 item 1: a full disk under the embedded store. Writes are refused before they
reach Chroma (-32003, `data.reason` "disk full"), the process never wedges, and once space is
freed writes work again with nothing stored lost.

Before the fix, on a real 96 MiB tmpfs with 1,500 records: writes on the full disk got
-32003 from Chroma itself ("database or disk is full"); once the filler was deleted, every
write and /health hung until the process was killed (the write blocked in Chroma's Rust
bindings holding the GIL). Real `cstp serve` processes over HTTP throughout.
"""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.decisions.wire import FAST_MODEL, TOKENS, WRITER_TOKEN, call
from tests.mounts import small_tmpfs
from tests.servers import cstp_server, free_port, output_of, start_cstp, stop

MIB = 1024 * 1024
#: Records stored before the disk fills: past Chroma's first compactions of its log.
BEFORE = 1_500
_IDS = itertools.count()


#: Real `cstp serve` and Chroma processes (end-to-end).
pytestmark = pytest.mark.slow


def _env(data: Path, **extra: str) -> dict[str, str]:
    return {
        "CSTP_EMBEDDING_MODEL": FAST_MODEL,
        "CSTP_AUTH_TOKENS": TOKENS,
        "CSTP_DATA_DIR": str(data),
        "CSTP_CHROMA_TIMEOUT_SECONDS": "3",
        **extra,
    }


def _batch(url: str, ids: list[str], timeout: float = 30) -> list[dict[str, Any]]:
    """recordDecision of each id in one JSON-RPC batch (3,000-character contexts)."""
    body = [
        {
            "jsonrpc": "2.0",
            "id": next(_IDS),
            "method": "cstp.recordDecision",
            "params": {"decision": {"id": i, "title": f"Record {i}", "context": "c" * 3_000}},
        }
        for i in ids
    ]
    headers = {"Authorization": f"Bearer {WRITER_TOKEN}"}
    answers: list[dict[str, Any]] = httpx.post(
        f"{url}/cstp", json=body, headers=headers, timeout=timeout
    ).json()
    return answers


def _all_ids(url: str) -> set[str]:
    ids: set[str] = set()
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 100, **({"cursor": cursor} if cursor else {})}
        page = call(url, "cstp.listDecisions", params)["result"]
        ids.update(d["id"] for d in page["decisions"])
        cursor = page["nextCursor"]
        if cursor is None:
            return ids


def _fill(folder: Path) -> Path:
    """A file that takes every free byte of `folder`'s filesystem."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * 65_536)
        except OSError:
            pass
        try:
            while True:
                out.write(b"\0" * 4_096)
        except OSError:
            pass
    return filler


def _free_mib(folder: Path) -> float:
    stat = os.statvfs(folder)
    return stat.f_bavail * stat.f_frsize / MIB


def test_a_full_disk_refuses_writes_with_a_reason_and_never_wedges(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "disk", 96) as disk:
        data = disk / "data"
        port = free_port()
        server = start_cstp(port, _env(data, CSTP_MIN_FREE_DISK_MIB="8"))
        url = f"http://127.0.0.1:{port}"
        try:
            before = [f"before-{n}" for n in range(BEFORE)]
            for start in range(0, BEFORE, 50):
                answers = _batch(url, before[start : start + 50])
                assert all(a["result"]["created"] for a in answers), answers
            filler = _fill(disk)
            assert _free_mib(disk) < 1

            refused = _batch(url, [f"full-{n}" for n in range(50)])
            for answer in [
                *refused,
                call(url, "cstp.recordDecision", {"decision": {"title": "F"}}),
            ]:
                assert answer["error"]["code"] == -32003, answer
                assert answer["error"]["data"] == {"retryable": True, "reason": "disk full"}
            # Reads and liveness go on while the disk is full.
            assert httpx.get(f"{url}/health", timeout=5).status_code == 200
            got = call(url, "cstp.getDecision", {"id": "before-7"}, timeout=10)
            assert got["result"]["id"] == "before-7", got

            filler.unlink()
            started = time.monotonic()
            freed = _batch(url, [f"freed-{n}" for n in range(50)], timeout=20)
            assert all(a["result"]["created"] for a in freed), freed
            one = call(url, "cstp.recordDecision", {"decision": {"title": "One"}}, timeout=20)
            assert one["result"]["created"] is True, one
            assert time.monotonic() - started < 20
            assert httpx.get(f"{url}/health", timeout=5).status_code == 200
            assert _all_ids(url) >= {*before, *(f"freed-{n}" for n in range(50))}
        finally:
            stop(server)
        log = output_of(server)
        # Refused before Chroma: it never saw a full disk.
        assert "disk is full" not in log, log[-3000:]
        assert "Traceback" not in log, log[-3000:]

        # Nothing already stored was lost: a new process finds every record.
        with cstp_server(_env(data)) as again:
            ids = _all_ids(again)
            assert ids >= {*before, *(f"freed-{n}" for n in range(50))}
            assert not any(i.startswith("full-") for i in ids)
            got = call(again, "cstp.getDecision", {"id": "before-1499"})
            assert got["result"]["context"] == "c" * 3_000, got


def test_writes_are_refused_under_the_margin_on_any_filesystem(tmp_path: Path) -> None:
    """The same rule without a small disk (no root needed): a margin above what the test's
    own filesystem has free refuses every write, and reads go on."""
    margin = int(_free_mib(tmp_path)) + 1_024
    with cstp_server(_env(tmp_path / "data", CSTP_MIN_FREE_DISK_MIB=str(margin))) as url:
        answer = call(url, "cstp.recordDecision", {"decision": {"title": "No room"}})
        assert answer["error"] == {
            "code": -32003,
            "message": "ChromaDB unavailable",
            "data": {"retryable": True, "reason": "disk full"},
        }, answer
        listed = call(url, "cstp.listDecisions", {})
        assert listed["result"]["decisions"] == [], listed
        assert httpx.get(f"{url}/health", timeout=5).status_code == 200
