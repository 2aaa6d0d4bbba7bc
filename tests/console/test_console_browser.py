"""The console in a real chromium against a real `cstp serve` (ADR corpus + example decisions,
its peers itself and a dead port for the "Include peers" choice, at the end).

Every assertion reads the DOM (ids, data attributes, element counts), compared with what the
same JSON-RPC call returns when made directly; never pixels, never message wording.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.client.peered import GONE, SELF
from tests.console.browser import (
    TOKEN,
    chromium,
    corpus_server,
    posted,
    require_chromium,
    rpc,
)

pytestmark = pytest.mark.slow

#: Records every Content-Security-Policy violation the page causes.
CSP_PROBE = (
    "window.cspViolations = [];"
    "document.addEventListener('securitypolicyviolation',"
    " (e) => window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));"
)


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory, adr_store: Path) -> Iterator[str]:
    require_chromium()
    # Its peers are itself and a dead port (the console's peers choice, below); a search
    # asks them only when the choice is ticked.
    with corpus_server(tmp_path_factory.mktemp("console-store"), adr_store, peers=True) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as browser:
        yield browser


@pytest.fixture
def page(browser: Any, base_url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.add_init_script(CSP_PROBE)
    page.goto(f"{base_url}/console")
    yield page
    assert page.evaluate("window.cspViolations") == []
    context.close()


def use_token(page: Any, token: str = TOKEN) -> None:
    page.fill("#token", token)
    page.click("#token-use")


def open_filters(page: Any) -> None:
    """Unfold the filters panel: it starts folded, below the form of the view on screen."""
    if not page.evaluate("document.getElementById('filters-panel').open"):
        page.click("#filters-panel summary")


def search(page: Any, query: str) -> list[str]:
    page.fill("#q", query)
    page.click("#search-submit")
    page.wait_for_selector("#results[data-total]", state="attached")
    ids: list[str] = page.eval_on_selector_all("#results .result", "e => e.map(b => b.dataset.id)")
    return ids


def browse_ids(page: Any, number: int) -> list[str]:
    page.wait_for_selector(f"#browse-page[data-page='{number}']")
    ids: list[str] = page.eval_on_selector_all("#browse-rows tr", "e => e.map(r => r.dataset.id)")
    return ids


def count_all(base_url: str) -> int:
    """Every stored decision, counted through listDecisions pages."""
    count, cursor = 0, None
    while True:
        params: dict[str, Any] = {"limit": 100, **({"cursor": cursor} if cursor else {})}
        page = rpc(base_url, "cstp.listDecisions", params)
        count += len(page["decisions"])
        cursor = page["nextCursor"]
        if cursor is None:
            return count


def test_search_with_filters_and_mode_shows_what_the_api_returns(page: Any, base_url: str) -> None:
    use_token(page)
    open_filters(page)
    page.fill("#f-category", "architecture")
    page.check("input[name='stakes'][value='critical']")
    page.select_option("#mode", "hybrid")
    page.fill("#max-distance", "1.2")
    shown = search(page, "tenant isolation in the database")
    expected = rpc(
        base_url,
        "cstp.queryDecisions",
        {
            "query": "tenant isolation in the database",
            "filters": {"category": "architecture", "stakes": ["critical"]},
            "retrievalMode": "hybrid",
            "maxDistance": 1.2,
            "limit": 10,
        },
    )
    assert shown == [d["id"] for d in expected["decisions"]]
    assert shown, "the example decisions hold critical architecture decisions"
    assert page.locator("#results .bar-fill").count() == len(shown)


def test_token_stays_in_session_storage_only(page: Any) -> None:
    use_token(page)
    assert page.evaluate("Object.values(sessionStorage)") == [TOKEN]
    assert page.evaluate("localStorage.length") == 0
    assert TOKEN not in page.url


def test_wrong_token_asks_for_a_token(page: Any) -> None:
    use_token(page, "not-a-known-token")
    page.fill("#q", "kubernetes clusters")
    page.click("#search-submit")
    page.wait_for_selector("#error:not([hidden])")
    assert page.get_attribute("#error", "data-code") == "-32001"
    assert page.evaluate("document.activeElement.id") == "token"


def test_bad_parameter_marks_the_field_the_service_named(page: Any) -> None:
    use_token(page)
    page.fill("#max-distance", "5")
    page.fill("#q", "kubernetes clusters")
    page.click("#search-submit")
    page.wait_for_selector("#error:not([hidden])")
    assert page.get_attribute("#error", "data-code") == "-32602"
    assert page.get_attribute("#max-distance", "aria-invalid") == "true"
    assert page.get_attribute("#q", "aria-invalid") is None


def test_enter_on_a_result_opens_the_whole_decision(page: Any, base_url: str) -> None:
    use_token(page)
    ids = search(page, "separate Kubernetes clusters for each environment")
    page.focus(f"#results .result[data-id='{ids[0]}']")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"dialog#decision[open][data-id='{ids[0]}']")
    record = rpc(base_url, "cstp.getDecision", {"id": ids[0]})
    assert page.inner_text("#decision-title") == record["title"]
    fields = page.eval_on_selector_all("#decision-fields dd", "e => e.map(d => d.textContent)")
    assert record["id"] in fields
    page.keyboard.press("Escape")
    page.wait_for_selector("dialog#decision:not([open])", state="attached")
    # Focus returns to the result that opened it.
    assert page.evaluate("document.activeElement.dataset.id") == ids[0]


def test_click_on_an_example_decision_shows_its_reasons_and_tags(page: Any, base_url: str) -> None:
    use_token(page)
    open_filters(page)
    page.fill("#f-category", "architecture")
    ids = search(page, "row-level security for tenants")
    page.click(f"#results .result[data-id='{ids[0]}']")
    page.wait_for_selector(f"dialog#decision[open][data-id='{ids[0]}']")
    record = rpc(base_url, "cstp.getDecision", {"id": ids[0]})
    assert page.locator("#decision-body .reasons li").count() == len(record["reasons"])
    assert page.locator("#decision-body .tags .tag").count() == len(record["tags"])


def test_browse_pages_forward_and_back(page: Any, base_url: str) -> None:
    use_token(page)
    page.click("#nav-browse")
    first = browse_ids(page, 1)
    expected = rpc(base_url, "cstp.listDecisions", {"order": "dateDesc", "limit": 20})
    assert first == [d["id"] for d in expected["decisions"]]
    page.click("#browse-next")
    second = browse_ids(page, 2)
    assert len(second) == 20
    assert not set(first) & set(second)
    page.click("#browse-next")
    browse_ids(page, 3)
    page.click("#browse-prev")
    assert browse_ids(page, 2) == second
    page.click("#browse-prev")
    assert browse_ids(page, 1) == first
    assert page.is_disabled("#browse-prev")


def test_browse_order_toggle_gives_oldest_first(page: Any, base_url: str) -> None:
    use_token(page)
    page.click("#nav-browse")
    browse_ids(page, 1)
    page.select_option("#order", "dateAsc")
    page.fill("#page-size", "5")
    expected = [
        d["id"]
        for d in rpc(base_url, "cstp.listDecisions", {"order": "dateAsc", "limit": 5})["decisions"]
    ]
    page.click("#browse-load")
    # Wait for the rows themselves, not a count of loads: under load the first page can be
    # asked for twice (the view shown, then the token set) before this submit.
    page.wait_for_function(
        "ids => JSON.stringify([...document.querySelectorAll('#browse-rows tr')]"
        ".map(r => r.dataset.id)) === JSON.stringify(ids)",
        arg=expected,
    )
    shown = page.eval_on_selector_all("#browse-rows tr", "e => e.map(r => r.dataset.id)")
    assert shown == expected


def test_calibration_draws_the_reliability_diagram_and_brier_score(
    page: Any, base_url: str
) -> None:
    use_token(page)
    page.click("#nav-calibration")
    page.wait_for_selector("#brier[data-decisions]")
    expected = rpc(base_url, "cstp.getCalibration", {"bins": 5})
    assert page.get_attribute("#brier", "data-decisions") == str(expected["decisions"])
    assert float(page.get_attribute("#brier", "data-brier")) == pytest.approx(
        expected["brierScore"]
    )
    assert expected["decisions"] > 0, "the example decisions carry confidences and outcomes"
    datasets = page.evaluate(
        "Chart.getChart(document.getElementById('reliability-chart')).data.datasets.length"
    )
    assert datasets == 2  # the diagonal and the observed bins
    assert page.locator("#bins-table tbody tr").count() == 5
    assert page.locator("#category-table tbody tr").count() == len(expected["byCategory"])
    page.wait_for_selector("#months-status[data-counted]")
    assert int(page.get_attribute("#months-status", "data-counted")) == count_all(base_url)
    # Each dated decision sits in exactly one month and one outcome of the stacked bars.
    charted = page.evaluate(
        "Chart.getChart(document.getElementById('months-chart')).data.datasets"
        ".map((d) => [d.label, d.data.reduce((a, b) => a + b, 0)])"
    )
    undated = int(page.get_attribute("#months-status", "data-undated"))
    assert sum(n for _, n in charted) == count_all(base_url) - undated
    assert {"success", "no outcome"} <= {label for label, _ in charted}


def test_calibration_shows_intervals_brier_over_time_and_agents_and_months_from_get_stats(
    page: Any, base_url: str
) -> None:
    methods: list[str] = []
    page.on(
        "request",
        lambda r: methods.append(json.loads(r.post_data)["method"]) if r.method == "POST" else None,
    )
    use_token(page)
    page.click("#nav-calibration")
    page.wait_for_selector("#months-status[data-counted]")
    expected = rpc(base_url, "cstp.getCalibration", {"bins": 5})
    stats = rpc(base_url, "cstp.getStats", {})
    # Error bars: each observed point carries its bin's Wilson interval.
    points = page.evaluate(
        "Chart.getChart(document.getElementById('reliability-chart')).data.datasets[1].data"
        ".map((p) => [p.low, p.high])"
    )
    filled = [b for b in expected["bins"] if b["count"]]
    assert points == [[b["successRateLow"], b["successRateHigh"]] for b in filled]
    cells = page.eval_on_selector_all(
        "#bins-table tbody td[data-low]", "e => e.map((c) => [c.dataset.low, c.dataset.high])"
    )
    assert [float(low) for low, _ in cells if low] == [b["successRateLow"] for b in filled]
    # Brier over time, and a table per agent.
    line = page.evaluate(
        "(() => { const c = Chart.getChart(document.getElementById('brier-chart'));"
        " return [c.data.labels, c.data.datasets[0].data]; })()"
    )
    assert line == [
        [m["month"] for m in expected["byMonth"]],
        [m["brierScore"] for m in expected["byMonth"]],
    ]
    agents = page.eval_on_selector_all(
        "#agent-table tbody tr", "e => e.map((r) => r.dataset.agent)"
    )
    assert agents == [a["agent"] or "" for a in expected["byAgent"]]
    assert page.inner_text("#murphy") != ""
    # Decisions per month come from one getStats call, never from listDecisions pages.
    assert int(page.get_attribute("#months-status", "data-counted")) == stats["decisions"]
    assert "cstp.getStats" in methods and "cstp.listDecisions" not in methods


def test_calibration_follows_the_filters(page: Any, base_url: str) -> None:
    use_token(page)
    open_filters(page)
    page.fill("#f-category", "architecture")
    page.click("#nav-calibration")
    page.wait_for_selector("#brier[data-decisions]")
    expected = rpc(base_url, "cstp.getCalibration", {"filters": {"category": "architecture"}})
    assert page.get_attribute("#brier", "data-decisions") == str(expected["decisions"])


def test_narrow_window_has_no_horizontal_scroll(browser: Any, base_url: str) -> None:
    context = browser.new_context(viewport={"width": 375, "height": 812})
    page = context.new_page()
    page.goto(f"{base_url}/console")
    use_token(page)
    search(page, "kubernetes clusters")
    width = page.evaluate("document.documentElement.scrollWidth")
    context.close()
    assert width <= 375


def test_keyboard_reaches_the_token_views_and_search(page: Any) -> None:
    reached = []
    for _ in range(12):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("document.activeElement.id"))
    for target in ["token", "token-use", "nav-search", "nav-browse", "nav-calibration"]:
        assert target in reached


@pytest.mark.parametrize("width", [375, 1280])
def test_the_first_view_shows_the_search_box_first_and_the_filters_folded(
    browser: Any, base_url: str, width: int
) -> None:
    """Issue 44 item 11: the Filters panel was open above the search box, so at 375 px the
    box was below the fold."""
    context = browser.new_context(viewport={"width": width, "height": 667})
    page = context.new_page()
    page.goto(f"{base_url}/console")
    use_token(page)
    page.wait_for_selector("#tenant[data-listed]", state="attached")
    folded = not page.evaluate("document.getElementById('filters-panel').open")
    box = page.locator("#q").bounding_box()
    panel = page.locator("#filters-panel").bounding_box()
    # Another view's form comes first too: the one panel moves below it.
    page.click("#nav-browse")
    below_browse = page.evaluate("document.getElementById('browse-form').nextElementSibling.id")
    context.close()
    assert folded
    assert box is not None and panel is not None
    assert box["y"] + box["height"] <= 667
    assert box["y"] < panel["y"]
    assert below_browse == "filters-panel"


def test_one_tenant_shows_no_tenant_chip_nor_tenant_column(page: Any) -> None:
    """Issue 44 item 11: "tenant default" was on every card when there is only one."""
    use_token(page)
    page.wait_for_selector("#tenant[data-listed='1']", state="attached")
    assert search(page, "kubernetes clusters")
    assert page.locator("#results .result-tenant").count() == 0
    page.click("#nav-browse")
    assert browse_ids(page, 1)
    assert page.is_hidden("#browse-table thead th:last-child")
    assert page.is_hidden("#browse-rows tr:first-child td:last-child")


@pytest.mark.parametrize(("width", "scrolls"), [(375, True), (1280, False)])
def test_browse_says_when_the_table_scrolls_sideways(
    browser: Any, base_url: str, width: int, scrolls: bool
) -> None:
    """Issue 44 item 11: Browse at 375 px hid most columns with no scroll hint."""
    context = browser.new_context(viewport={"width": width, "height": 812})
    page = context.new_page()
    page.goto(f"{base_url}/console")
    use_token(page)
    page.click("#nav-browse")
    browse_ids(page, 1)
    wider = page.evaluate(
        "(() => { const w = document.getElementById('browse-wrap');"
        " return w.scrollWidth > w.clientWidth; })()"
    )
    hint = page.is_visible("#browse-scroll-hint")
    shaded = page.get_attribute("#browse-wrap", "data-more")
    # Scrolled to the end, the shade goes; the hint stays while the table is wider.
    page.evaluate("document.getElementById('browse-wrap').scrollLeft = 1e6")
    page.wait_for_selector("#browse-wrap[data-more='']", state="attached")
    context.close()
    assert wider is scrolls
    assert hint is scrolls
    assert shaded == ("right" if scrolls else "")


def test_the_brier_chart_fits_its_axis_to_the_scores(page: Any, base_url: str) -> None:
    """Issue 44 item 11: a fixed 0-1 axis flattened Brier scores of 0-0.2 into one line."""
    use_token(page)
    page.click("#nav-calibration")
    page.wait_for_selector("#months-status[data-counted]")
    months = rpc(base_url, "cstp.getCalibration", {"bins": 5})["byMonth"]
    scores = [m["brierScore"] for m in months if m["brierScore"] is not None]
    top = page.evaluate("Chart.getChart(document.getElementById('brier-chart')).scales.y.max")
    fitted = page.evaluate(
        "import('./console/calibration.js').then((m) => [[0.02, 0.05], [0.12, null], [0.95], []]"
        ".map((s) => m.brierAxisMax(s)))"
    )
    assert scores and max(scores) <= 0.8
    assert max(scores) < top < 1
    assert top <= max(max(scores) * 1.15 + 0.05, 0.1)
    assert fitted == [0.1, 0.15, 1, 0.1]


# -- Federation (CONTRACT.md): the "Include peers" choice, over this service's peers, itself
# (SELF: its answer is the service's own, marked) and a dead port (GONE: failed, or skipped
# once its circuit is open after three failures in a row).

PEERS_QUERY = "separate Kubernetes clusters for each environment"


def use_token_with_peers(page: Any) -> None:
    use_token(page)
    page.wait_for_selector("#peers[data-listed='2']", state="attached")


def peer_states(page: Any) -> dict[str, tuple[str, str]]:
    """Each peer shown under the search form: name -> (status, its words)."""
    shown: list[list[str]] = page.eval_on_selector_all(
        "#peer-status .peer", "e => e.map(p => [p.dataset.peer, p.dataset.status, p.textContent])"
    )
    return {name: (status, words) for name, status, words in shown}


def search_peers(page: Any, query: str = PEERS_QUERY) -> list[tuple[str, str | None]]:
    """(id, peer) of each result shown, in order, once the search is done."""
    page.fill("#q", query)
    page.click("#search-submit")
    page.wait_for_selector("#search-status[data-state='done']", state="attached")
    shown: list[list[Any]] = page.eval_on_selector_all(
        "#results .result", "e => e.map(b => [b.dataset.id, b.dataset.peer ?? null])"
    )
    return [(id_, peer) for id_, peer in shown]


def test_the_peers_choice_shows_each_listed_peers_state(page: Any, base_url: str) -> None:
    use_token_with_peers(page)
    listed = rpc(base_url, "cstp.listPeers", {})["peers"]
    assert [(p["name"], p["reachable"]) for p in listed] == [(SELF, True), (GONE, False)]
    assert page.is_visible("#peers-field") and not page.is_checked("#peers")
    assert page.is_hidden("#peer-status")  # shown for the peers a search would ask
    page.check("#peers")
    assert page.is_visible("#peer-status")
    shown = peer_states(page)
    assert shown[SELF][0] == "reachable" and "same model" in shown[SELF][1]
    assert shown[GONE][0] in ("unreachable", "open")


def test_a_search_with_peers_marks_each_result_and_says_which_peer_failed(
    page: Any, base_url: str
) -> None:
    sent = posted(page)
    use_token_with_peers(page)
    page.check("#peers")
    shown = search_peers(page)
    assert sent[-1]["method"] == "cstp.queryDecisions" and sent[-1]["params"]["peers"] == "*"
    expected = rpc(base_url, "cstp.queryDecisions", {**sent[-1]["params"]})
    assert shown == [(d["id"], d["peer"]) for d in expected["decisions"]]
    assert {peer for _, peer in shown} == {None, SELF}
    badges = page.eval_on_selector_all("#results .result-peer", "e => e.map(b => b.textContent)")
    assert badges == [f"peer {SELF}"] * [peer for _, peer in shown].count(SELF)
    # The answer's peers block: SELF answered, GONE failed (or was skipped) with the
    # reason; the answer is partial, and the status line says how it was merged.
    answered = peer_states(page)
    assert page.get_attribute("#peer-status", "data-source") == "answer"
    assert page.get_attribute("#peer-status", "data-partial") == "true"
    assert answered[SELF][0] == "successful" and "answered: 10 decisions" in answered[SELF][1]
    status, words = answered[GONE]
    assert status in ("failed", "skipped")
    assert "error -32003" in words if status == "failed" else "circuit is open" in words
    assert "peers: 1 of 2 answered, merged by distance" in page.inner_text("#search-status")
    # Unticked: no peer is asked, no badge, the listed states again.
    page.uncheck("#peers")
    shown = search_peers(page)
    assert "peers" not in sent[-1]["params"] and {peer for _, peer in shown} == {None}
    assert page.locator("#results .result-peer").count() == 0
    assert page.get_attribute("#peer-status", "data-source") == "listed"


def test_a_peers_decision_opens_from_that_peer(page: Any) -> None:
    sent = posted(page)
    use_token_with_peers(page)
    page.check("#peers")
    shown = search_peers(page)
    first = next(id_ for id_, peer in shown if peer == SELF)
    page.click(f"#results .result[data-peer='{SELF}'][data-id='{first}']")
    page.wait_for_selector(f"dialog#decision[open][data-peer='{SELF}']")
    assert sent[-1]["method"] == "cstp.getDecision"
    assert sent[-1]["params"] == {"id": first, "peer": SELF, "tenant": "default"}
    page.click("#decision-close")
    # Its own copy opens from this service: no `peer`.
    page.click(f"#results .result:not([data-peer])[data-id='{first}']")
    page.wait_for_selector("dialog#decision[open]:not([data-peer])")
    assert sent[-1]["params"] == {"id": first, "tenant": "default"}
