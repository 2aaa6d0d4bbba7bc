"""Debian's chromium driven by Playwright, and a `cstp serve` with the ADR corpus and examples.

Playwright's own browser download does not work here (and is never run): the tests launch
the system `/usr/bin/chromium`, which `.ci/run` installs with apt. They skip, saying why,
only when that binary is absent.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.client.peered import self_and_gone
from tests.conftest import ADR_CORPUS, REPO, copy_store, require_shared, rpc_call
from tests.servers import cstp, cstp_server, free_port

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
EXAMPLES = REPO / "examples" / "decisions"
#: The token of the agent the console tests paste.
TOKEN = "console-test-token-0123456789"


def require_chromium() -> None:
    """Skip, saying why, when the system chromium is not installed (`.ci/run` installs it)."""
    if not CHROMIUM.exists() and shutil.which("chromium") is None:
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium; .ci/run does)")


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless system chromium, as a Playwright Browser."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    executable = CHROMIUM if CHROMIUM.exists() else Path(str(shutil.which("chromium")))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(executable), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def corpus_server(
    data_dir: Path, adr_store: Path | None = None, *, peers: bool = False, **env: str
) -> Iterator[str]:
    """`cstp serve` with auth on (TOKEN) over the ADR corpus and the example decisions.

    With `adr_store` (the session's template, tests/conftest.py) the corpus comes indexed
    from a copy of it and only the examples are indexed here (that re-indexing the corpus
    changes nothing is tests/e2e/test_adr_corpus_over_http.py's); without, it is
    embedded here. With `peers`, its peers are itself and a dead port
    (tests/client/peered.py: SELF answers, GONE fails), for the console's peers choice.
    """
    require_shared()
    folders = [ADR_CORPUS, EXAMPLES]
    if adr_store is not None:
        copy_store(adr_store, data_dir)
        folders = [EXAMPLES]
    environment = {
        "CSTP_DATA_DIR": str(data_dir),
        "CSTP_AUTH_TOKENS": f"ops:{TOKEN}",
        "CSTP_AGENT_ID": "console-e2e",
        **env,
    }
    indexed = cstp("index", *map(str, folders), env=environment)
    assert indexed.returncode == 0, indexed.stderr[-3000:]
    port = free_port()
    if peers:
        environment |= self_and_gone(data_dir.with_name(f"{data_dir.name}-peers.toml"), port, TOKEN)
    with cstp_server(environment, port) as url:
        yield url


def rpc(base_url: str, method: str, params: dict[str, Any]) -> Any:
    """The result of one call made directly, to compare with what the page shows."""
    response = httpx.post(
        f"{base_url}/cstp",
        json=rpc_call(method, params),
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=60,
        verify=False,  # plain HTTP; spares httpx loading the CA bundle per call
    )
    body = response.json()
    assert "result" in body, body
    return body["result"]


def posted(page: Any) -> list[dict[str, Any]]:
    """Every JSON-RPC body the page POSTs to /cstp from now on, appended as it goes."""
    sent: list[dict[str, Any]] = []
    page.on(
        "request",
        lambda r: (
            sent.append(json.loads(r.post_data))
            if r.method == "POST" and r.url.endswith("/cstp")
            else None
        ),
    )
    return sent
