"""An embedding provider under the real `cstp index` and `cstp serve` (CONTRACT.md, Embedding
providers): both embed through a real HTTP server speaking the OpenAI API with the bundled
MiniLM's vectors (tests/openai_embeddings_server.py); while it is down or answers wrong,
keyword queries and reads keep serving, the rest get -32003 `unavailable: embeddings`,
nothing is stored, and the API key shows nowhere."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a.app.runtime import Runtime
from a2a.embeddings import Embedder
from a2a.errors import EmbeddingModelMismatch
from a2a.settings import load_settings
from tests.conftest import SAMPLE, index_records, rpc_call
from tests.openai_embeddings_server import SERVED_MODEL, EmbeddingsServer, Served, serving
from tests.servers import cstp, free_port, output_of, start_cstp, stop

pytestmark = pytest.mark.slow

KEY = "sk-e2e-4f1c9a77d2b3-secret"
IDENTITY = f"openai:{SERVED_MODEL}:384"
UNAVAILABLE = {"unavailable": "embeddings"}
EXAMPLES = Path(__file__).parents[2] / "examples" / "decisions" / "data.yaml"  # 6 records


@dataclass
class Stack:
    served: Served
    url: str
    indexed: Any  # the `cstp index` run
    built: Path  # a copy of the data folder as `cstp index` left it
    process: Any


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Stack]:
    folder = tmp_path_factory.mktemp("provider")
    env = {
        "CSTP_DATA_DIR": str(folder / "data"),
        "CSTP_EMBEDDING_PROVIDER": "openai",
        "CSTP_EMBEDDING_MODEL": SERVED_MODEL,
        "CSTP_EMBEDDING_API_KEY": KEY,
        "CSTP_EMBEDDING_BATCH": "8",  # a few seconds of MiniLM a request on a busy machine
        "CSTP_LOG_LEVEL": "debug",
    }
    with serving(EmbeddingsServer(embedder, key=KEY), free_port()) as served:
        env["CSTP_EMBEDDING_URL"] = served.url
        indexed = cstp("index", str(EXAMPLES), env=env, timeout=120)
        shutil.copytree(folder / "data" / "chroma", folder / "built" / "chroma")
        port = free_port()
        process = start_cstp(port, env)
        try:
            yield Stack(served, f"http://127.0.0.1:{port}", indexed, folder / "built", process)
        finally:
            stop(process)


def call(stack: Stack, method: str, **params: Any) -> dict[str, Any]:
    response = httpx.post(f"{stack.url}/cstp", json=rpc_call(method, params), timeout=30)
    body: dict[str, Any] = response.json()
    assert KEY not in response.text
    return body


def result(stack: Stack, method: str, **params: Any) -> dict[str, Any]:
    body = call(stack, method, **params)
    assert "result" in body, body
    answer: dict[str, Any] = body["result"]
    return answer


def test_index_and_serve_embed_through_the_provider_and_the_card_names_it(stack: Stack) -> None:
    assert stack.indexed.returncode == 0, stack.indexed.stderr
    card = httpx.get(f"{stack.url}/.well-known/agent-card.json").json()
    [extension] = card["capabilities"]["extensions"]
    assert extension["params"] == {"name": IDENTITY, "dimensions": 384}
    server = stack.served.server
    asked = len(server.requests)
    found = result(stack, "cstp.queryDecisions", query="Storing money amounts as integers")
    assert found["decisions"][0]["id"] == "ab0400d8"
    assert server.requests[asked:] == [
        {"model": SERVED_MODEL, "input": ["Storing money amounts as integers"]}
    ]


def test_a_write_embeds_through_the_provider_and_is_found(stack: Stack) -> None:
    decision = {"id": "prov-1", "title": "Run the embedding model behind vLLM on the GPU box"}
    assert result(stack, "cstp.recordDecision", decision=decision)["created"] is True
    found = result(stack, "cstp.queryDecisions", query="vLLM embedding model on a GPU", limit=1)
    assert found["decisions"][0]["id"] == "prov-1"


def test_while_the_provider_is_down_keyword_and_reads_serve_the_rest_get_32003(
    stack: Stack,
) -> None:
    with stack.served.down():
        keyword = result(
            stack, "cstp.queryDecisions", query="bigint currency", retrievalMode="keyword"
        )
        assert keyword["decisions"][0]["id"] == "ab0400d8"
        assert {d["distance"] for d in keyword["decisions"]} == {None}
        for params in (
            {"query": "money as integers"},
            {"query": "money as integers", "retrievalMode": "hybrid"},
            {"query": "bigint", "retrievalMode": "keyword", "maxDistance": 1.0},
        ):
            error = call(stack, "cstp.queryDecisions", **params)["error"]
            assert (error["code"], error["data"]) == (-32003, UNAVAILABLE), params
        written = call(stack, "cstp.recordDecision", decision={"id": "prov-2", "title": "Down"})
        assert (written["error"]["code"], written["error"]["data"]) == (-32003, UNAVAILABLE)
        assert result(stack, "cstp.getDecision", id="ab0400d8")["id"] == "ab0400d8"
        assert result(stack, "cstp.listDecisions", limit=3)["decisions"]
        assert "decisions" in result(stack, "cstp.findSimilarDecisions", decisionId="ab0400d8")
        assert "stale" not in keyword  # Chroma is fine: nothing is answered stale for this
    again = result(stack, "cstp.queryDecisions", query="money as integers")
    assert again["decisions"][0]["id"] == "ab0400d8"
    assert call(stack, "cstp.getDecision", id="prov-2")["error"]["code"] == -32602


@pytest.mark.parametrize("fault", ["nan", "wrong-dimension", "fewer", "html", "401"])
def test_a_bad_answer_to_a_write_stores_nothing(stack: Stack, fault: str) -> None:
    stack.served.server.fault = fault
    try:
        decision = {"id": f"bad-{fault}", "title": "Anything at all"}
        error = call(stack, "cstp.recordDecision", decision=decision)["error"]
    finally:
        stack.served.server.fault = None
    assert (error["code"], error["data"]) == (-32003, UNAVAILABLE)
    assert call(stack, "cstp.getDecision", id=f"bad-{fault}")["error"]["code"] == -32602


def test_the_api_key_is_in_no_log_metric_or_answer(stack: Stack) -> None:
    assert KEY not in stack.indexed.stdout + stack.indexed.stderr
    assert KEY not in httpx.get(f"{stack.url}/metrics").text
    assert KEY not in httpx.get(f"{stack.url}/.well-known/agent-card.json").text
    assert KEY not in httpx.post(f"{stack.url}/cstp", json=rpc_call("rpc.discover")).text
    log = output_of(stack.process)
    assert "refused the API key (HTTP 401)" in log  # the faults above were logged...
    assert KEY not in log and "****" not in log  # ...without the key or a part of it


def test_a_collection_built_with_one_model_refuses_another_at_start(
    stack: Stack, embedder: Embedder, tmp_path: Path
) -> None:
    with pytest.raises(EmbeddingModelMismatch) as caught:
        Runtime.open(load_settings(data_dir=stack.built), role="test", embedder=embedder)
    assert IDENTITY in str(caught.value) and embedder.name in str(caught.value)
    # and the other way round: a store the bundled model built, the provider configured
    bundled = load_settings(data_dir=tmp_path)
    runtime = Runtime.open(bundled, role="test", embedder=embedder)
    index_records(runtime.store, embedder, SAMPLE[:1])
    runtime.close()
    provider = load_settings(
        data_dir=tmp_path,
        embedding_provider="openai",
        embedding_url=stack.served.url,
        embedding_model=SERVED_MODEL,
        embedding_api_key=KEY,
        embedding_dimensions=384,
    )
    with pytest.raises(EmbeddingModelMismatch) as caught:
        Runtime.open(provider, role="test")
    assert IDENTITY in str(caught.value) and embedder.name in str(caught.value)


def test_a_start_while_the_provider_is_down_takes_the_dimension_the_collection_records(
    stack: Stack,
) -> None:
    settings = load_settings(
        data_dir=stack.built,
        embedding_provider="openai",
        embedding_url=stack.served.url,
        embedding_model=SERVED_MODEL,
    )
    with stack.served.down():
        runtime = Runtime.open(settings, role="test")
    try:
        assert runtime.embedder.name == IDENTITY
    finally:
        runtime.close()
