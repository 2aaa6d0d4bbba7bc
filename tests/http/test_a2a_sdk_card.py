"""The agent card read by the official `a2a-sdk` card resolver, in a virtualenv of its own.

The SDK's import name is `a2a`, like this package's, so it runs in a separate interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from a2a.embeddings import Embedder
from a2a.settings import load_settings
from tests.http.live import live_server

VENV = Path(tempfile.gettempdir()) / "cstp-a2a-sdk-venv"
SDK = "a2a-sdk>=1.0,<2"

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
    """The interpreter of a virtualenv holding a2a-sdk (built once, kept under /tmp)."""
    python = VENV / "bin" / "python"
    if not (VENV / "ok").exists():
        try:
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, timeout=120)
            subprocess.run(
                [str(python), "-m", "pip", "install", "-q", SDK, "httpx"],
                check=True,
                timeout=600,
                capture_output=True,
            )
        except (subprocess.SubprocessError, OSError) as exc:
            pytest.skip(f"pip could not install {SDK} into {VENV}: {exc}")
        (VENV / "ok").touch()
    return python


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
