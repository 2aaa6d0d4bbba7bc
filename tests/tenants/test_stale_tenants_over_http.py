"""Tenants while Chroma is away (CONTRACT.md, Tenants and Availability of reads): listTenants
and org-level calls are answered stale from the loaded tenants, marked, as one tenant's
reads are; over real HTTP with a `chroma run` server that is killed."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.decisions.lifecycle_wire import environment, service
from tests.decisions.wire import call, result
from tests.servers import free_port, freeze, start_chroma, stop
from tests.tenants.wire import ACME_TOKEN, GLOBEX_TOKEN, ORG_TOKEN, TOKENS

pytestmark = pytest.mark.slow


def test_list_tenants_and_org_search_are_answered_stale_while_chroma_is_away(
    tmp_path: Path,
) -> None:
    port = free_port()
    chroma = start_chroma(tmp_path / "chroma", port)
    env = environment(tmp_path, f"http://127.0.0.1:{port}", TOKENS, CSTP_CHROMA_TIMEOUT_SECONDS="2")
    try:
        with service(env) as s:
            for token, tenant in ((ACME_TOKEN, "acme"), (GLOBEX_TOKEN, "globex")):
                decision = {"id": f"{tenant}-1", "title": f"{tenant} moves billing to Kafka"}
                assert result(s.url, "cstp.recordDecision", {"decision": decision}, token)
            query = {"query": "billing on Kafka", "tenant": "*"}
            fresh = result(s.url, "cstp.queryDecisions", query, ORG_TOKEN)
            listed = result(s.url, "cstp.listTenants", {}, ORG_TOKEN)
            assert "stale" not in fresh and "stale" not in listed
            stop(chroma, signal.SIGKILL)
            stale = result(s.url, "cstp.queryDecisions", query, ORG_TOKEN)
            assert stale["decisions"] == fresh["decisions"]
            assert set(stale["stale"]) == {"since"}
            stale_list = result(s.url, "cstp.listTenants", {}, ORG_TOKEN)
            assert stale_list["tenants"] == listed["tenants"] and "since" in stale_list["stale"]
            calibration = call(s.url, "cstp.getCalibration", {"tenant": "*"}, ORG_TOKEN)
            assert "stale" in calibration["result"]
    finally:
        stop(chroma)


def test_list_tenants_and_org_search_answer_within_the_deadline_while_chroma_hangs(
    tmp_path: Path,
) -> None:
    """Bug found by breakit: with Chroma stopped (not dead), the tenant listing behind
    listTenants and `tenant: "*"` waited for Chroma with no deadline: the first call took two
    deadlines, the next ones hung until Chroma came back. Each now answers within one."""
    port = free_port()
    chroma = start_chroma(tmp_path / "chroma", port)
    env = environment(tmp_path, f"http://127.0.0.1:{port}", TOKENS, CSTP_CHROMA_TIMEOUT_SECONDS="2")
    try:
        with service(env) as s:
            decision = {"id": "acme-1", "title": "acme moves billing to Kafka"}
            assert result(s.url, "cstp.recordDecision", {"decision": decision}, ACME_TOKEN)
            query = {"query": "billing on Kafka", "tenant": "*"}
            listed = result(s.url, "cstp.listTenants", {}, ORG_TOKEN)
            assert result(s.url, "cstp.queryDecisions", query, ORG_TOKEN)["total"] == 1
            freeze(chroma.pid)
            try:
                # A hang guard, not a measurement: httpx gives up after 10 s (5 deadlines).
                # Twice: the bug made the first call slow and every later one hang.
                for _ in range(2):
                    answer = call(s.url, "cstp.listTenants", {}, ORG_TOKEN, timeout=10)
                    assert answer["result"]["tenants"] == listed["tenants"], answer
                    assert "since" in answer["result"]["stale"]
                    found = call(s.url, "cstp.queryDecisions", query, ORG_TOKEN, timeout=10)
                    assert [d["id"] for d in found["result"]["decisions"]] == ["acme-1"], found
            finally:
                os.kill(chroma.pid, signal.SIGCONT)
    finally:
        stop(chroma)
