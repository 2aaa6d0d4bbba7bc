"""Building JSON-RPC requests and reading responses, shared by the sync and async clients."""

from __future__ import annotations

import itertools
from typing import Any

import httpx

from a2a.client.errors import TransportError, UnauthorizedError, error_from_object

#: Default service address (`cstp serve` defaults).
DEFAULT_URL = "http://127.0.0.1:8000"


class RequestIds:
    """Increasing integer request ids, one per call."""

    def __init__(self) -> None:
        self._next = itertools.count(1)

    def next(self) -> int:
        """The next id."""
        return next(self._next)


def endpoint(url: str) -> str:
    """The JSON-RPC endpoint for a service URL: `http://host:8000` -> `http://host:8000/cstp`."""
    url = url.rstrip("/")
    try:
        httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise TransportError(f"{url}: not a URL ({exc})") from None
    return url if url.endswith("/cstp") else f"{url}/cstp"


def headers(token: str | None) -> dict[str, str]:
    """Request headers, with `Authorization: Bearer <token>` when a token is given."""
    result = {"Content-Type": "application/json", "Accept": "application/json"}
    if token and not (token.isascii() and token.isprintable()):
        raise TransportError("the token must be printable ASCII (it travels in an HTTP header)")
    if token:
        result["Authorization"] = f"Bearer {token}"
    return result


def request_body(method: str, params: dict[str, Any] | None, id: int) -> dict[str, Any]:
    """One JSON-RPC 2.0 request object with params by name."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        body["params"] = params
    return body


def read_result(response: httpx.Response) -> Any:
    """The `result` of a single-call response.

    Raises UnauthorizedError for HTTP 401, the code's CSTPError subclass for an error
    object (413 included), TransportError for anything that is not a JSON-RPC response.
    """
    if response.status_code == 401:
        raise UnauthorizedError("Unauthorized", None)
    try:
        payload = response.json()
    except ValueError:
        raise TransportError(f"HTTP {response.status_code}: response is not JSON") from None
    if not isinstance(payload, dict):
        raise TransportError(f"HTTP {response.status_code}: not a JSON-RPC response object")
    if "error" in payload:
        raise error_from_object(payload["error"])
    if "result" not in payload:
        raise TransportError(f"HTTP {response.status_code}: response has no result")
    return payload["result"]
