"""queryDecisions `exact` over HTTP: -32602 when not a bool; both paths, same answer."""

from __future__ import annotations

from typing import Any

import pytest

from a2a.embeddings import Embedder
from a2a.settings import Settings
from tests.conftest import SAMPLE, app_client, index_records, rpc_call


@pytest.mark.parametrize("value", ["false", 0, None])
async def test_exact_that_is_not_a_bool_is_32602_naming_it(
    settings: Settings, embedder: Embedder, value: Any
) -> None:
    async with app_client(settings, embedder) as client:
        reply = await client.post(
            "/cstp", json=rpc_call("cstp.queryDecisions", {"query": "database", "exact": value})
        )
    body = reply.json()
    assert reply.status_code == 200
    assert body["error"]["code"] == -32602
    assert [e["field"] for e in body["error"]["data"]["errors"]] == ["exact"]


async def test_exact_true_and_false_return_the_same_fields(
    settings: Settings, embedder: Embedder, store: Any
) -> None:
    index_records(store, embedder, SAMPLE)
    store.close()
    async with app_client(settings, embedder) as client:
        answers = []
        for exact in (True, False):
            params = {"query": "database choice", "exact": exact, "retrievalMode": "hybrid"}
            reply = await client.post("/cstp", json=rpc_call("cstp.queryDecisions", params))
            answers.append(reply.json()["result"])
    exact_result, default_result = answers
    assert exact_result["decisions"] and exact_result["decisions"] == default_result["decisions"]
