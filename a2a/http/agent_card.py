"""The A2A Agent Card served at /.well-known/agent-card.json."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from a2a import __version__
from a2a.rpc.methods import Method


def agent_card(
    base_url: str, agent_id: str, methods: Mapping[str, Method], auth_on: bool
) -> dict[str, Any]:
    """An A2A Agent Card (protocol 0.3) for the JSON-RPC endpoint at `{base_url}/cstp`.

    One skill per method of `methods`, in table order, with the method's example requests.
    `securitySchemes` always names the bearer scheme the service understands; `security`
    (the requirement) is present only when auth is on, so a client can tell whether it must
    send a token.
    """
    card: dict[str, Any] = {
        "protocolVersion": "0.3.0",
        "name": f"cstp decision memory ({agent_id})",
        "description": (
            "Searches this agent's recorded decisions by meaning and by structured filters "
            "(category, confidence, date range, stakes, status) over JSON-RPC 2.0, and "
            "answers questions about its own use from its operator guide. The same methods "
            f"are MCP tools at {base_url}/mcp."
        ),
        "version": __version__,
        "url": f"{base_url}/cstp",
        "preferredTransport": "JSONRPC",
        "capabilities": {"streaming": False, "pushNotifications": False},
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "securitySchemes": {
            "bearer": {
                "type": "http",
                "scheme": "bearer",
                "description": "Authorization: Bearer <token>; the token names the agent.",
            }
        },
        "skills": [_skill(method) for method in methods.values()],
    }
    if auth_on:
        card["security"] = [{"bearer": []}]
    return card


def _skill(method: Method) -> dict[str, Any]:
    namespace, _, verb = method.name.partition(".")
    examples = method.examples or (_minimal_params(method),)
    return {
        "id": method.name,
        "name": re.sub(r"(?<!^)(?=[A-Z])", " ", verb).capitalize(),
        "description": method.summary,
        "tags": [namespace, "json-rpc"],
        "examples": [
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": method.name, "params": params})
            for params in examples
        ],
    }


def _minimal_params(method: Method) -> dict[str, Any]:
    """Required string params filled with a placeholder: an example for a method without one."""
    schema = method.params_model.model_json_schema(by_alias=True)
    return {name: "..." for name in schema.get("required", [])}
