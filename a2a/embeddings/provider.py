"""An embedding provider: any service speaking the OpenAI embeddings API, over httpx.

CONTRACT.md, Embedding providers: `POST {url}/embeddings` with `{"model", "input": [...]}`
(and `dimensions` when configured), answered `{"data": [{"index", "embedding"}, ...]}`, as
OpenAI, Ollama, vLLM, Hugging Face TEI and llama.cpp's server answer it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np
import numpy.typing as npt
from pydantic import SecretStr

from a2a.errors import EmbeddingModelError, EmbeddingsUnavailable

log = logging.getLogger(__name__)

#: Tries of one batch answered 429 or 5xx: the first and two retries (CONTRACT.md).
ATTEMPTS = 3
#: Seconds before the first retry, doubled for the next; a Retry-After the provider sends
#: is taken instead when it still fits the batch's deadline.
BACKOFF_SECONDS = 0.25
#: Seconds after a failed call during which `available()` is false (keyword queries then
#: skip the vector they only show a distance with, rather than wait on a provider that
#: is down); then one caller tries again.
RETRY_SECONDS = 5.0
#: Characters of a provider's own error message kept in ours (4xx other than 401/403).
MESSAGE_CHARS = 200
#: The text embedded once at start-up to learn the model's dimension when none is set.
PROBE_TEXT = "dimension probe"

Vectors = npt.NDArray[np.float32]


class ProviderEmbedder:
    """Vectors from an OpenAI-style embeddings endpoint, checked and L2-normalised.

    `url`: the API's base (`https://api.openai.com/v1`, `http://ollama:11434/v1`); `model`:
    the provider's model name; `api_key`: sent as `Authorization: Bearer`, never logged nor
    put in an error; `dimensions`: sent as `dimensions` (None: the model's own, learnt from
    the first answer, which `open` asks for); `batch`: most inputs a request carries;
    `timeout_seconds`: each request's deadline, retries included (CSTP_CHROMA_TIMEOUT_SECONDS).

    `name` is the identity the collection records (`openai:<model>:<dimensions>`) and the
    agent card shows. Every failure raises EmbeddingsUnavailable saying what was wrong
    (unreachable, timeout, an HTTP status, not JSON, wrong count, index, dimension, a
    non-finite or zero vector); a call whose answer is refused returns nothing, so nothing
    of it is stored. Thread-safe (one httpx.Client, its pool shared).
    """

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: SecretStr | None = None,
        dimensions: int | None = None,
        batch: int = 64,
        timeout_seconds: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        known_dimension: int | None = None,
    ) -> None:
        self._endpoint = url.rstrip("/") + "/embeddings"
        self._where = _shown(self._endpoint)
        self.model = model
        self._asked = dimensions
        # 0 until the first answer says; `known_dimension` (not sent): the one a collection
        # built with this model records.
        self.dimension = dimensions or known_dimension or 0
        #: `openai:<model>:<dimensions>`: what the collection records and the card shows.
        self.name = self._identity()
        self._batch = batch
        self._timeout = timeout_seconds
        self._clock = clock
        self._key = None if api_key is None else api_key.get_secret_value()
        headers = {} if self._key is None else {"Authorization": f"Bearer {self._key}"}
        # No retries of httpx's own (ours are counted here) and no environment proxies: a
        # service on this host or network is the usual provider.
        self._client = httpx.Client(headers=headers, trust_env=False)
        self._lock = threading.Lock()
        self._failing = False
        self._next_try = 0.0

    @classmethod
    def open(
        cls,
        url: str,
        model: str,
        *,
        api_key: SecretStr | None = None,
        dimensions: int | None = None,
        batch: int = 64,
        timeout_seconds: float = 10.0,
        known_dimension: int | None = None,
    ) -> ProviderEmbedder:
        """The embedder, its dimension known: configured, else `known_dimension` (what the
        collection records for this model), else learnt now from one call.

        Raises EmbeddingModelError naming the provider and what was wrong when no
        dimension is configured or known and the provider cannot say it.
        """
        embedder = cls(
            url,
            model,
            api_key=api_key,
            dimensions=dimensions,
            batch=batch,
            timeout_seconds=timeout_seconds,
            known_dimension=known_dimension,
        )
        if embedder.dimension == 0:
            try:
                embedder.embed_query(PROBE_TEXT)
            except EmbeddingsUnavailable as exc:
                embedder.close()
                raise EmbeddingModelError(
                    f"the dimension of embedding model {model!r} could not be learnt: {exc}; "
                    f"set CSTP_EMBEDDING_DIMENSIONS to start without asking the provider"
                ) from None
        return embedder

    def _identity(self) -> str:
        return f"openai:{self.model}:{self.dimension}"

    def __repr__(self) -> str:
        return f"ProviderEmbedder({self.name!r} at {self._where})"

    def available(self) -> bool:
        """False while the provider is taken as down: from a failed call until
        RETRY_SECONDS later, when the caller that asks takes the next try (the others go
        on skipping). Calls that need a vector ask the provider whatever this says."""
        with self._lock:
            if not self._failing:
                return True
            now = self._clock()
            if now < self._next_try:
                return False
            self._next_try = now + RETRY_SECONDS
            return True

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, `dimension` floats each; see the class for errors."""
        vectors: list[list[float]] = self.vectors(texts).tolist()
        return vectors

    def embed_query(self, text: str) -> list[float]:
        vector: list[float] = self.vectors([text])[0].tolist()
        return vector

    def query_groups(self, texts: Sequence[str]) -> Iterator[tuple[npt.NDArray[np.int64], Vectors]]:
        """Concurrent queries in shared requests (a2a.embeddings.batching): one group per
        request of at most `batch` texts, (positions in `texts`, their vectors). A text's
        vector does not depend on the request that carries it: the provider embeds each
        input alone (and batches requests on its side anyway)."""
        for start in range(0, len(texts), self._batch):
            part = texts[start : start + self._batch]
            yield np.arange(start, start + len(part), dtype=np.int64), self.vectors(part)

    def vectors(self, texts: Sequence[str]) -> Vectors:
        """float32 (len(texts), dimension), rows L2-normalised, in requests of at most
        `batch` texts, each with its own deadline; all or nothing."""
        parts = [
            self._request(list(texts[start : start + self._batch]))
            for start in range(0, len(texts), self._batch)
        ]
        if not parts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def _request(self, texts: list[str]) -> Vectors:
        """One batch: posted, retried on 429 and 5xx within its deadline, checked."""
        try:
            vectors = self._checked(self._answer(texts), len(texts))
        except EmbeddingsUnavailable as exc:
            self._failed(exc)
            raise
        self._succeeded()
        return vectors

    def _answer(self, texts: list[str]) -> Any:
        """The decoded JSON of the provider's 2xx answer to `texts`."""
        body: dict[str, Any] = {"model": self.model, "input": texts}
        if self._asked is not None:
            body["dimensions"] = self._asked
        deadline = self._clock() + self._timeout
        for attempt in range(ATTEMPTS):
            response = self._post(body, deadline)
            status = response.status_code
            retryable = status == 429 or status >= 500
            if not retryable:
                break
            wait = _retry_after(response, BACKOFF_SECONDS * 2**attempt)
            if attempt == ATTEMPTS - 1 or self._clock() + wait >= deadline:
                break
            time.sleep(wait)
        if status in (401, 403):
            # Never the provider's text: it may quote part of the key.
            raise self._unavailable(
                f"refused the API key (HTTP {status}): check CSTP_EMBEDDING_API_KEY"
            )
        if status == 429 or status >= 500:
            raise self._unavailable(f"answered HTTP {status} to {ATTEMPTS} tries")
        if status >= 300:
            raise self._unavailable(f"answered HTTP {status}{self._said(response)}")
        kind = response.headers.get("content-type", "").partition(";")[0].strip() or "no type"
        try:
            return response.json()
        except ValueError:
            raise self._unavailable(f"answered {kind}, not JSON") from None

    def _post(self, body: dict[str, Any], deadline: float) -> httpx.Response:
        left = deadline - self._clock()
        if left <= 0:
            raise self._unavailable(f"did not answer within {self._timeout:g} s")
        try:
            return self._client.post(self._endpoint, json=body, timeout=left)
        except httpx.TimeoutException:
            raise self._unavailable(f"did not answer within {self._timeout:g} s") from None
        except httpx.ConnectError:
            raise self._unavailable("could not be reached (connection refused)") from None
        except httpx.HTTPError as exc:
            raise self._unavailable(f"broke off the answer ({type(exc).__name__})") from None

    def _checked(self, answer: Any, count: int) -> Vectors:
        """`answer`'s vectors in input order, L2-normalised; EmbeddingsUnavailable unless
        it has one per input, indexes 0..count-1 once each, one dimension (the configured
        or first-seen one) and finite, non-zero numbers."""
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
            raise self._unavailable("answered JSON without a `data` list of objects")
        if len(data) != count:
            raise self._unavailable(f"answered {len(data)} vectors for {count} inputs")
        indexes = [d.get("index") for d in data]
        if sorted(i for i in indexes if type(i) is int) != list(range(count)):
            raise self._unavailable(f"answered indexes other than 0..{count - 1} once each")
        rows = [data[n].get("embedding") for n in np.argsort(indexes)]
        if not all(isinstance(r, list) and r and _numbers(r) for r in rows):
            raise self._unavailable("answered embeddings that are not lists of numbers")
        lengths = sorted({len(r) for r in rows})
        expected = self.dimension or lengths[0]
        if lengths != [expected]:
            found = ", ".join(map(str, lengths))
            raise self._unavailable(f"answered vectors of {found} dimensions, expected {expected}")
        vectors = np.asarray(rows, dtype=np.float64)
        if not np.isfinite(vectors).all():
            raise self._unavailable("answered a vector with a non-finite number (NaN or infinity)")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        if not (norms > 0).all():
            raise self._unavailable("answered a zero vector")
        if self.dimension == 0:
            self.dimension = expected
            self.name = self._identity()
        unit: Vectors = (vectors / norms).astype(np.float32)
        return unit

    def _unavailable(self, what: str) -> EmbeddingsUnavailable:
        return EmbeddingsUnavailable(f"embedding provider {self._where} {what}")

    def _said(self, response: httpx.Response) -> str:
        """`: <the provider's own message>`, short, when its answer has one."""
        try:
            error = response.json().get("error")
        except (ValueError, AttributeError):
            return ""
        message = error.get("message") if isinstance(error, dict) else error
        if not isinstance(message, str) or not message.strip():
            return ""
        if self._key:
            message = message.replace(self._key, "***")
        return f": {message.strip()[:MESSAGE_CHARS]}"

    def _failed(self, exc: EmbeddingsUnavailable) -> None:
        with self._lock:
            was, self._failing = self._failing, True
            self._next_try = self._clock() + RETRY_SECONDS
        if not was:
            log.warning("%s; calls that need a new vector get -32003 until it answers", exc)
        else:  # once a spell at WARNING: a provider down under load fails every call
            log.debug("%s", exc)

    def _succeeded(self) -> None:
        with self._lock:
            was, self._failing = self._failing, False
        if was:
            log.warning("embedding provider %s answers again", self._where)


def _retry_after(response: httpx.Response, default: float) -> float:
    """Seconds to wait before retrying `response`: its Retry-After in seconds, else `default`."""
    try:
        return max(0.0, float(response.headers.get("retry-after", default)))
    except ValueError:
        return default


def _numbers(row: list[Any]) -> bool:
    """Whether every item of `row` is a JSON number (NaN and infinity among them: the
    finiteness check names those)."""
    return all(type(x) is float or type(x) is int for x in row)


def _shown(url: str) -> str:
    """`url` as messages show it: scheme, host, port and path, never credentials or a query."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"
