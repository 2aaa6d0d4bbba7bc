"""Tokens, servers and a one-call helper for both doors, for the tenant tests."""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from tests.decisions import lifecycle_wire
from tests.decisions.lifecycle_wire import Served
from tests.decisions.wire import call
from tests.mcp_session import mcp_session

ACME, ACME_TOKEN = "acme-agent", "acme-token-0123456789"
GLOBEX, GLOBEX_TOKEN = "globex-agent", "globex-token-0123456789"
ORG, ORG_TOKEN = "org-reader", "org-token-0123456789"
ROOT, ROOT_TOKEN = "root", "root-token-0123456789"
LEGACY, LEGACY_TOKEN = "legacy", "legacy-token-0123456789"
TOKENS = ",".join(
    [
        f"{ACME}:{ACME_TOKEN}:read+write:acme",
        f"{GLOBEX}:{GLOBEX_TOKEN}:read+write:globex",
        f"{ORG}:{ORG_TOKEN}:read:acme|globex",
        f"{ROOT}:{ROOT_TOKEN}:admin:*",
        f"{LEGACY}:{LEGACY_TOKEN}:read+write",
    ]
)


def served(folder: Path, store: str, **extra: str) -> AbstractContextManager[Served]:
    """`cstp serve` with the tenant tokens on a fresh embedded store or `chroma run`."""
    return lifecycle_wire.served(folder, store, TOKENS, **extra)


def outcome(answer: dict[str, Any]) -> dict[str, Any]:
    """A /cstp answer as {"result": ...} or {"error": {"code", "data"}} (message left out:
    the MCP door words it as the tool's text)."""
    if "error" in answer:
        error = answer["error"]
        return {"error": {"code": error["code"], "data": error.get("data")}}
    return {"result": answer["result"]}


def over_cstp(url: str, token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One call on /cstp, as an `outcome`."""
    return outcome(call(url, method, params, token))


async def over_mcp(
    url: str, token: str, calls: list[tuple[str, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Each (tool, arguments) called in order in one MCP session, as `outcome`s."""
    found = []
    async with mcp_session(url, token) as session:
        for name, arguments in calls:
            answer = await session.call_tool(name, arguments)
            content = answer.structured_content
            if content is None:  # a tool whose result is not an object
                content = json.loads(answer.content[0].text)  # type: ignore[union-attr]
            if answer.is_error:
                found.append({"error": {"code": content["code"], "data": content.get("data")}})
            else:
                found.append({"result": content})
    return found
