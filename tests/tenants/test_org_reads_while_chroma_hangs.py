"""Org-level reads and listTenants while a real `chroma run` server is frozen (SIGSTOP;
issue 44 items 2 and 3; CONTRACT.md, Deadlines and Availability of reads): the first call
waits on Chroma one deadline at most, the later ones answer stale at once; the stale
listing holds only the tenants that exist in Chroma, and `since` is the last successful
check with Chroma, not the replica's start."""

from __future__ import annotations

import os
import signal
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.decisions.lifecycle_wire import environment, service
from tests.decisions.wire import call, result
from tests.servers import free_port, freeze, start_chroma, stop
from tests.tenants.wire import ACME_TOKEN, GLOBEX_TOKEN, ROOT_TOKEN, TOKENS

pytestmark = pytest.mark.slow

#: CSTP_CHROMA_TIMEOUT_SECONDS of the service under test.
DEADLINE = 2.0
#: What a call may take over the deadline (CONTRACT.md: the timeout + 1 s).
SLACK = 1.0
#: What "at once" may take on a busy 2-core machine (a stale answer from the loaded index).
AT_ONCE = 0.75
QUERY = {"query": "billing on Kafka", "tenant": "*"}


def _timed(url: str, method: str, params: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    started = time.monotonic()
    # A hang guard, not a measurement: 5 deadlines.
    answer = call(url, method, params, ROOT_TOKEN, timeout=5 * DEADLINE)
    assert "result" in answer, answer
    return time.monotonic() - started, answer["result"]


def _epoch(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


def test_org_reads_wait_one_deadline_then_answer_stale_at_once_with_the_last_check(
    tmp_path: Path,
) -> None:
    port = free_port()
    chroma = start_chroma(tmp_path / "chroma", port)
    env = environment(
        tmp_path, f"http://127.0.0.1:{port}", TOKENS, CSTP_CHROMA_TIMEOUT_SECONDS=f"{DEADLINE:g}"
    )
    try:
        with service(env) as s:
            # Two tenants in Chroma; `default` is loaded at start (the replica's own) but
            # holds nothing and has no collection.
            for token, tenant in ((ACME_TOKEN, "acme"), (GLOBEX_TOKEN, "globex")):
                decision = {"id": f"{tenant}-1", "title": f"{tenant} moves billing to Kafka"}
                assert result(s.url, "cstp.recordDecision", {"decision": decision}, token)
            # Long enough after the start that `since` = start-up time would be seen.
            time.sleep(2.5)
            listed = result(s.url, "cstp.listTenants", {}, ROOT_TOKEN)
            assert [t["name"] for t in listed["tenants"]] == ["acme", "globex"]
            fresh = result(s.url, "cstp.queryDecisions", QUERY, ROOT_TOKEN)
            calibration = result(s.url, "cstp.getCalibration", {"tenant": "*"}, ROOT_TOKEN)
            assert "stale" not in fresh and "stale" not in listed and "stale" not in calibration
            last_check = time.time()
            freeze(chroma.pid)
            try:
                waits: dict[str, list[float]] = {}
                for name, method, params, fresh_answer in (
                    ("listTenants", "cstp.listTenants", {}, listed),
                    ("queryDecisions", "cstp.queryDecisions", QUERY, fresh),
                    ("getCalibration", "cstp.getCalibration", {"tenant": "*"}, calibration),
                ):
                    for _ in range(3):
                        took, answer = _timed(s.url, method, params)
                        waits.setdefault(name, []).append(round(took, 2))
                        # Only the tenants that exist; the answer as it was before.
                        if name == "listTenants":
                            assert answer["tenants"] == listed["tenants"], answer
                        elif name == "queryDecisions":
                            assert answer["decisions"] == fresh_answer["decisions"]
                        # `since`: the last successful check (the calls just before the
                        # freeze), not the replica's start.
                        since = _epoch(answer["stale"]["since"])
                        assert last_check - 2 <= since <= last_check + 1, (answer, last_check)
                print("waits while frozen (s):", waits)
                firsts = [w[0] for w in waits.values()]
                laters = [w for ws in waits.values() for w in ws[1:]]
                # One deadline at most for the first call (listTenants); the calls after it
                # answer stale at once, Chroma being known down.
                assert max(firsts) <= DEADLINE + SLACK, waits
                assert max(laters) <= AT_ONCE, waits
            finally:
                os.kill(chroma.pid, signal.SIGCONT)
            # Chroma back: the listing tried in the background ends the outage, and the
            # answers are fresh again within a few calls.
            deadline = time.monotonic() + 3 * DEADLINE
            while "stale" in (again := _timed(s.url, "cstp.queryDecisions", QUERY)[1]):
                assert time.monotonic() < deadline, again
                time.sleep(0.1)
            assert again["decisions"] == fresh["decisions"]
            assert "stale" not in _timed(s.url, "cstp.listTenants", {})[1]
    finally:
        stop(chroma)
