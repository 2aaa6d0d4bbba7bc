"""The console's tenant picker in a real chromium against `cstp serve` with tenants
(CONTRACT.md, Tenants): filled from cstp.listTenants, the chosen tenant sent on every call,
the tenant shown on each result, and "All tenants" searching every granted tenant as one
ranked list. Assertions read the DOM and the bodies the page POSTs, compared with the same
JSON-RPC calls made directly.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.console.browser import chromium, require_chromium
from tests.decisions.lifecycle_wire import Served
from tests.decisions.wire import result
from tests.tenants.wire import ACME_TOKEN, GLOBEX_TOKEN, ORG_TOKEN, served

pytestmark = pytest.mark.slow

QUERY = "billing events kafka"
#: Per tenant: (id, title, outcome); each has a confidence, a date and a category.
DECISIONS = {
    "acme": [
        ("acme-kafka", "Acme moves billing events to Kafka", "success"),
        ("acme-db", "Acme keeps invoices in Postgres", "failure"),
    ],
    "globex": [
        ("globex-kafka", "Globex moves billing events to Kafka", "partial"),
        ("globex-cache", "Globex caches prices in Redis", "success"),
        ("globex-queue", "Globex queues billing retries", None),
    ],
}


def record_all(url: str, tokens: dict[str, str | None]) -> None:
    """DECISIONS, each tenant's with its token (None: auth off, no header)."""
    for tenant, decisions in DECISIONS.items():
        for number, (id_, title, outcome) in enumerate(decisions):
            decision = {
                "id": id_,
                "title": title,
                "category": "architecture",
                "confidence": 0.7,
                "date": f"2025-0{number + 1}-10T00:00:00Z",
                "tags": ["billing"],
                **({"outcome": outcome} if outcome else {}),
            }
            params = {"decision": decision, "tenant": tenant}
            token = tokens[tenant]
            if token is None:
                assert "result" in rpc(url, "cstp.recordDecision", params, None), params
            else:
                assert result(url, "cstp.recordDecision", params, token)["created"] is True


