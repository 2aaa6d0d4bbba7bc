"""The edges the break-it pass found, each reproduced against real uvicorn over HTTP."""

from __future__ import annotations

import json
import logging
import socket
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a.embeddings import Embedder
from a2a.settings import Settings, load_settings
from tests.conftest import app_client, rpc_call
from tests.http.live import live_server
from tests.servers import free_port

DISCOVER = rpc_call("rpc.discover")


def edge_settings(tmp_path: Path, **overrides: Any) -> Settings:
    return load_settings(data_dir=tmp_path / "data", agent_id="test-agent", **overrides)


# Edge 3: NaN, Infinity and -Infinity are not JSON (RFC 8259 section 6).


@pytest.mark.parametrize(
    "body",
    [
        '{"jsonrpc": "2.0", "method": "rpc.discover", "id": NaN}',
        '{"jsonrpc": "2.0", "method": "rpc.discover", "id": Infinity}',
        '{"jsonrpc": "2.0", "method": "rpc.discover", "id": -Infinity}',
        '{"jsonrpc": "2.0", "method": "cstp.queryDecisions", "params": {"query": "x",'
        ' "filters": {"minConfidence": NaN}}, "id": 1}',
    ],
    ids=["id-nan", "id-infinity", "id-minus-infinity", "params-nan"],
)
def test_non_json_number_literals_are_parse_errors(
    tmp_path: Path, embedder: Embedder, body: str
) -> None:
    with live_server(edge_settings(tmp_path), embedder) as url:
        response = httpx.post(f"{url}/cstp", content=body)
    assert response.status_code == 200
    reply = response.json()
    assert reply["error"]["code"] == -32700 and reply["id"] is None


# Edge 4: X-Forwarded-For counts only from a trusted proxy.


def _forged_calls(url: str) -> list[int | None]:
    codes = []
    for n in range(10):
        headers = {"X-Forwarded-For": f"203.0.113.{n}"}
        reply = httpx.post(f"{url}/cstp", json=DISCOVER, headers=headers).json()
        codes.append(reply.get("error", {}).get("code"))
    return codes


def test_forged_x_forwarded_for_does_not_escape_the_limit_with_auth_off(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    settings = edge_settings(tmp_path, rate_limits="rpc.discover=5/minute")
    with caplog.at_level(logging.INFO, "a2a.access"), live_server(settings, embedder) as url:
        codes = _forged_calls(url)
    assert codes == [None] * 5 + [-32002] * 5
    agents = {r.__dict__["agent"] for r in caplog.records if r.name == "a2a.access"}
    assert agents == {"127.0.0.1"}  # the socket peer, never a forged address


def test_a_trusted_proxy_forwards_each_client_address(tmp_path: Path, embedder: Embedder) -> None:
    settings = edge_settings(
        tmp_path, rate_limits="rpc.discover=5/minute", trusted_proxies="127.0.0.1"
    )
    with live_server(settings, embedder) as url:
        codes = _forged_calls(url)
    assert codes == [None] * 10  # ten clients behind the proxy, one call each


# Edge 5: the card's URLs never come from the Host header.


@pytest.mark.parametrize(
    "path", ["/.well-known/agent-card.json", "/.well-known/agent.json"], ids=["1.0", "0.3"]
)
def test_agent_card_urls_ignore_the_host_header(
    tmp_path: Path, embedder: Embedder, path: str
) -> None:
    with live_server(edge_settings(tmp_path), embedder) as url:
        response = httpx.get(f"{url}{path}", headers={"Host": "evil.example:666"})
    assert response.status_code == 200
    assert "evil.example" not in response.text
    card = response.json()
    endpoint = card.get("url") or card["supportedInterfaces"][0]["url"]
    assert endpoint == f"{url}/cstp"


def test_agent_card_urls_come_from_the_public_url(tmp_path: Path, embedder: Embedder) -> None:
    settings = edge_settings(tmp_path, public_url="https://cstp.example.org/")
    with live_server(settings, embedder) as url:
        card = httpx.get(f"{url}/.well-known/agent-card.json", headers={"Host": "evil:1"}).json()
    assert card["supportedInterfaces"][0]["url"] == "https://cstp.example.org/cstp"


# Edge 6: /ready says a short word, never a URL, path or exception text.


def test_ready_reason_is_a_short_word_without_the_chroma_url(
    tmp_path: Path, embedder: Embedder
) -> None:
    port = free_port()  # nothing listens there
    settings = edge_settings(
        tmp_path, chroma_url=f"http://127.0.0.1:{port}", chroma_timeout_seconds=2
    )
    with live_server(settings, embedder) as url:
        response = httpx.get(f"{url}/ready", timeout=10)
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "reason": "chroma unreachable"}
    assert str(port) not in response.text


