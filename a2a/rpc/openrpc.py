"""The OpenRPC document (rpc.discover), generated from the models the dispatcher validates with."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from a2a.rpc import protocol
from a2a.rpc.methods import Method

OPENRPC_VERSION = "1.3.2"
#: The result schema of rpc.discover: an OpenRPC document (https://spec.open-rpc.org).
OPENRPC_RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["openrpc", "info", "methods"],
    "properties": {
        "openrpc": {"type": "string"},
        "info": {"type": "object"},
        "servers": {"type": "array"},
        "methods": {"type": "array", "items": {"type": "object"}},
    },
}

#: Every error code a method can list, with its message and what its `data` holds
#: (JSON-RPC 2.0 section 5.1; CONTRACT.md section Errors specific to CSTP).
ERRORS: dict[int, tuple[str, dict[str, Any] | None]] = {
    protocol.INVALID_PARAMS: (
        "Invalid params",
        {
            "type": "object",
            "properties": {
                "errors": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"field": {"type": "string"}, "reason": {"type": "string"}},
                        "required": ["field", "reason"],
                    },
                }
            },
        },
    ),
    protocol.UNAUTHORIZED: ("Unauthorized", None),
    protocol.RATE_LIMITED: (
        "Rate limited",
        {
            "type": "object",
            "properties": {"retryAfter": {"type": "integer", "minimum": 1}},
            "required": ["retryAfter"],
        },
    ),
    protocol.STORE_UNAVAILABLE: (
        "ChromaDB unavailable",
        {
            "type": "object",
            "properties": {"retryable": {"type": "boolean"}},
            "required": ["retryable"],
        },
    ),
    protocol.FORBIDDEN: (
        "Forbidden",
        {
            "type": "object",
            "properties": {"requiredScope": {"type": "string", "enum": ["read", "write", "admin"]}},
            "required": ["requiredScope"],
        },
    ),
    protocol.SATURATED: (
        "Service saturated",
        {
            "type": "object",
            "properties": {
                "retryable": {"type": "boolean"},
                "retryAfter": {"type": "integer", "minimum": 1},
            },
            "required": ["retryable", "retryAfter"],
        },
    ),
    protocol.INTERNAL_ERROR: ("Internal error", None),
}


def openrpc_document(methods: Mapping[str, Method], version: str) -> dict[str, Any]:
    """OpenRPC 1.3 document describing every method in `methods`, `rpc.discover` included.

    Params by name, each with its JSON Schema inlined from the params model; the result
    schema inlined from the result model's schema; errors with code, message and `data`
    schema. Raises KeyError when a method lists an error code without an ERRORS entry.
    """
    return {
        "openrpc": OPENRPC_VERSION,
        "info": {
            "title": "cstp decision memory",
            "version": version,
            "description": (
                "JSON-RPC 2.0 over HTTP POST /cstp. Besides the errors each method lists, any"
                " call may get -32600, -32601 or -32603 (JSON-RPC 2.0 section 5.1)."
            ),
        },
        "servers": [{"name": "cstp", "url": "/cstp"}],
        "methods": [describe(m) for m in methods.values()],
    }


def describe(method: Method) -> dict[str, Any]:
    """The OpenRPC Method Object of one method."""
    schema = method.params_schema()
    required = set(schema.get("required", []))
    definitions = schema.get("$defs", {})
    params = [
        {
            "name": name,
            "required": name in required,
            "schema": _inline(definition, definitions),
        }
        for name, definition in schema.get("properties", {}).items()
    ]
    result_schema = method.result_schema or {}
    described: dict[str, Any] = {
        "name": method.name,
        "summary": method.summary,
        "paramStructure": "by-name",
        "params": params,
        "result": {
            "name": "result",
            "schema": _inline(
                {k: v for k, v in result_schema.items() if k != "$defs"},
                result_schema.get("$defs", {}),
            ),
        },
        "errors": [_error(code) for code in method.answerable_errors()],
    }
    if method.examples:
        described["examples"] = [
            {
                "name": f"example {n}",
                "params": [{"name": k, "value": v} for k, v in example.items()],
            }
            for n, example in enumerate(method.examples, start=1)
        ]
    return described


def _error(code: int) -> dict[str, Any]:
    message, data = ERRORS[code]
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return error


def _inline(schema: Any, definitions: Mapping[str, Any]) -> Any:
    """`schema` with `$ref`s to pydantic's `$defs` replaced by the definitions themselves."""
    if isinstance(schema, dict):
        ref = schema.get("$ref", "")
        if ref.startswith("#/$defs/"):
            return _inline(definitions[ref.removeprefix("#/$defs/")], definitions)
        return {key: _inline(value, definitions) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_inline(item, definitions) for item in schema]
    return schema
