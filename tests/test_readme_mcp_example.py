"""The README's MCP Python example runs as written against a real `cstp serve`.

Reported: with auth off the example sent `Authorization: Bearer ` (an empty token), which the
HTTP client rejects. The snippet is taken from README.md, so the test follows the README.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.conftest import EXAMPLES_TOKENS, REPO
from tests.servers import free_port, start_cstp, stop

pytestmark = pytest.mark.slow

TOKEN = EXAMPLES_TOKENS["mcp"]


def mcp_example() -> str:
    """The README's Python block that calls /mcp."""
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), re.DOTALL)
    (block,) = [b for b in blocks if "streamable_http_client" in b]
    return block


def run_example(url: str, token: str | None) -> subprocess.CompletedProcess[str]:
    code = mcp_example()
    env = {k: v for k, v in os.environ.items() if k != "CSTP_TOKEN"}
    env["CSTP_URL"] = url  # as the README has the reader set it
    if token is not None:
        env["CSTP_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def servers(
    tmp_path_factory: pytest.TempPathFactory, examples_service: str
) -> Iterator[dict[str, str]]:
    """A service with auth off of its own and, with auth on, the session's one (agent mcp),
    both over the example decisions."""
    port = free_port()
    env = {
        "CSTP_DATA_DIR": str(tmp_path_factory.mktemp("auth-off")),
        # the model is not what the example shows: the fast one
        "CSTP_EMBEDDING_MODEL": "wordllama-l2-supercat-256",
    }
    process = start_cstp(port, env, "--index", str(REPO / "examples" / "decisions"))
    try:
        yield {"off": f"http://127.0.0.1:{port}", "on": examples_service}
    finally:
        stop(process)


def test_example_runs_with_auth_off_and_no_token(servers: dict[str, str]) -> None:
    result = run_example(servers["off"], token=None)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("[{"), result.stdout[:500]


def test_example_runs_with_auth_on_and_the_token(servers: dict[str, str]) -> None:
    result = run_example(servers["on"], token=TOKEN)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("[{"), result.stdout[:500]


def test_example_with_an_empty_token_sends_no_header(servers: dict[str, str]) -> None:
    # CSTP_TOKEN="" (exported but empty) is auth off too, not "Bearer ".
    result = run_example(servers["off"], token="")
    assert result.returncode == 0, result.stderr[-2000:]
