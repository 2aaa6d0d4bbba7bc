"""JSON-RPC 2.0 messages: parsing, the request envelope, response objects (jsonrpc.org spec)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Final

import orjson
from pydantic import BaseModel

from a2a import errors
from a2a.errors import InvalidRequest, ParseError

VERSION: Final = "2.0"

# Standard codes (JSON-RPC 2.0 section 5.1) and CSTP's own (F002 section Errors), each
# written once, on its exception class (a2a.errors).
PARSE_ERROR: Final = errors.ParseError.code
INVALID_REQUEST: Final = errors.InvalidRequest.code
METHOD_NOT_FOUND: Final = errors.MethodNotFound.code
INVALID_PARAMS: Final = errors.InvalidParams.code
INTERNAL_ERROR: Final = -32603
UNAUTHORIZED: Final = errors.Unauthorized.code
RATE_LIMITED: Final = errors.RateLimited.code
STORE_UNAVAILABLE: Final = errors.StoreUnavailable.code
FORBIDDEN: Final = errors.Forbidden.code
SATURATED: Final = errors.Saturated.code

Id = str | int | float | None
_ABSENT: Final = object()


@dataclass(frozen=True, slots=True)
class Request:
    """A valid request object. A notification (no `id` member) is owed no response."""

    method: str
    params: dict[str, Any] | list[Any] | None
    id: Id
    is_notification: bool


def parse_json(body: bytes, max_depth: int) -> Any:
    """The JSON value in `body` (UTF-8, RFC 8259).

    Raises ParseError for invalid UTF-8, invalid JSON (`NaN`, `Infinity`, `-Infinity`, a
    number too large for a double, a lone surrogate in a string included), or nesting deeper
    than `max_depth` arrays/objects (a guard against stack exhaustion; CONTRACT.md default 64).
    orjson reads the body (it is strict and about 3x faster than `json` on a 1 MiB body, which
    matters on the event loop); `json` reads what orjson refuses, to be the authority on the
    error, and a body whose `id` orjson made a float beyond 2**63: orjson turns integers
    beyond 64 bits into floats, and an id must be echoed exactly as sent.
    """
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        value = _parse_with_json(body)
    else:
        if _huge_float_id(value):
            value = _parse_with_json(body)
    # Each level opens with a `[` or `{` byte, so a body with no more of them than
    # `max_depth` (every call of the protocol) cannot be too deep: two C counts, no walk.
    if body.count(b"[") + body.count(b"{") <= max_depth:
        return value
    if nesting_depth(value, max_depth) > max_depth:
        raise ParseError(f"JSON nested deeper than {max_depth} levels")
    return value


def _huge_float_id(value: Any) -> bool:
    for item in value if isinstance(value, list) else (value,):
        found = item.get("id") if isinstance(item, dict) else None
        if isinstance(found, float) and abs(found) >= 2.0**63:
            return True
    return False


def _parse_with_json(body: bytes) -> Any:
    try:
        value = json.loads(
            body.decode("utf-8"), parse_constant=_reject_constant, parse_float=_finite_float
        )
    except UnicodeDecodeError:
        raise ParseError("body is not valid UTF-8") from None
    except (ValueError, RecursionError):
        raise ParseError("body is not valid JSON") from None
    _check_strings(value)
    return value


def _reject_constant(name: str) -> Any:
    # Python's json reads NaN, Infinity and -Infinity; RFC 8259 section 6 does not.
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} does not fit a double")
    return number


def nesting_depth(value: Any, stop_at: int | None = None) -> int:
    """Levels of arrays/objects in a parsed JSON value (a scalar is 0, `[]` is 1).

    Only containers are walked; with `stop_at`, the walk ends as soon as the depth is past it.
    """
    if type(value) not in _CONTAINERS:
        return 0
    depth, level = 0, [(value, 1)]
    while level:
        item, d = level.pop()
        depth = max(depth, d)
        if stop_at is not None and depth > stop_at:
            return depth
        children = item.values() if isinstance(item, dict) else item
        # The types first, at C speed: a 60,000-key object of scalars is one pass of map().
        if not _CONTAINERS.isdisjoint(map(type, children)):
            level.extend((child, d + 1) for child in children if type(child) in _CONTAINERS)
    return depth


_CONTAINERS = frozenset({dict, list})


def _check_strings(value: Any) -> None:
    """Raises ParseError for a string or key holding a lone surrogate (`"\\ud800"`): valid
    JSON syntax to `json`, but not Unicode text, and could be neither stored nor echoed."""
    level = [value]
    while level:
        item = level.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                _check_text(key)
                level.append(child)
        elif isinstance(item, list):
            level.extend(item)
        elif isinstance(item, str):
            _check_text(item)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ParseError("JSON string holds a lone surrogate (not Unicode text)") from None


def read_request(obj: Any) -> Request:
    """The Request in one batch element or body (JSON-RPC 2.0 section 4).

    Raises InvalidRequest naming the broken member.
    """
    if not isinstance(obj, dict):
        raise InvalidRequest("a request must be a JSON object")
    raw_id = obj.get("id", _ABSENT)
    id_ok = raw_id is _ABSENT or _valid_id(raw_id)
    echo: Id = raw_id if id_ok and raw_id is not _ABSENT else None
    if not id_ok:
        raise InvalidRequest("id must be a string, a number or null")
    if obj.get("jsonrpc") != VERSION:
        raise InvalidRequest('jsonrpc must be exactly "2.0"', echo)
    method = obj.get("method")
    if not isinstance(method, str):
        raise InvalidRequest("method must be a string", echo)
    params = obj.get("params", None)
    if "params" in obj and not isinstance(params, dict | list):
        raise InvalidRequest("params must be an object or an array", echo)
    return Request(method=method, params=params, id=echo, is_notification=raw_id is _ABSENT)


def _valid_id(value: Any) -> bool:
    if value is None or isinstance(value, str):
        return True
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value)


def to_wire(result: Any) -> Any:
    """The wire form of a method's result, made here once for every door: a pydantic model
    as its JSON-ready dump by alias (camelCase; the fields its model leaves off while None
    left off, a2a.results), `peers`, `merge`, `partial` and `stale` last; anything else
    (RawJson, a JSON-ready value) as it is."""
    if not isinstance(result, BaseModel):
        return result
    wire = result.model_dump(by_alias=True, mode="json")
    # After the result's own fields: a federated call's marks, then `stale` (as since stale
    # reads began).
    for key in _LAST:
        if key in wire:
            wire[key] = wire.pop(key)
    return wire


#: The members a result's wire ends with, in this order (a2a.results: FederatedResult, Result).
_LAST = ("peers", "merge", "partial", "stale")


def success(id: Id, result: Any) -> dict[str, Any]:
    """A response object carrying `result`."""
    return {"jsonrpc": VERSION, "id": id, "result": result}


def failure(id: Id, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A response object carrying an error object; `data` left out when None."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": VERSION, "id": id, "error": error}


@dataclass(frozen=True, slots=True)
class RawJson:
    """A result already serialised: `value` for in-process readers, `text` its JSON text.

    A document answered many times (rpc.discover) is encoded once and spliced into each
    response instead of being serialised per call.
    """

    value: Any
    text: str

    @classmethod
    def of(cls, value: Any) -> RawJson:
        """`value` with its compact JSON text."""
        return cls(value, json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def encode(body: dict[str, Any] | list[dict[str, Any]]) -> bytes:
    """A response object or batch as UTF-8 JSON; RawJson results are spliced in as they are."""
    if isinstance(body, list):
        return b"[" + b",".join(encode(item) for item in body) + b"]"
    result = body.get("result")
    if not isinstance(result, RawJson):
        return _dumps(body)
    head = _dumps({k: v for k, v in body.items() if k != "result"})
    return head[:-1] + b',"result":' + result.text.encode("utf-8") + b"}"


def _dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON of `value`.

    orjson (about 10x faster than `json` on a 3 KB response); `json` for what orjson
    refuses (an integer beyond 64 bits, a non-string key, nesting past 255 levels). NaN and
    the infinities, which JSON has no form for, are written as `null` by orjson and refused
    by `json` (ValueError). Raises TypeError for a value JSON has no form for.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY)
    except TypeError:
        return _JSON.encode(value).encode()


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