# Edge 7: a body that does not arrive in time is 408; after a 413 the connection is closed.


def _raw(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


def _read_until_closed(sock: socket.socket, seconds: float) -> tuple[bytes, bool]:
    """Everything the server sends, and whether it closed the connection within `seconds`."""
    sock.settimeout(seconds)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except TimeoutError:
        return data, False
    except ConnectionResetError:
        return data, True
    return data, True


@pytest.mark.parametrize(
    ("head", "sent"),
    [
        ("Content-Length: 100", b'{"jsonrpc"'),
        ("Transfer-Encoding: chunked", b"5\r\n[1,2,"),
    ],
    ids=["short-content-length", "trickling-chunks"],
)
def test_body_not_complete_in_time_is_408_and_the_connection_closed(
    tmp_path: Path, embedder: Embedder, head: str, sent: bytes
) -> None:
    settings = edge_settings(tmp_path, body_timeout_seconds=1)
    with live_server(settings, embedder) as url, _raw(url) as sock:
        request = (
            f"POST /cstp HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n{head}\r\n\r\n"
        )
        sock.sendall(request.encode() + sent)
        data, closed = _read_until_closed(sock, 10)
    assert data.startswith(b"HTTP/1.1 408")
    assert closed
    body = json.loads(data.partition(b"\r\n\r\n")[2])
    assert body["error"]["code"] == -32600 and body["id"] is None


@pytest.mark.parametrize("path", ["/cstp", "/mcp"])
def test_after_413_the_connection_is_closed_and_the_body_never_read(
    tmp_path: Path, embedder: Embedder, path: str
) -> None:
    settings = edge_settings(tmp_path, max_body_bytes=1024)
    declared = 100 * 1024 * 1024
    with live_server(settings, embedder) as url, _raw(url) as sock:
        request = (
            f"POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {declared}\r\n\r\n"
        )
        sock.sendall(request.encode() + b"[" * 4096)
        data, closed = _read_until_closed(sock, 10)
        started, refused = time.monotonic(), False
        try:
            for _ in range(2000):  # up to 128 MB more, if the server were still reading
                sock.sendall(b" " * 65536)
        except OSError:
            refused = True
    assert data.startswith(b"HTTP/1.1 413") and closed
    body = json.loads(data.partition(b"\r\n\r\n")[2])
    assert body["error"]["code"] == -32600 and body["error"]["data"] == {"maxBytes": 1024}
    assert refused, f"server kept reading for {time.monotonic() - started:.1f} s"


async def test_ready_says_warming_while_the_search_index_loads(
    tmp_path: Path, embedder: Embedder
) -> None:
    async with app_client(edge_settings(tmp_path), embedder) as client:
        state = client._transport.app.state.cstp  # type: ignore[attr-defined]
        state.warming = lambda: True
        warming = await client.get("/ready")
        state.warming = lambda: False
        ready = await client.get("/ready")
    assert (warming.status_code, warming.json()["reason"]) == (503, "warming")
    assert ready.status_code == 200
