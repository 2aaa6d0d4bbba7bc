"""Against a real `chroma run` server: failures are -32003, and the service recovers."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from a2a.embeddings import Embedder
from a2a.settings import load_settings
from a2a.store.chroma import open_store
from tests.conftest import SAMPLE, app_client, index_records, rpc_call
from tests.servers import cstp, free_port, start_chroma, stop

QUERY = rpc_call("cstp.queryDecisions", {"query": "database migration", "limit": 3})


@pytest.fixture
def chroma_port() -> int:
    return free_port()


@pytest.fixture
def chroma_path(tmp_path: Path) -> Path:
    return tmp_path / "chroma-server"


@pytest.fixture
def chroma_server(chroma_path: Path, chroma_port: int) -> Iterator[None]:
    process = start_chroma(chroma_path, chroma_port)
    yield
    stop(process)


async def _query(client: httpx.AsyncClient) -> dict[str, object]:
    response = await client.post("/cstp", json=QUERY)
    assert response.status_code == 200
    body: dict[str, object] = response.json()
    return body


@pytest.mark.slow
async def test_server_killed_mid_test_gives_32003_then_recovers_on_restart(
    tmp_path: Path, chroma_path: Path, chroma_port: int, embedder: Embedder
) -> None:
    settings = load_settings(
        data_dir=tmp_path / "unused",
        chroma_url=f"http://127.0.0.1:{chroma_port}",
        chroma_timeout_seconds=5,
        stale_reads_seconds=0,  # stale reads off: -32003 (tests/decisions/test_availability.py)
    )
    server = start_chroma(chroma_path, chroma_port)
    try:
        index_records(open_store(settings, model=embedder.name), embedder, SAMPLE)
        async with app_client(settings, embedder) as client:
            before = await _query(client)
            assert before["result"]["decisions"][0]["id"] == "d01"  # type: ignore[index]

            stop(server, signal.SIGKILL)
            down = await _query(client)
            assert down["error"] == {  # type: ignore[comparison-overlap]
                "code": -32003,
                "message": down["error"]["message"],  # type: ignore[index]
                "data": {"retryable": True},
            }
            assert (await client.get("/ready")).status_code == 503

            server = start_chroma(chroma_path, chroma_port)
            after = await _query(client)
            assert after["result"] == {
                **before["result"],
                "queryTimeMs": after[  # type: ignore[dict-item]
                    "result"
                ]["queryTimeMs"],
            }  # type: ignore[index]
            assert (await client.get("/ready")).status_code == 200
    finally:
        stop(server)


@pytest.mark.slow
async def test_service_starts_while_chroma_is_down_and_recovers_when_it_comes_up(
    tmp_path: Path, chroma_path: Path, chroma_port: int, embedder: Embedder
) -> None:
    settings = load_settings(
        data_dir=tmp_path / "unused", chroma_url=f"http://127.0.0.1:{chroma_port}"
    )
    async with app_client(settings, embedder) as client:
        assert (await client.get("/health")).status_code == 200
        assert (await client.get("/ready")).status_code == 503
        assert (await _query(client))["error"]["code"] == -32003  # type: ignore[index]
        server = start_chroma(chroma_path, chroma_port)
        try:
            result = (await _query(client))["result"]
            assert result["decisions"] == []  # type: ignore[index]
        finally:
            stop(server)


@pytest.mark.slow
def test_indexing_and_counting_through_the_server(
    tmp_path: Path, chroma_server: None, chroma_port: int, embedder: Embedder
) -> None:
    settings = load_settings(
        data_dir=tmp_path / "unused", chroma_url=f"http://127.0.0.1:{chroma_port}"
    )
    store = open_store(settings, model=embedder.name)
    summary = index_records(store, embedder, SAMPLE)
    assert (summary.new, store.count()) == (len(SAMPLE), len(SAMPLE))
    again = index_records(open_store(settings, model=embedder.name), embedder, SAMPLE)
    assert (again.new, again.updated, again.unchanged) == (0, 0, len(SAMPLE))
    # Every tenant's collection together (cstp_decisions on /metrics), others left out.
    acme = open_store(settings, "t.acme.decisions", model=embedder.name)
    index_records(acme, embedder, SAMPLE[:2])
    index_records(open_store(settings, "unrelated", model=embedder.name), embedder, SAMPLE[:1])
    every = store.count_collections(lambda name: name in ("decisions", "t.acme.decisions"))
    assert every == len(SAMPLE) + 2


@pytest.mark.slow
async def test_keyword_search_sees_records_indexed_by_another_process(
    tmp_path: Path, chroma_server: None, chroma_port: int, embedder: Embedder
) -> None:
    url = f"http://127.0.0.1:{chroma_port}"
    settings = load_settings(data_dir=tmp_path / "unused", chroma_url=url)
    index_records(open_store(settings, model=embedder.name), embedder, SAMPLE)
    call = rpc_call(
        "cstp.queryDecisions", {"query": "zeppelin airship", "retrievalMode": "keyword"}
    )
    async with app_client(settings, embedder) as client:
        before = (await client.post("/cstp", json=call)).json()["result"]["decisions"]
        assert before == []
        (tmp_path / "new.yaml").write_text("id: zz1\ntitle: Ship freight by zeppelin airship\n")
        indexed = cstp("index", str(tmp_path / "new.yaml"), env={"CSTP_CHROMA_URL": url})
        assert indexed.returncode == 0, indexed.stderr
        after = (await client.post("/cstp", json=call)).json()["result"]["decisions"]
        assert [d["id"] for d in after] == ["zz1"]
