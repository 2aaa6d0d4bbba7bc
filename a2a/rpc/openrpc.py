"""The OpenRPC document (rpc.discover), generated from the models the dispatcher validates with."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from a2a.rpc import protocol
from a2a.rpc.methods import Method

OPENRPC_VERSION = "1.3.2"

_ERRORS = {
    protocol.INVALID_PARAMS: "Invalid params",
    protocol.UNAUTHORIZED: "Unauthorized",
    protocol.RATE_LIMITED: "Rate limited",
    protocol.STORE_UNAVAILABLE: "ChromaDB unavailable",
}


def openrpc_document(methods: Mapping[str, Method], version: str) -> dict[str, Any]:
    """OpenRPC 1.3 document describing every method in `methods`, params by name."""
    return {
        "openrpc": OPENRPC_VERSION,
        "info": {"title": "cstp decision memory", "version": version},
        "servers": [{"name": "cstp", "url": "/cstp"}],
        "methods": [_describe(m) for m in methods.values() if not m.name.startswith("rpc.")],
    }


def _describe(method: Method) -> dict[str, Any]:
    schema = method.params_model.model_json_schema(by_alias=True)
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
    return {
        "name": method.name,
        "summary": method.summary,
        "paramStructure": "by-name",
        "params": params,
        "result": {"name": "result", "schema": method.result_schema or {}},
        "errors": [{"code": code, "message": _ERRORS[code]} for code in method.errors],
    }


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
