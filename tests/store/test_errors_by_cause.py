"""Only Chroma itself failing is StoreUnavailable (-32003); our own mistakes propagate."""

from __future__ import annotations

import httpx
import pytest
from chromadb.errors import InternalError, InvalidArgumentError

from a2a.embeddings import Embedder
from a2a.store import ChromaDecisionStore, StoreUnavailable
from a2a.store.chroma import is_chroma_failure
from tests.conftest import SAMPLE, index_records


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
