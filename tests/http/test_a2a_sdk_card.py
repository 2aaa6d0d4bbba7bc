"""The agent card read by the official `a2a-sdk` card resolver, in a virtualenv of its own.

The SDK's import name is `a2a`, like this package's, so it runs in a separate interpreter:
`.venv-a2a-sdk/`, made by `make a2a-sdk-venv` (and by .ci/run, before the tests).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from a2a.embeddings import Embedder
from a2a.settings import load_settings
from tests.conftest import REPO
from tests.http.live import live_server

#: Made by `make a2a-sdk-venv`; its marker file is written once the install succeeded.
VENV = REPO / ".venv-a2a-sdk"

#: Run with `-I` (isolated: no PYTHONPATH, no current directory), so `a2a` is the SDK.
#: Resolves the card as a client would, then parses it strictly (no compatibility layer,
#: unknown fields rejected) as the SDK's own AgentCard message.
RESOLVE = """
import asyncio, json, sys
import httpx
from google.protobuf.json_format import ParseDict
from a2a.client.card_resolver import A2ACardResolver
from a2a.types.a2a_pb2 import AgentCard

async def main(url):
    async with httpx.AsyncClient() as client:
        card = await A2ACardResolver(client, url).get_agent_card()
        raw = (await client.get(url + "/.well-known/agent-card.json")).json()
    ParseDict(raw, AgentCard(), ignore_unknown_fields=False)
    print(json.dumps({
        "name": card.name,
        "interfaces": [[i.url, i.protocol_binding, i.protocol_version]
                       for i in card.supported_interfaces],
        "skills": [s.id for s in card.skills],
        "requirements": len(card.security_requirements),
    }))

asyncio.run(main(sys.argv[1]))
"""


@pytest.fixture(scope="session")
def sdk_python() -> Path:
    """The interpreter of the a2a-sdk virtualenv; a skip saying how to make it when absent
    (a failure under CI, whose .ci/run makes it first)."""
    if not (VENV / "bin" / ".installed").exists():
        missing = f"the a2a-sdk virtualenv {VENV} is absent: run `make a2a-sdk-venv`"
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    return VENV / "bin" / "python"


def test_the_official_sdk_resolves_and_strictly_parses_the_card(
    tmp_path: Path, embedder: Embedder, sdk_python: Path
) -> None:
    settings = load_settings(data_dir=tmp_path / "data", auth_tokens="planner:planner-token")
    with live_server(settings, embedder) as url:
        done = subprocess.run(
            [str(sdk_python), "-I", "-c", RESOLVE, url],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    card = json.loads(done.stdout)
    assert card["interfaces"] == [[f"{url}/cstp", "JSONRPC", "1.0"]]
    assert "cstp.queryDecisions" in card["skills"] and card["requirements"] == 1
