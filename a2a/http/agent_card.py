"""The A2A Agent Card served at /.well-known/agent-card.json."""

from __future__ import annotations

from typing import Any

from a2a import __version__


def agent_card(base_url: str, agent_id: str) -> dict[str, Any]:
    """An A2A Agent Card describing the JSON-RPC endpoint at `{base_url}/cstp`."""
    return {
        "protocolVersion": "0.3.0",
        "name": f"cstp decision memory ({agent_id})",
        "description": (
            "Searches this agent's recorded decisions by meaning and by structured filters "
            "(category, confidence, date range, stakes, status) over JSON-RPC 2.0."
        ),
        "version": __version__,
        "url": f"{base_url}/cstp",
        "preferredTransport": "JSONRPC",
        "capabilities": {"streaming": False, "pushNotifications": False},
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": [
            {
                "id": "cstp.queryDecisions",
                "name": "Query decisions",
                "description": "Decisions semantically close to a query, narrowed by filters.",
                "tags": ["decisions", "precedent", "semantic-search"],
                "examples": [
                    '{"jsonrpc": "2.0", "id": 1, "method": "cstp.queryDecisions", '
                    '"params": {"query": "database migration strategy", "limit": 5}}'
                ],
            }
        ],
    }
