"""One JSON-RPC call to one peer over HTTP, trusting nothing of what comes back.

A peer is another cstp service, but it is not trusted (CONTRACT.md, Federation): its
answer is read up to MAX_ANSWER_BYTES as sent (never decompressed: a few hundred bytes of
nested gzip inflate to gigabytes in one call, so we ask for `identity` and refuse any other
Content-Encoding), parsed strictly (orjson: no NaN, no Infinity), and must be a JSON-RPC
2.0 response to our id; its `result` is then validated against the method's result model
by the caller (a2a.federation.peers: also no deeper than MAX_DEPTH, without our token).
Every way it can go wrong is a PeerFailure with a JSON-RPC code and a short message of
ours: the peer's own text, our token and the URL never appear in it, so it may go into an
answer or a log line.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from a2a.errors import PeerFailure
from a2a.federation.config import PeerConfig

#: The largest answer read from a peer (bytes); a bigger one fails the peer.
MAX_ANSWER_BYTES = 1_048_576
#: The header that marks a call as coming from a peer: such a call never fans out again
#: (CONTRACT.md, Federation: one hop).
FEDERATED_HEADER = "CSTP-Federated"
#: The code of a peer that did not answer usably (down, timeout, HTTP error, garbage).
UNAVAILABLE = -32003
#: The path of a cstp service's agent card (A2A 1.0).
CARD_PATH = "/.well-known/agent-card.json"
#: The largest agent card read (bytes).
MAX_CARD_BYTES = 262_144
#: What every request to a peer asks for: its bytes as they are (a compressed answer is
#: refused, `_capped`).
_IDENTITY = {"Accept-Encoding": "identity"}


async def call_peer(
    http: httpx.AsyncClient, peer: PeerConfig, method: str, params: dict[str, Any]
) -> Any:
    """The `result` of `method` called with `params` on `peer` (its endpoint, its token,
    the federated header). The caller bounds the time (asyncio.timeout).

    Raises PeerFailure: unreachable, an HTTP status other than 200, a body over
    MAX_ANSWER_BYTES, not JSON, not a response to this call, or the peer's JSON-RPC error
    (its code, with data).
    """
    headers = {FEDERATED_HEADER: "1", "Content-Type": "application/json", **_IDENTITY}
    if peer.token is not None:
        headers["Authorization"] = f"Bearer {peer.token.get_secret_value()}"
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    status, raw = await _post(http, peer.endpoint, headers, body, MAX_ANSWER_BYTES)
    if status == 401:
        raise PeerFailure(UNAVAILABLE, "the peer refused this service's token (HTTP 401)")
    if status != 200:
        raise PeerFailure(UNAVAILABLE, f"the peer answered HTTP {status}")
    answer = _json(raw)
    if not isinstance(answer, dict) or answer.get("jsonrpc") != "2.0" or answer.get("id") != 1:
        raise PeerFailure(UNAVAILABLE, "the peer's answer is not a JSON-RPC response to the call")
    if "error" in answer:
        error = answer["error"]
        code = error.get("code") if isinstance(error, dict) else None
        if not isinstance(code, int) or isinstance(code, bool):
            raise PeerFailure(UNAVAILABLE, "the peer answered an error object without a code")
        return _raise_error(code, error.get("data"))
    if "result" not in answer:
        raise PeerFailure(UNAVAILABLE, "the peer's answer has neither result nor error")
    return answer["result"]


async def read_card(http: httpx.AsyncClient, peer: PeerConfig) -> Any:
    """The JSON of `peer`'s agent card. Raises PeerFailure as `call_peer` does."""
    status, raw = await _get(http, f"{peer.url}{CARD_PATH}", MAX_CARD_BYTES)
    if status != 200:
        raise PeerFailure(UNAVAILABLE, f"the peer's agent card answered HTTP {status}")
    return _json(raw)


def _raise_error(code: int, data: Any) -> Any:
    raise PeerFailure(code, f"the peer answered error {code}", data)


async def _post(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], body: bytes, cap: int
) -> tuple[int, bytes]:
    try:
        async with http.stream("POST", url, headers=headers, content=body) as response:
            return response.status_code, await _capped(response, cap)
    except httpx.HTTPError as exc:
        raise PeerFailure(UNAVAILABLE, _unreachable(exc)) from None


async def _get(http: httpx.AsyncClient, url: str, cap: int) -> tuple[int, bytes]:
    try:
        async with http.stream("GET", url, headers=_IDENTITY) as response:
            return response.status_code, await _capped(response, cap)
    except httpx.HTTPError as exc:
        raise PeerFailure(UNAVAILABLE, _unreachable(exc)) from None


async def _capped(response: httpx.Response, cap: int) -> bytes:
    """The body of `response` as sent, refused past `cap` bytes (by its Content-Length, or
    as it arrives) without reading further, and refused when compressed (we asked for
    `identity`: decoding it would inflate a small body past any cap before it is counted)."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise PeerFailure(UNAVAILABLE, "the peer's answer is compressed, which was not asked for")
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise PeerFailure(UNAVAILABLE, f"the peer's answer is over {cap} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_raw():
        size += len(chunk)
        if size > cap:
            raise PeerFailure(UNAVAILABLE, f"the peer's answer is over {cap} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _json(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise PeerFailure(UNAVAILABLE, "the peer's answer is not JSON") from None


def _unreachable(exc: httpx.HTTPError) -> str:
    """A short reason for a transport failure: its kind, never its text (which may hold
    the URL)."""
    if isinstance(exc, httpx.TimeoutException):
        return "the peer did not answer in time"
    if isinstance(exc, httpx.ConnectError):
        return "the peer cannot be reached (connection failed)"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "the peer broke the HTTP exchange"
    return f"the peer cannot be reached ({type(exc).__name__})"
