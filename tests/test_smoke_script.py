"""scripts/smoke.sh against one real `cstp serve`: passes, with or without jq; fails loudly."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow

SMOKE = REPO / "scripts" / "smoke.sh"
#: What the script runs besides the shell's builtins (jq left out on purpose).
TOOLS_WITHOUT_JQ = ("curl", "mktemp", "rm", "sed", "grep", "head", "wc", "tr", "sh")


@pytest.fixture
def server(examples_service: str) -> str:
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed; scripts/smoke.sh needs it (.ci/run installs it)")
    # The session's service over the example decisions (agent smoke, token smoke-token).
    return examples_service


def smoke(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path or os.environ["PATH"]}
    return subprocess.run(
        ["sh", str(SMOKE), *args], capture_output=True, text=True, timeout=300, env=env
    )


def check_lines(output: str) -> list[str]:
    return [line.split("(")[0].strip() for line in output.splitlines() if line.startswith("ok ")]


EVERY_CHECK = [
    "ok    health",
    "ok    query",
    "ok    filtered query",
    "ok    invalid params",
    "ok    unknown method",
    "ok    notification",
    "ok    batch",
    "ok    no token",
]


def test_every_check_passes_with_the_right_token(server: str) -> None:
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed; the jq-less path is tested below")
    result = smoke(server, "smoke-token")
    assert result.returncode == 0, result.stdout
    assert check_lines(result.stdout) == EVERY_CHECK


def test_every_check_passes_without_jq(server: str, tmp_path: Path) -> None:
    for tool in TOOLS_WITHOUT_JQ:
        found = shutil.which(tool)
        assert found is not None, tool
        (tmp_path / tool).symlink_to(found)
    result = smoke(server, "smoke-token", path=str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert check_lines(result.stdout) == EVERY_CHECK


def test_wrong_token_fails_the_run_with_one_line_per_failed_check(server: str) -> None:
    result = smoke(server, "not-the-token")
    assert result.returncode == 1
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAIL ")]
    assert len(failed) == 6  # every call that needs the token; health and 401 still pass


def test_no_token_against_a_server_that_wants_one_says_so(server: str) -> None:
    result = smoke(server)
    assert result.returncode == 1
    assert "FAIL  query: expected HTTP 200, got HTTP 401" in result.stdout
    assert "the server asks for a token (HTTP 401): pass one" in result.stderr
    assert "asks for a token" not in smoke(server, "not-the-token").stderr  # a token was given


def test_the_token_hint_comes_before_the_checks_that_fail_for_want_of_it(server: str) -> None:
    """Reported: against a server with auth, six checks failed before the hint."""
    result = subprocess.run(
        ["sh", str(SMOKE), server],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream, in the order the lines were written
        text=True,
        timeout=300,
    )
    lines = result.stdout.splitlines()
    hint = next(i for i, line in enumerate(lines) if "asks for a token" in line)
    first_failure = next(i for i, line in enumerate(lines) if line.startswith("FAIL "))
    assert hint < first_failure, result.stdout


def test_usage_error_exits_2() -> None:
    assert smoke().returncode == 2
