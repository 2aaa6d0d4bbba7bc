"""The embedding provider (a2a.embeddings.provider) against a real HTTP server speaking the
OpenAI embeddings API with the bundled MiniLM's vectors (tests/openai_embeddings_server.py):
batches, retries, every refused answer, the key kept secret."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import numpy as np
import pytest
from pydantic import SecretStr

from a2a.embeddings import Embedder, embedder_of, is_available, is_batchable
from a2a.embeddings.batching import query_batcher
from a2a.embeddings.provider import RETRY_SECONDS, ProviderEmbedder
from a2a.errors import EmbeddingModelError, EmbeddingsUnavailable, SettingsError
from a2a.settings import load_settings
from tests.openai_embeddings_server import SERVED_MODEL, EmbeddingsServer, Served, serving
from tests.servers import free_port

KEY = "sk-test-0123456789abcdef-secret"
TEXTS = [f"Decision {n}: move the billing queue to Kafka" for n in range(10)]


@pytest.fixture(scope="module")
def served(embedder: Embedder) -> Iterator[Served]:
    with serving(EmbeddingsServer(embedder, key=KEY), free_port()) as served:
        yield served


@pytest.fixture
def server(served: Served) -> EmbeddingsServer:
    served.server.fault = None
    served.server.requests.clear()
    served.server.authorizations.clear()
    return served.server


def provider(served: Served, **options: object) -> ProviderEmbedder:
    settings: dict[str, object] = {
        "api_key": SecretStr(KEY),
        "dimensions": 384,
        "batch": 64,
        "timeout_seconds": 5.0,
    }
    settings.update(options)
    return ProviderEmbedder(served.url, SERVED_MODEL, **settings)  # type: ignore[arg-type]


def test_vectors_are_the_served_models_in_input_order_in_batches_with_the_key(
    served: Served, server: EmbeddingsServer, embedder: Embedder
) -> None:
    vectors = provider(served, batch=4).vectors(TEXTS)
    expected = np.asarray(embedder.embed_documents(TEXTS), dtype=np.float32)
    np.testing.assert_allclose(vectors, expected, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert [len(r["input"]) for r in server.requests] == [4, 4, 2]
    assert {r["model"] for r in server.requests} == {SERVED_MODEL}
    assert set(server.authorizations) == {f"Bearer {KEY}"}


def test_the_dimension_is_learnt_at_start_and_names_the_identity(
    served: Served, server: EmbeddingsServer
) -> None:
    settings = load_settings(
        embedding_provider="openai",
        embedding_url=served.url,
        embedding_model=SERVED_MODEL,
        embedding_api_key=KEY,
    )
    embedder = embedder_of(settings)
    assert (embedder.name, getattr(embedder, "dimension", None)) == (
        f"openai:{SERVED_MODEL}:384",
        384,
    )
    assert "dimensions" not in server.requests[0]  # none configured: none asked for


def test_configured_dimensions_are_sent_and_name_the_identity(
    served: Served, server: EmbeddingsServer
) -> None:
    embedder = provider(served, dimensions=128)
    assert embedder.vectors(TEXTS[:3]).shape == (3, 128)
    assert server.requests[0]["dimensions"] == 128
    assert embedder.name == f"openai:{SERVED_MODEL}:128"


def test_shuffled_answers_are_put_back_in_input_order(
    served: Served, server: EmbeddingsServer, embedder: Embedder
) -> None:
    server.fault = "shuffled"
    vectors = provider(served).vectors(TEXTS[:5])
    expected = np.asarray(embedder.embed_documents(TEXTS[:5]), dtype=np.float32)
    np.testing.assert_allclose(vectors, expected, atol=1e-6)


def test_a_429_is_retried_within_the_deadline(served: Served, server: EmbeddingsServer) -> None:
    server.fault = "429-once"
    assert provider(served).vectors(TEXTS[:2]).shape == (2, 384)
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("fault", "said", "tries"),
    [
        ("html", "text/html, not JSON", 1),
        ("401", "refused the API key (HTTP 401)", 1),
        ("500", "HTTP 500 to 3 tries", 3),
        ("wrong-dimension", "vectors of 383, 384 dimensions, expected 384", 1),
        ("nan", "non-finite number", 1),
        ("fewer", "3 vectors for 4 inputs", 1),
    ],
    ids=["html", "401", "500", "wrong-dimension", "nan", "fewer"],
)
def test_a_bad_answer_is_refused_naming_what_was_wrong(
    served: Served, server: EmbeddingsServer, fault: str, said: str, tries: int
) -> None:
    server.fault = fault
    with pytest.raises(EmbeddingsUnavailable) as caught:
        provider(served).vectors(TEXTS[:4])
    assert said in str(caught.value)
    assert served.url in str(caught.value)
    assert caught.value.code == -32003
    assert caught.value.data == {"unavailable": "embeddings"}
    assert len(server.requests) == tries


def test_a_provider_that_is_down_is_unavailable_and_then_skipped_for_a_while() -> None:
    now = [0.0]
    embedder = ProviderEmbedder(
        f"http://127.0.0.1:{free_port()}/v1", "m", dimensions=8, clock=lambda: now[0]
    )
    assert is_available(embedder)
    with pytest.raises(EmbeddingsUnavailable, match="could not be reached"):
        embedder.embed_query("anything")
    assert not is_available(embedder)
    now[0] += RETRY_SECONDS
    assert is_available(embedder)  # this caller takes the next try...
    assert not is_available(embedder)  # ...the others go on skipping


def test_the_key_is_never_in_an_error_or_a_log(
    served: Served, server: EmbeddingsServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    embedder = provider(served, api_key=SecretStr(KEY + "-wrong"))
    with pytest.raises(EmbeddingsUnavailable) as caught:
        embedder.embed_query("anything")
    shown = f"{caught.value} {caught.value.data} {embedder!r} {embedder.name} {caplog.text}"
    assert "401" in shown
    assert KEY not in shown and "****" not in shown  # not even the part the server quoted


def test_a_provider_that_cannot_say_its_dimension_stops_start_up(served: Served) -> None:
    settings = load_settings(
        embedding_provider="openai", embedding_url=served.url, embedding_model="no-such-model"
    )
    with pytest.raises(EmbeddingModelError) as caught:
        embedder_of(settings)
    assert "CSTP_EMBEDDING_DIMENSIONS" in str(caught.value)
    assert "HTTP 401" in str(caught.value)  # no key configured: the server refuses


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"embedding_provider": "openai", "embedding_model": "m"}, "CSTP_EMBEDDING_URL"),
        (
            {"embedding_provider": "openai", "embedding_url": "http://127.0.0.1:1/v1"},
            "CSTP_EMBEDDING_MODEL",
        ),
        ({"embedding_model": "text-embedding-3-small"}, "CSTP_EMBEDDING_MODEL"),
        ({"embedding_provider": "cohere"}, "CSTP_EMBEDDING_PROVIDER"),
        ({"embedding_dimensions": "0"}, "CSTP_EMBEDDING_DIMENSIONS"),
    ],
    ids=["no-url", "bundled-name-for-provider", "provider-name-bundled", "provider", "dims"],
)
def test_provider_settings_that_cannot_work_stop_start_up_naming_them(
    settings: dict[str, str], named: str
) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(**settings)
    assert named in str(caught.value)


async def test_concurrent_queries_share_requests_through_the_dynamic_batcher(
    served: Served, server: EmbeddingsServer, embedder: Embedder
) -> None:
    remote = provider(served)
    assert is_batchable(remote)
    batcher = query_batcher(remote, queue=64, max_wait_seconds=5)
    assert batcher is not None
    try:
        vectors = await asyncio.gather(*(batcher.embed(text) for text in TEXTS[:6]))
    finally:
        batcher.close()
    expected = np.asarray(embedder.embed_documents(TEXTS[:6]), dtype=np.float32)
    np.testing.assert_allclose(np.stack(vectors), expected, atol=1e-6)
    assert sum(len(r["input"]) for r in server.requests) == 6
    assert len(server.requests) < 6
