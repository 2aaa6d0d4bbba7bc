"""Helpers for decision tests over HTTP: served stores, tokens, one-call posts."""

from __future__ import annotations

import importlib.util
import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.servers import cstp_on_chroma_server, cstp_server

FAST_MODEL = "wordllama-l2-supercat-256"
WRITER, WRITER_TOKEN = "planner", "writer-token-0123456789"
READER, READER_TOKEN = "auditor", "reader-token-0123456789"
#: Scoped tokens (`agent:token:read+write`) arrive with the pipeline branch; until then a
#: token has every scope and the -32004 tests skip, saying so.
SCOPED_TOKENS = importlib.util.find_spec("a2a.auth.scopes") is not None
_WRITE_SCOPE = ":read+write" if SCOPED_TOKENS else ""
TOKENS = f"{WRITER}:{WRITER_TOKEN}{_WRITE_SCOPE},{READER}:{READER_TOKEN}"
_IDS = itertools.count(1)


def replica_env(data: Path, chroma_url: str, tokens: str = TOKENS, **env: str) -> dict[str, str]:
    """The settings of one `cstp serve` replica of several on one `chroma run` at
    `chroma_url`, its own folder `data`, `env` on top."""
    return {
        "CSTP_EMBEDDING_MODEL": FAST_MODEL,
        "CSTP_AUTH_TOKENS": tokens,
        "CSTP_DATA_DIR": str(data),
        "CSTP_CHROMA_URL": chroma_url,
        **env,
    }


@contextmanager
def served(folder: Path, store: str, **env: str) -> Iterator[str]:
    """`cstp serve` on a fresh embedded store or a fresh `chroma run` server; its base URL."""
    settings = {
        "CSTP_EMBEDDING_MODEL": FAST_MODEL,
        "CSTP_AUTH_TOKENS": TOKENS,
        "CSTP_DATA_DIR": str(folder / "data"),
        **env,
    }
    if store == "chroma-server":
        with cstp_on_chroma_server(folder, settings) as (url, _):
            yield url
    else:
        with cstp_server(settings) as url:
            yield url


def call(
    url: str, method: str, params: Any, token: str = WRITER_TOKEN, timeout: float = 60
) -> dict[str, Any]:
    """One JSON-RPC call; the response object (result or error). `timeout`: seconds before
    httpx gives up (a hang guard)."""
    body = {"jsonrpc": "2.0", "id": next(_IDS), "method": method, "params": params}
    # verify=False: plain HTTP on loopback needs no TLS context, which httpx would otherwise
    # build for each call by loading the CA bundle (about 18 ms of CPU).
    response = httpx.post(
        f"{url}/cstp",
        json=body,
        headers={"Authorization": f"Bearer {token}"},
        timeout=timeout,
        verify=False,
    )
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def result(url: str, method: str, params: Any, token: str = WRITER_TOKEN) -> Any:
    """The result of one call that must succeed."""
    answer = call(url, method, params, token)
    assert "result" in answer, answer
    return answer["result"]


def error_fields(answer: dict[str, Any]) -> list[str]:
    """The fields a -32602 answer names."""
    assert answer["error"]["code"] == -32602, answer
    return [e["field"] for e in answer["error"]["data"]["errors"]]


def record_at_once(
    urls: list[str], decision_of: Callable[[int], dict[str, Any]], connect_first: bool = False
) -> list[dict[str, Any]]:
    """recordDecision of `decision_of(n)` on server n of `urls`, all released at one barrier;
    the answers, in order. With `connect_first` each client is connected before the barrier."""
    return at_once(
        urls, "cstp.recordDecision", lambda n: {"decision": decision_of(n)}, connect_first
    )


def at_once(
    urls: list[str],
    method: str,
    params_of: Callable[[int], dict[str, Any]],
    connect_first: bool = False,
) -> list[dict[str, Any]]:
    """`method` with `params_of(n)` on server n of `urls` (the writer's token), all released
    at one barrier; the response objects, in order. With `connect_first` each client is
    connected before the barrier."""
    answers: list[dict[str, Any]] = [{} for _ in urls]
    start = threading.Barrier(len(urls))

    def send(n: int) -> None:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params_of(n)}
        headers = {"Authorization": f"Bearer {WRITER_TOKEN}"}
        with httpx.Client(headers=headers, timeout=60) as http:
            if connect_first:
                http.get(f"{urls[n]}/health")
            start.wait()
            answers[n] = http.post(f"{urls[n]}/cstp", json=body).json()

    threads = [threading.Thread(target=send, args=(n,)) for n in range(len(urls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers
