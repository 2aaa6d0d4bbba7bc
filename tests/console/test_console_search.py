"""The search view tells a good answer from a weak one, in a real chromium against `cstp serve`.

The broad-match note follows the result's `broadMatch` and the no-match message an empty list,
with the CLI's words (served as /console/matching.json); distance bars are scaled between the
threshold and 0; an error leaves no stale results; the token state is truthful; at 375 px the
results come first; the filters offer the store's own values. Assertions read the DOM and
compare it with the same JSON-RPC call made directly.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from a2a.client.precedents import result_note
from a2a.query.matching import BROAD_MATCH, BROAD_MATCH_DISTANCE, NO_MATCH
from a2a.query.results import QueryDecisionsResult
from tests.console import test_console_browser as shared
from tests.console.browser import rpc

# The server, browser and page fixtures of the console's browser tests (one of each per module).
base_url, browser, page = shared.base_url, shared.browser, shared.page
search, use_token, open_filters = shared.search, shared.use_token, shared.open_filters

pytestmark = pytest.mark.slow

#: Nothing in the ADR corpus is about this: its best hit lies past the threshold.
OFF_TOPIC = "office kitchen paint colour"
ON_TOPIC = "separate Kubernetes clusters for each environment"


def shown_distances(page: Any) -> list[dict[str, Any]]:
    """Per result: its distance as the API gives it, and the bar's closeness and weak flag."""
    rows: list[dict[str, Any]] = page.eval_on_selector_all(
        "#results .distance",
        "e => e.map(d => ({closeness: Number(d.dataset.closeness), weak: d.dataset.weak,"
        " width: d.querySelector('.bar-fill').getBoundingClientRect().width,"
        " bar: d.querySelector('.bar').getBoundingClientRect().width}))",
    )
    return rows


def expected(base_url: str, query: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = rpc(
        base_url, "cstp.queryDecisions", {"query": query, "limit": 10, **params}
    )
    return result


def test_the_page_is_served_the_cli_threshold_and_words(base_url: str) -> None:
    served = httpx.get(f"{base_url}/console/matching.json", timeout=10).json()
    assert served == {
        "broadMatchDistance": BROAD_MATCH_DISTANCE,
        "broadMatch": BROAD_MATCH,
        "noMatch": NO_MATCH,
    }


def test_off_topic_query_shows_the_broad_match_note_the_cli_prints(
    page: Any, base_url: str
) -> None:
    use_token(page)
    ids = search(page, OFF_TOPIC)
    answer = expected(base_url, OFF_TOPIC)
    assert ids == [d["id"] for d in answer["decisions"]]
    # The service marked it; the page shows the field, as `cstp query` prints it.
    assert answer["broadMatch"] is True
    cli_note = result_note(QueryDecisionsResult.model_validate(answer))
    assert cli_note == BROAD_MATCH
    assert page.get_attribute("#match-note", "data-kind") == "broad"
    assert page.inner_text("#match-note") == cli_note
    # Every hit is past the threshold: each bar is a weak stub, not a long bar.
    bars = shown_distances(page)
    assert [b["weak"] for b in bars] == ["true"] * len(ids)
    assert all(b["width"] < b["bar"] * 0.1 for b in bars)


def test_query_with_nothing_within_max_distance_shows_the_no_match_message(page: Any) -> None:
    use_token(page)
    page.fill("#max-distance", "0.05")
    assert search(page, OFF_TOPIC) == []
    assert page.get_attribute("#match-note", "data-kind") == "none"
    assert page.inner_text("#match-note") == NO_MATCH


def test_good_hits_have_no_note_and_bars_scaled_to_the_threshold(page: Any, base_url: str) -> None:
    use_token(page)
    search(page, ON_TOPIC)
    assert page.is_hidden("#match-note")
    distances = [d["distance"] for d in expected(base_url, ON_TOPIC)["decisions"]]
    bars = shown_distances(page)
    assert len(bars) == len(distances)
    for distance, bar in zip(distances, bars, strict=True):
        weak = distance > BROAD_MATCH_DISTANCE
        assert bar["weak"] == ("true" if weak else "false")
        closeness = 0 if weak else 1 - distance / BROAD_MATCH_DISTANCE
        assert bar["closeness"] == pytest.approx(closeness, abs=1e-3)
    # The best hit (0.27 here) fills most of its bar; one at 0.6 would fill a tenth.
    assert bars[0]["width"] > bars[0]["bar"] * 0.5


def test_an_error_clears_the_previous_results(page: Any) -> None:
    use_token(page)
    assert search(page, OFF_TOPIC)
    assert page.is_visible("#match-note")
    page.fill("#limit", "1000")
    page.click("#search-submit")
    page.wait_for_selector("#search-status[data-state='failed']", state="attached")
    assert page.get_attribute("#error", "data-code") == "-32602"
    assert page.locator("#results li").count() == 0
    assert page.get_attribute("#results", "data-total") is None
    assert page.is_hidden("#match-note")


def test_confidence_min_over_max_clears_results_too(page: Any) -> None:
    use_token(page)
    assert search(page, ON_TOPIC)
    open_filters(page)
    page.fill("#f-min-confidence", "0.9")
    page.fill("#f-max-confidence", "0.1")
    page.click("#search-submit")
    page.wait_for_selector("#search-status[data-state='failed']", state="attached")
    assert page.locator("#results li").count() == 0


def _refused_search(page: Any) -> tuple[str | None, str | None]:
    """Search ON_TOPIC, wait for the error shown; its data-token and the token's state."""
    page.fill("#q", ON_TOPIC)
    page.click("#search-submit")
    page.wait_for_selector("#error:not([hidden])")
    return (
        page.get_attribute("#error", "data-token"),
        page.get_attribute("#token-state", "data-state"),
    )


def test_a_refused_token_is_not_called_missing(page: Any) -> None:
    use_token(page, "not-a-known-token")
    assert _refused_search(page) == ("refused", "set:refused")


def test_no_token_on_an_auth_service_is_called_missing(page: Any) -> None:
    assert _refused_search(page) == ("missing", "none:refused")


def test_an_accepted_token_says_so(page: Any) -> None:
    use_token(page)
    search(page, ON_TOPIC)
    assert page.get_attribute("#token-state", "data-state") == "set:accepted"


def cut_texts(page: Any) -> list[str]:
    """Labels, legends and chosen select options of visible forms that do not fit their box."""
    cut: list[str] = page.evaluate(
        """() => {
      const cut = [];
      const visible = (e) => e.offsetParent !== null;
      for (const e of document.querySelectorAll('form label, form legend, summary')) {
        if (visible(e) && e.scrollWidth > e.clientWidth + 1) cut.push(e.textContent.trim());
      }
      const ctx = document.createElement('canvas').getContext('2d');
      for (const s of document.querySelectorAll('form select')) {
        if (!visible(s)) continue;
        const style = getComputedStyle(s);
        ctx.font = `${style.fontSize} ${style.fontFamily}`;
        const text = ctx.measureText(s.options[s.selectedIndex].text).width;
        const room = s.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        // ~20 px of the box is the drop-down arrow.
        if (text > room - 20) cut.push(s.options[s.selectedIndex].text);
      }
      return cut;
    }"""
    )
    return cut


def test_at_375_px_results_come_first_and_no_label_is_cut(browser: Any, base_url: str) -> None:
    context = browser.new_context(viewport={"width": 375, "height": 812})
    narrow = context.new_page()
    narrow.goto(f"{base_url}/console")
    use_token(narrow)
    open_filters(narrow)
    assert cut_texts(narrow) == []  # the filters panel open, before any search
    narrow.fill("#f-category", "architecture")
    search(narrow, ON_TOPIC)
    narrow.evaluate("window.scrollTo(0, 0)")
    assert narrow.evaluate("document.getElementById('filters-panel').open") is False
    assert narrow.get_attribute("#filters-count", "data-set") == "1"
    first = narrow.locator("#results li").first.bounding_box()
    assert cut_texts(narrow) == []
    width = narrow.evaluate("document.documentElement.scrollWidth")
    context.close()
    assert first is not None and first["y"] + first["height"] <= 812
    assert width <= 375


def test_desktop_keeps_the_filters_open_after_a_search(page: Any) -> None:
    use_token(page)
    open_filters(page)
    search(page, ON_TOPIC)
    assert page.evaluate("document.getElementById('filters-panel').open") is True
    assert cut_texts(page) == []


def store_values(base_url: str) -> dict[str, set[str]]:
    values: dict[str, set[str]] = {"category": set(), "stakes": set(), "status": set()}
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 100, **({"cursor": cursor} if cursor else {})}
        result = rpc(base_url, "cstp.listDecisions", params)
        for decision in result["decisions"]:
            for name, found in values.items():
                if decision[name]:
                    found.add(decision[name])
        cursor = result["nextCursor"]
        if cursor is None:
            return values


def test_filters_offer_the_stores_own_values(page: Any, base_url: str) -> None:
    use_token(page)
    page.wait_for_selector("#filters[data-offered='store']", state="attached")
    values = store_values(base_url)
    offered = page.eval_on_selector_all("#category-options option", "e => e.map(o => o.value)")
    assert sorted(offered) == sorted(values["category"])
    for name in ("stakes", "status"):
        boxes = page.eval_on_selector_all(f"input[name='{name}']", "e => e.map(b => b.value)")
        assert set(boxes) == values[name]


def test_unknown_category_shows_the_services_note(page: Any, base_url: str) -> None:
    use_token(page)
    open_filters(page)
    page.fill("#f-category", "Architecture")
    assert search(page, ON_TOPIC) == []
    note = expected(base_url, ON_TOPIC, filters={"category": "Architecture"})["note"]
    assert page.inner_text("#search-note") == note
    assert '"architecture"' in note
