"""Peer answers that pass the size cap and the result's schema but must still be refused
(CONTRACT.md, Federation: a peer is not trusted; it never becomes our -32603, never shows
a token, never costs unbounded memory), in process: a2a.federation.peers.Peers and
a2a.app.federated.Federation against a real HTTP server (uvicorn, in a thread) answering
each case on its own path.

- a compressed answer: 980 bytes of gzip inside gzip inflate to 512 MiB in one decode,
  before any cap counts them (httpx decodes what Content-Encoding names);
- a result nested past pydantic's serialisation depth (~255) inside the fields that take
  any JSON (a summary's `explain`, a record's `history` changes): it validates, then our
  answer cannot be serialised and the caller gets -32603;
- a result that echoes the token this service sent the peer.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from a2a.app.federated import Federation
from a2a.decisions.params import GetDecisionParams
from a2a.errors import PeerUnavailable
from a2a.federation.config import PeerConfig
from a2a.federation.peers import Peers
from a2a.query.results import QueryDecisionsResult
from a2a.rpc.methods import CallContext
from a2a.rpc.protocol import to_wire
from tests.federation.peer_servers import query_result, serving, summary

TOKEN = "hostile-answers-token-0123456789"
#: Past pydantic's serialisation depth (about 255 levels).
DEEP = 300


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def record(id: str, **fields: Any) -> dict[str, Any]:
    """A cstp.getDecision result, `fields` on top."""
    return {
        **{key: None for key in ("title", "category", "confidence", "stakes", "status")},
        **{key: None for key in ("outcome", "date", "source", "recordedAt", "context")},
        **{"decision": None, "lessons": None, "reviewedAt": None},
        "id": id,
        "reasons": [],
        "tags": [],
        **fields,
    }


def history(changes: Any) -> list[dict[str, Any]]:
    return [{"at": "2026-01-20T14:00:00Z", "by": None, "reason": "r", "changes": changes}]


def _rpc(result: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}).encode()


def _double_gzip(size: int) -> bytes:
    """`size` zero bytes, gzipped twice: a few hundred bytes on the wire."""
    return gzip.compress(gzip.compress(b"\0" * size, 9), 9)


#: What each case answers: (body, extra headers).
ANSWERS: dict[str, tuple[bytes, dict[str, str]]] = {
    "bomb": (_double_gzip(64 * 1_048_576), {"content-encoding": "gzip, gzip"}),
    "gzip": (gzip.compress(_rpc(query_result([summary("z1")]))), {"content-encoding": "gzip"}),
    "deep-explain": (_rpc(query_result([summary("e1", explain=nested(DEEP))])), {}),
    "deep-history": (_rpc(record("h1", history=history({"k": [nested(DEEP), 1]}))), {}),
    "echo": (_rpc(query_result([summary("t1", title=f"your token is {TOKEN}")])), {}),
    "echo-record": (_rpc(record("t2", lessons=TOKEN)), {}),
    "good": (_rpc(query_result([summary("g1", explain={"a": [1, {"b": 2}]})])), {}),
}


class Hostile:
    """Answers `/{case}/cstp` with ANSWERS[case]; the Accept-Encoding of each call, in
    order."""

    def __init__(self) -> None:
        self.accepted: list[str | None] = []
        self.app = Starlette(routes=[Route("/{case}/cstp", self._call, methods=["POST"])])

    async def _call(self, request: Request) -> Response:
        self.accepted.append(request.headers.get("accept-encoding"))
        body, headers = ANSWERS[request.path_params["case"]]
        return Response(body, media_type="application/json", headers=headers)


@pytest.fixture(scope="module")
def hostile() -> Any:
    peer = Hostile()
    with serving(peer.app) as url:
        yield peer, url


@pytest.fixture
async def peers(hostile: tuple[Hostile, str]) -> AsyncIterator[Peers]:
    _, url = hostile
    configs = [
        PeerConfig(name=case, url=f"{url}/{case}", token=SecretStr(TOKEN)) for case in ANSWERS
    ]
    async with httpx.AsyncClient() as http:
        yield Peers(configs, timeout=10.0, http=http)


async def status_of(peers: Peers, case: str) -> tuple[str, str | None]:
    [answer] = await peers.ask([case], "cstp.queryDecisions", {"query": "q"}, QueryDecisionsResult)
    return answer.status, None if answer.error is None else answer.error.message


async def test_a_compressed_answer_is_refused_unread(
    hostile: tuple[Hostile, str], peers: Peers
) -> None:
    compressed = "the peer's answer is compressed, which was not asked for"
    assert await status_of(peers, "bomb") == ("failed", compressed)
    assert await status_of(peers, "gzip") == ("failed", compressed)
    assert hostile[0].accepted[-2:] == ["identity", "identity"]


async def test_a_result_nested_too_deep_is_refused(peers: Peers) -> None:
    deep = "the peer's answer is not a valid result (nested deeper than 32 levels)"
    assert await status_of(peers, "deep-explain") == ("failed", deep)
    with pytest.raises(PeerUnavailable):
        await Federation(peers).get_decision(
            GetDecisionParams(id="h1", peer="deep-history"), CallContext("tester")
        )


async def test_a_result_echoing_our_token_is_refused(peers: Peers) -> None:
    echoed = (
        "the peer's answer is not a valid result (it carries this service's token for the peer)"
    )
    assert await status_of(peers, "echo") == ("failed", echoed)
    with pytest.raises(PeerUnavailable):
        await Federation(peers).get_decision(
            GetDecisionParams(id="t2", peer="echo-record"), CallContext("tester")
        )


async def test_a_good_answer_still_goes_through(peers: Peers) -> None:
    [answer] = await peers.ask(
        ["good"], "cstp.queryDecisions", {"query": "q"}, QueryDecisionsResult
    )
    assert answer.status == "successful"
    assert answer.result is not None
    wire = to_wire(answer.result)
    assert [(d["id"], d["explain"]) for d in wire["decisions"]] == [("g1", {"a": [1, {"b": 2}]})]
