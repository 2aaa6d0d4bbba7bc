"""The console shows when to retry (-32002) and that the store is down (-32003), for real.

A `cstp serve` on a `chroma run` server that is then stopped, with a limit of two searches a
minute: the first search after the stop meets the dead store, the third the rate limit. With
stale reads on, a search while Chroma is away is answered from memory, and the page says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.console.browser import TOKEN, chromium, require_chromium
from tests.servers import cstp_on_chroma_server, stop

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    require_chromium()
    env = {
        "CSTP_AUTH_TOKENS": f"ops:{TOKEN}",
        "CSTP_RATE_LIMITS": "cstp.queryDecisions=2/minute",
        "CSTP_CHROMA_TIMEOUT_SECONDS": "3",
        # The errors under test: with stale reads on, a search while Chroma is away would be
        # answered from the loaded index instead (docs/availability.md).
        "CSTP_STALE_READS_SECONDS": "0",
    }
    with cstp_on_chroma_server(tmp_path_factory.mktemp("console-errors"), env) as served:
        yield served


def test_store_down_then_rate_limited(service: tuple[str, Any]) -> None:
    """Counted by the page's own queryDecisions requests, not by clicks (a search may also
    start from typing): the first two of the minute meet the dead store, the third the limit."""
    url, chroma = service
    stop(chroma)
    searches: list[Any] = []

    def is_search(request: Any) -> bool:
        return request.method == "POST" and "cstp.queryDecisions" in (request.post_data or "")

    with chromium() as browser:
        page = browser.new_page()
        page.on("request", lambda request: searches.append(request) if is_search(request) else None)
        page.goto(f"{url}/console")
        page.fill("#token", TOKEN)
        page.click("#token-use")
        page.fill("#q", "which message broker")
        while len(searches) < 3:
            # One answer before the next click; which search it answers is not known here
            # (a search started by typing may answer first): `answers` pairs them.
            with page.expect_response(lambda response: is_search(response.request)):
                page.click("#search-submit")
        page.wait_for_selector("#error[data-code='-32002']", state="attached")
        retry_after = page.get_attribute("#error", "data-retry-after")
        answers = [request.response().json()["error"]["code"] for request in searches]
    assert answers == [-32003, -32003, -32002]
    assert retry_after is not None and 0 < float(retry_after) <= 60


@pytest.fixture(scope="module")
def stale_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """A `cstp serve` on a `chroma run` server, stale reads on (the default)."""
    require_chromium()
    env = {"CSTP_AUTH_TOKENS": f"ops:{TOKEN}", "CSTP_CHROMA_TIMEOUT_SECONDS": "3"}
    with cstp_on_chroma_server(tmp_path_factory.mktemp("console-stale"), env) as served:
        yield served


def search_done(page: Any) -> None:
    page.click("#search-submit")
    page.wait_for_selector("#search-status[data-state='done']", state="attached")


def test_an_answer_from_memory_while_chroma_is_away_says_so(stale_service: tuple[str, Any]) -> None:
    url, chroma = stale_service
    with chromium() as browser:
        page = browser.new_page()
        page.goto(f"{url}/console")
        page.fill("#token", TOKEN)
        page.click("#token-use")
        page.fill("#q", "which message broker")
        search_done(page)
        assert page.is_hidden("#stale-note")  # a fresh answer carries no note
        stop(chroma)
        search_done(page)
        assert page.is_visible("#stale-note")
        assert page.get_attribute("#stale-note", "data-kind") == "stale"
        assert "memory" in page.inner_text("#stale-note")
