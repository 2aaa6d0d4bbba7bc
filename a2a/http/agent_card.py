"""The A2A Agent Card: the current shape (A2A 1.0) and, for older clients, the 0.3 shape.

The current shape follows the A2A 1.0 `AgentCard` message (a2a-sdk 1.x `a2a.types`):
`supportedInterfaces` (url, protocolBinding, protocolVersion), `securitySchemes` keyed by
scheme kind (`httpAuthSecurityScheme`), `securityRequirements` (`{"schemes": {name:
{"list": scopes}}}`). `/.well-known/agent.json` keeps the 0.3 shape (`url`,
`preferredTransport`, `protocolVersion`, `security`) for 0.3 clients.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from a2a import __version__
from a2a.results import EMBEDDING_MODEL_EXTENSION, EmbeddingModel
from a2a.rpc.methods import Method

Shape = Literal["1.0", "0.3"]
#: Which shape each well-known path serves.
CARD_SHAPES: dict[str, Shape] = {
    "/.well-known/agent-card.json": "1.0",
    "/.well-known/agent.json": "0.3",
}
A2A_PROTOCOL_VERSION = "1.0"
_BEARER_DESCRIPTION = "Authorization: Bearer <token>; the token names the agent and its scopes."


def card_bytes(
    shape: Shape,
    base_url: str,
    agent_id: str,
    methods: Mapping[str, Method],
    auth_on: bool,
    model: EmbeddingModel | None = None,
) -> bytes:
    """The card of `shape` as UTF-8 JSON, naming the embedding `model` when given."""
    build = agent_card if shape == "1.0" else agent_card_v03
    card = build(base_url, agent_id, methods, auth_on)
    if model is not None:
        card["capabilities"]["extensions"] = [model_extension(model)]
    return json.dumps(card, ensure_ascii=False).encode()


def model_extension(model: EmbeddingModel) -> dict[str, Any]:
    """The card's extension naming the service's embedding model (CONTRACT.md, Federation:
    `capabilities.extensions`, uri EMBEDDING_MODEL_EXTENSION, params name and dimensions),
    which peers compare to merge by distance."""
    return {
        "uri": EMBEDDING_MODEL_EXTENSION,
        "description": "The embedding model this service's cosine distances come from.",
        "required": False,
        "params": model.model_dump(),
    }


def agent_card(
    base_url: str, agent_id: str, methods: Mapping[str, Method], auth_on: bool
) -> dict[str, Any]:
    """An A2A 1.0 Agent Card for the JSON-RPC endpoint at `{base_url}/cstp`.

    One skill per method, in table order, with its example requests. `securitySchemes`
    always names the bearer scheme; `securityRequirements` (on the card, and the scope on
    each skill) are present only when auth is on, so a client can tell whether it must send
    a token and which scope a skill needs.
    """
    card: dict[str, Any] = {
        **_common(base_url, agent_id),
        "supportedInterfaces": [
            {
                "url": f"{base_url}/cstp",
                "protocolBinding": "JSONRPC",
                "protocolVersion": A2A_PROTOCOL_VERSION,
            }
        ],
        "securitySchemes": {
            "bearer": {
                "httpAuthSecurityScheme": {"scheme": "Bearer", "description": _BEARER_DESCRIPTION}
            }
        },
        "skills": [_skill(method, auth_on) for method in methods.values()],
    }
    if auth_on:
        card["securityRequirements"] = [{"schemes": {"bearer": {"list": []}}}]
    return card


def agent_card_v03(
    base_url: str, agent_id: str, methods: Mapping[str, Method], auth_on: bool
) -> dict[str, Any]:
    """The same card in the A2A 0.3.0 shape, for clients that predate 1.0."""
    card: dict[str, Any] = {
        "protocolVersion": "0.3.0",
        **_common(base_url, agent_id),
        "url": f"{base_url}/cstp",
        "preferredTransport": "JSONRPC",
        "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer", "description": _BEARER_DESCRIPTION}
        },
        "skills": [_skill(method, auth_on=False) for method in methods.values()],
    }
    if auth_on:
        card["security"] = [{"bearer": []}]
    return card


def _common(base_url: str, agent_id: str) -> dict[str, Any]:
    return {
        "name": f"cstp decision memory ({agent_id})",
        "description": (
            "Searches this agent's recorded decisions by meaning and by structured filters "
            "(category, confidence, date range, stakes, status) over JSON-RPC 2.0, and "
            "answers questions about its own use from its operator guide. The same methods "
            f"are MCP tools at {base_url}/mcp."
        ),
        "version": __version__,
        "capabilities": {"streaming": False, "pushNotifications": False},
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
    }


def _skill(method: Method, auth_on: bool) -> dict[str, Any]:
    namespace, _, verb = method.name.partition(".")
    examples = method.examples or (_minimal_params(method),)
    skill: dict[str, Any] = {
        "id": method.name,
        "name": re.sub(r"(?<!^)(?=[A-Z])", " ", verb).capitalize(),
        "description": method.summary,
        "tags": [namespace, "json-rpc", f"scope:{method.scope}"],
        "examples": [
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": method.name, "params": params})
            for params in examples
        ],
    }
    if auth_on:
        skill["securityRequirements"] = [{"schemes": {"bearer": {"list": [method.scope]}}}]
    return skill


def _minimal_params(method: Method) -> dict[str, Any]:
    """Required string params filled with a placeholder: an example for a method without one."""
    schema = method.params_schema()
    return {name: "..." for name in schema.get("required", [])}
