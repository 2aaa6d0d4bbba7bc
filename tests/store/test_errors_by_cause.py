"""Only Chroma itself failing is StoreUnavailable (-32003); our own mistakes propagate."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from chromadb.errors import InternalError, InvalidArgumentError

from a2a.embeddings import Embedder
from a2a.errors import StoreUnavailable
from a2a.settings import load_settings
from a2a.store.chroma import ChromaDecisionStore, is_chroma_failure
from tests.conftest import SAMPLE, app_client, index_records, rpc_call
from tests.fault_proxy import FaultProxy, running
from tests.servers import free_port, start_chroma, stop


def test_a_malformed_where_propagates_unchanged_and_is_not_store_unavailable(
    store: ChromaDecisionStore, embedder: Embedder
) -> None:
    index_records(store, embedder, SAMPLE[:2])
    with pytest.raises(Exception) as caught:
        store.get(where={"confidence": {"$between": [0, 1]}})
    assert not isinstance(caught.value, StoreUnavailable)


def test_a_dead_server_is_store_unavailable() -> None:
    dead = ChromaDecisionStore(
        collection="decisions", embedding_model="m", server_url="http://127.0.0.1:9"
    )
    with pytest.raises(StoreUnavailable):
        dead.count()


@pytest.mark.parametrize(
    ("exc", "failure"),
    [
        (httpx.ConnectError("refused"), True),
        (httpx.ReadTimeout("slow"), True),
        (httpx.RemoteProtocolError("reset"), True),
        (ConnectionResetError(), True),
        (InternalError("database is locked"), True),
        (InvalidArgumentError("bad where"), False),
        (ValueError("bad where"), False),
        (KeyError("ids"), False),
        (TypeError("our bug"), False),
    ],
    ids=[
        "connect",
        "timeout",
        "reset",
        "os-reset",
        "chroma-500",
        "chroma-400",
        "value",
        "key",
        "bug",
    ],
)
def test_failures_are_classified_by_cause(exc: BaseException, failure: bool) -> None:
    assert is_chroma_failure(exc) is failure


def test_a_bare_500_from_a_proxy_in_front_of_chroma_is_store_unavailable(
    tmp_path: Path,
) -> None:
    """A reverse proxy whose upstream broke answers a bare HTTP 500 (text/plain): Chroma's
    client raises a plain Exception for it, which was answered -32603 (a bug of ours)."""
    port = free_port()
    chroma = start_chroma(tmp_path / "chroma", port)
    proxy = FaultProxy(f"http://127.0.0.1:{port}")
    try:
        with running(proxy) as url:
            store = ChromaDecisionStore(collection="d", embedding_model="m", server_url=url)
            assert store.get(ids=["a"]) == []
            proxy.bare_500.set()
            with pytest.raises(StoreUnavailable, match="Internal Server Error"):
                store.count()
            assert proxy.failed > 0
            proxy.bare_500.clear()
            assert store.count() == 0  # connects again once the proxy answers
    finally:
        stop(chroma)


async def test_a_bare_500_from_a_proxy_is_minus_32003_on_the_wire(
    tmp_path: Path, embedder: Embedder
) -> None:
    port = free_port()
    chroma = start_chroma(tmp_path / "chroma", port)
    proxy = FaultProxy(f"http://127.0.0.1:{port}")
    try:
        with running(proxy) as url:
            settings = load_settings(
                data_dir=tmp_path / "data", chroma_url=url, stale_reads_seconds=0
            )
            async with app_client(settings, embedder) as client:
                proxy.bare_500.set()
                reply = await client.post("/cstp", json=rpc_call("cstp.getDecision", {"id": "x"}))
                assert reply.json()["error"]["code"] == -32003, reply.text
    finally:
        stop(chroma)
