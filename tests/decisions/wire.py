"""Helpers for decision tests over HTTP: served stores, tokens, one-call posts."""

from __future__ import annotations

import importlib.util
import itertools
from collections.abc import Iterator
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


def call(url: str, method: str, params: Any, token: str = WRITER_TOKEN) -> dict[str, Any]:
    """One JSON-RPC call; the response object (result or error)."""
    body = {"jsonrpc": "2.0", "id": next(_IDS), "method": method, "params": params}
    response = httpx.post(
        f"{url}/cstp", json=body, headers={"Authorization": f"Bearer {token}"}, timeout=60
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
