"""Issue 25 edge 1: a write Chroma stored whose revision change failed (-32003) stayed
invisible to every replica after its retry (`created: false`). A fault-injecting HTTP proxy
between `cstp serve` and a `chroma run` server fails the marker change (a collection PUT)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.decisions.wire import call, replica_env
from tests.fault_proxy import FaultProxy, running
from tests.servers import free_port, start_chroma, start_cstp, stop


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[str], FaultProxy]]:
    folder: Path = tmp_path_factory.mktemp("retry-visible")
    chroma_port = free_port()
    chroma = start_chroma(folder / "chroma", chroma_port)
    proxy = FaultProxy(f"http://127.0.0.1:{chroma_port}")
    servers = []
    try:
        with running(proxy) as proxy_url:
            try:
                for n in range(2):
                    env = replica_env(folder / f"data{n}", proxy_url)
                    port = free_port()
                    servers.append(start_cstp(port, env))
                    servers[-1].url = f"http://127.0.0.1:{port}"  # type: ignore[attr-defined]
                yield [s.url for s in servers], proxy  # type: ignore[attr-defined]
            finally:
                for process in servers:
                    stop(process)
    finally:
        stop(chroma)


def _listed(url: str) -> set[str]:
    answer = call(url, "cstp.listDecisions", {"limit": 100})
    return {d["id"] for d in answer["result"]["decisions"]}


def test_a_retry_after_a_failed_marker_change_is_visible_on_every_replica(
    replicas: tuple[list[str], FaultProxy],
) -> None:
    urls, proxy = replicas
    # Both replicas loaded and fresh before the fault.
    call(urls[0], "cstp.recordDecision", {"decision": {"id": "warm", "title": "Warm up"}})
    assert all("warm" in _listed(url) for url in urls)
    decision = {"id": "lost-marker", "title": "Stored but not announced"}
    proxy.fail_modify.set()
    try:
        first = call(urls[0], "cstp.recordDecision", {"decision": decision})
    finally:
        proxy.fail_modify.clear()
    assert proxy.failed > 0 and first["error"]["code"] == -32003, first
    retry = call(urls[0], "cstp.recordDecision", {"decision": decision})
    assert retry["result"]["created"] is False, retry
    for url in urls:
        assert "lost-marker" in _listed(url), url
        query = call(url, "cstp.queryDecisions", {"query": "stored but not announced"})
        assert "lost-marker" in {d["id"] for d in query["result"]["decisions"]}, url