def rpc(url: str, method: str, params: dict[str, Any], token: str | None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer: dict[str, Any] = httpx.post(
        f"{url}/cstp", json=body, headers=headers, timeout=60
    ).json()
    return answer


def direct(url: str, method: str, params: dict[str, Any], token: str | None = ORG_TOKEN) -> Any:
    answer = rpc(url, method, params, token)
    assert "result" in answer, answer
    return answer["result"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    require_chromium()
    with served(tmp_path_factory.mktemp("console-tenants"), "embedded") as s:
        record_all(s.url, {"acme": ACME_TOKEN, "globex": GLOBEX_TOKEN})
        yield s


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """Auth off: every call may name any tenant."""
    require_chromium()
    folder: Path = tmp_path_factory.mktemp("console-tenants-open")
    with served(folder, "embedded", CSTP_AUTH_TOKENS="") as s:
        record_all(s.url, {"acme": None, "globex": None})
        yield s


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as browser:
        yield browser


class Page:
    """A console page and every JSON-RPC body it POSTs to /cstp."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.sent: list[dict[str, Any]] = []
        page.on("request", self._seen)

    def _seen(self, request: Any) -> None:
        if request.method == "POST" and request.url.endswith("/cstp"):
            self.sent.append(json.loads(request.post_data))

    def use_token(self, token: str, listed: int) -> None:
        """Paste `token` and wait for its `listed` tenants; the bodies sent from then on."""
        self.sent.clear()
        self.page.fill("#token", token)
        self.page.click("#token-use")
        self.page.wait_for_selector(f"#tenant[data-listed='{listed}']", state="attached")

    def options(self) -> list[str]:
        values: list[str] = self.page.eval_on_selector_all(
            "#tenant option", "e => e.map(o => o.value)"
        )
        return values

    def pick(self, tenant: str) -> None:
        self.page.select_option("#tenant", tenant)

    def search(self, query: str) -> list[tuple[str, str]]:
        """(tenant, id) of each result shown, in order."""
        self.page.fill("#q", query)
        self.page.click("#search-submit")
        self.page.wait_for_selector("#search-status[data-state='done']", state="attached")
        shown: list[list[str]] = self.page.eval_on_selector_all(
            "#results .result", "e => e.map(b => [b.dataset.tenant, b.dataset.id])"
        )
        return [(tenant, id_) for tenant, id_ in shown]


@pytest.fixture
def page(browser: Any, server: Served) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{server.url}/console")
    yield Page(page)
    context.close()


def test_the_picker_is_filled_from_list_tenants(page: Page, server: Served) -> None:
    page.use_token(ORG_TOKEN, 2)
    listed = direct(server.url, "cstp.listTenants", {})["tenants"]
    assert listed == [{"name": "acme", "decisions": 2}, {"name": "globex", "decisions": 3}]
    assert page.options() == ["*", "acme", "globex"]
    assert page.page.is_visible("#tenant")
    labels = page.page.eval_on_selector_all("#tenant option", "e => e.map(o => o.textContent)")
    assert labels[1:] == [f"{t['name']} ({t['decisions']})" for t in listed]


def test_a_token_of_several_tenants_starts_on_all_tenants(page: Page) -> None:
    """Issue 44 item 11: the picker started on one tenant, not "All tenants"."""
    page.use_token(ORG_TOKEN, 2)
    assert page.page.eval_on_selector("#tenant", "s => s.value") == "*"
    shown = page.search(QUERY)
    assert {tenant for tenant, _ in shown} == {"acme", "globex"}
    assert page.sent[-1]["params"]["tenant"] == "*"
    # Several tenants: each result says which one it is from.
    chips = page.page.eval_on_selector_all(
        "#results .result-tenant", "e => e.map(c => c.textContent)"
    )
    assert chips == [f"tenant {tenant}" for tenant, _ in shown]


def test_a_token_of_one_tenant_gets_no_choice(page: Page) -> None:
    page.use_token(ACME_TOKEN, 1)
    assert page.options() == ["acme"]
    assert page.page.is_hidden("#tenant-field")
    assert {t for t, _ in page.search(QUERY)} == {"acme"}
    # Another token brings its own tenants; a forgotten one takes them away.
    page.use_token(ORG_TOKEN, 2)
    assert page.page.is_visible("#tenant-field")
    page.page.click("#token-forget")
    page.page.wait_for_selector("#tenant[data-listed='0']", state="attached")
    assert page.options() == []
    assert page.page.is_hidden("#tenant-field")


def test_the_chosen_tenant_is_sent_on_every_call_and_shown_on_results(
    page: Page, server: Served
) -> None:
    page.use_token(ORG_TOKEN, 2)
    page.pick("globex")
    shown = page.search(QUERY)
    expected = direct(server.url, "cstp.queryDecisions", {"query": QUERY, "tenant": "globex"})
    assert shown == [("globex", d["id"]) for d in expected["decisions"]]
    assert page.page.inner_text("#results .result-tenant") == "tenant globex"
    # The whole decision, from its tenant.
    page.page.click("#results .result[data-id='globex-kafka']")
    page.page.wait_for_selector("dialog#decision[open][data-tenant='globex']")
    page.page.click("#decision-close")
    # Browse and calibration (getCalibration, getStats) name it too.
    page.page.click("#nav-browse")
    page.page.wait_for_selector("#browse-page[data-page='1']")
    rows = page.page.eval_on_selector_all("#browse-rows tr", "e => e.map(r => r.dataset.tenant)")
    assert rows == ["globex"] * 3
    page.page.click("#nav-calibration")
    page.page.wait_for_selector("#months-status[data-counted]", state="attached")
    assert page.page.get_attribute("#months-status", "data-counted") == "3"
    calls = [(body["method"], body["params"]) for body in page.sent]
    methods = {method for method, _ in calls}
    assert {
        "cstp.listTenants",
        "cstp.queryDecisions",
        "cstp.getDecision",
        "cstp.listDecisions",
        "cstp.getCalibration",
        "cstp.getStats",
    } <= methods
    after_pick = calls[[m for m, _ in calls].index("cstp.queryDecisions") :]
    assert [m for m, p in after_pick if p.get("tenant") != "globex"] == []
    # listTenants and listPeers take no tenant; before the pick ("All tenants"), getStats
    # named each tenant.
    for method, params in calls:
        if method in ("cstp.listTenants", "cstp.listPeers"):
            assert params == {}
        else:
            assert params.get("tenant") in {"acme", "globex"}, (method, params)


def test_all_tenants_search_merges_both_tenants_into_one_ranked_list(
    page: Page, server: Served
) -> None:
    page.use_token(ORG_TOKEN, 2)
    page.pick("*")
    shown = page.search(QUERY)
    expected = direct(server.url, "cstp.queryDecisions", {"query": QUERY, "tenant": "*"})
    assert shown == [(d["tenant"], d["id"]) for d in expected["decisions"]]
    assert {tenant for tenant, _ in shown} == {"acme", "globex"}
    assert page.sent[-1]["params"]["tenant"] == "*"
    # A result opens from its own tenant, not "*".
    page.page.click("#results .result[data-id='acme-kafka']")
    page.page.wait_for_selector("dialog#decision[open][data-tenant='acme']")
    assert page.sent[-1]["method"] == "cstp.getDecision"
    assert page.sent[-1]["params"] == {"id": "acme-kafka", "tenant": "acme"}


def test_all_tenants_calibration_and_counts_cover_every_tenant(page: Page, server: Served) -> None:
    page.use_token(ORG_TOKEN, 2)
    page.pick("*")
    page.page.click("#nav-calibration")
    page.page.wait_for_selector("#months-status[data-counted]", state="attached")
    org = direct(server.url, "cstp.getCalibration", {"tenant": "*"})
    assert page.page.get_attribute("#brier", "data-decisions") == str(org["decisions"]) == "4"
    # getStats takes no "*": one call per tenant, summed.
    assert page.page.get_attribute("#months-status", "data-counted") == "5"
    stats_tenants = sorted(
        body["params"]["tenant"] for body in page.sent[-2:] if body["method"] == "cstp.getStats"
    )
    assert stats_tenants == ["acme", "globex"]
    # Browse lists one tenant at a time: no "*" call, a note instead.
    page.page.click("#nav-browse")
    page.page.wait_for_selector("#browse-page[data-note='pick-tenant']")
    assert not [b for b in page.sent if b["method"] == "cstp.listDecisions"]
    assert page.page.is_hidden("#error")


def test_auth_off_lists_every_tenant(browser: Any, open_server: Served) -> None:
    context = browser.new_context()
    page = Page(context.new_page())
    page.page.goto(f"{open_server.url}/console")
    page.page.wait_for_selector("#tenant[data-listed]", state="attached")
    listed = direct(open_server.url, "cstp.listTenants", {}, None)["tenants"]
    assert [t["name"] for t in listed] == ["acme", "globex"]
    assert page.options() == ["*", "acme", "globex"]
    page.pick("*")
    assert {tenant for tenant, _ in page.search(QUERY)} == {"acme", "globex"}
    context.close()


def test_a_service_without_peers_offers_no_peers_choice(page: Page) -> None:
    """CONTRACT.md, Federation: cstp.listPeers names none, so there is nothing to include."""
    page.use_token(ORG_TOKEN, 2)
    page.page.wait_for_selector("#peers[data-listed='0']", state="attached")
    assert page.page.is_hidden("#peers-field") and page.page.is_hidden("#peer-status")
    assert page.search(QUERY)
    assert "peers" not in page.sent[-1]["params"]
    assert page.page.locator("#results .result-peer").count() == 0
