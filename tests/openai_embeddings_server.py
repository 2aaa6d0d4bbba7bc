"""A small embeddings service speaking the OpenAI API, for tests and bench/provider_bench.py.

`POST /v1/embeddings` with `{"model", "input": [...], "dimensions"?}` answers
`{"object": "list", "data": [{"object": "embedding", "index", "embedding"}], "model",
"usage"}` with the real vectors of a bundled model (MiniLM int8 by default), as OpenAI,
Ollama, vLLM and TEI answer it; `dimensions` cuts them (Matryoshka-style, as OpenAI's
text-embedding-3 models do). Faults on request (`fault`, one of FAULTS). Run alone:
`python -m tests.openai_embeddings_server --port 8101 [--key KEY] [--model NAME]`.
"""

from __future__ import annotations

import argparse
import json
import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from a2a.embeddings import Embedder

#: What `fault` may be: None serves every request well.
FAULTS = (
    "html",  # 200 with an HTML page, as a misconfigured proxy answers
    "401",  # the key refused, the message quoting part of it (as OpenAI's does)
    "429-once",  # one 429 with Retry-After, then the right answer
    "500",  # every request 500
    "wrong-dimension",  # vectors one number short
    "nan",  # the first vector's first number NaN
    "fewer",  # one vector fewer than inputs
    "shuffled",  # the right vectors, in reverse order with their own indexes
)
SERVED_MODEL = "minilm-served"


class EmbeddingsServer:
    """The app over `embedder`, answering for model `model`; with `key`, only requests
    bearing it. `requests` keeps each request's JSON body, `authorizations` each
    Authorization header (None when absent)."""

    def __init__(self, embedder: Embedder, model: str = SERVED_MODEL, key: str | None = None):
        self.fault: str | None = None
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []
        self._embedder = embedder
        self._model = model
        self._key = key
        self._lock = threading.Lock()
        self.app = Starlette(routes=[Route("/v1/embeddings", self._embeddings, methods=["POST"])])

    async def _embeddings(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            self.authorizations.append(request.headers.get("authorization"))
            fault = self.fault
            if fault == "429-once":
                self.fault = None
        if fault == "429-once":
            return _json({"error": {"message": "slow down"}}, 429, {"retry-after": "0"})
        if fault == "500":
            return _json({"error": {"message": "overloaded"}}, 500, {"retry-after": "0"})
        if fault == "html":
            return Response("<html><body>Welcome to nginx!</body></html>", media_type="text/html")
        given = request.headers.get("authorization")
        if fault == "401" or (self._key is not None and given != f"Bearer {self._key}"):
            shown = (given or "none")[-12:]
            message = f"Incorrect API key provided: {shown[:4]}****{shown[-4:]}"
            return _json({"error": {"message": message, "code": "invalid_api_key"}}, 401)
        if body.get("model") != self._model:
            return _json({"error": {"message": f"model {body.get('model')!r} not found"}}, 404)
        texts = body["input"]
        vectors = await run_in_threadpool(self._embedder.embed_documents, texts)
        size = body.get("dimensions")
        if size is not None:
            vectors = [_unit(v[:size]) for v in vectors]
        data = [{"object": "embedding", "index": n, "embedding": v} for n, v in enumerate(vectors)]
        if fault == "wrong-dimension":
            data[-1]["embedding"] = data[-1]["embedding"][:-1]
        elif fault == "nan":
            data[0]["embedding"][0] = math.nan
        elif fault == "fewer":
            data = data[:-1]
        elif fault == "shuffled":
            data.reverse()
        usage = {"prompt_tokens": 0, "total_tokens": 0}
        return _json({"object": "list", "data": data, "model": self._model, "usage": usage})


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    # allow_nan: the "nan" fault sends the bare NaN Python's json (and some servers) write.
    text = json.dumps(body, allow_nan=True, separators=(",", ":"))
    return Response(text, status, headers, media_type="application/json")


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


class Served:
    """`server` under uvicorn in a thread on one loopback port (`url`: its `/v1` base):
    `down()` stops it for a block (connections refused), then it serves again there."""

    def __init__(self, server: EmbeddingsServer, port: int) -> None:
        self.server = server
        self.port = port
        self.url = f"http://127.0.0.1:{port}/v1"
        self._uvicorn: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        config = uvicorn.Config(
            self.server.app, host="127.0.0.1", port=self.port, log_level="warning"
        )
        self._uvicorn = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._uvicorn.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._uvicorn.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the embeddings server did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        if self._uvicorn is not None and self._thread is not None:
            self._uvicorn.should_exit = True
            self._thread.join(timeout=10)
        self._uvicorn = self._thread = None

    @contextmanager
    def down(self) -> Iterator[None]:
        self.stop()
        try:
            yield
        finally:
            self.start()


@contextmanager
def serving(server: EmbeddingsServer, port: int) -> Iterator[Served]:
    """`server` served on `port` for the block."""
    served = Served(server, port)
    served.start()
    try:
        yield served
    finally:
        served.stop()


def main() -> None:
    from a2a.embeddings import DEFAULT_MODEL, load_embedder

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", default=SERVED_MODEL, help="the model name it answers for")
    parser.add_argument("--key", default=None, help="the API key it requires (none: any)")
    args = parser.parse_args()
    server = EmbeddingsServer(load_embedder(DEFAULT_MODEL), args.model, args.key)
    uvicorn.run(server.app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
