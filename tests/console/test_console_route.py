"""GET /console and its assets over ASGI: open without a token, CSP, no inline script, no CDN."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from a2a.embeddings import Embedder
from a2a.http.console import CONTENT_SECURITY_POLICY, PAGE_PATH, load_assets
from a2a.settings import Settings, load_settings
from tests.conftest import app_client, rpc_call

CONSOLE = Path(__file__).resolve().parents[2] / "a2a" / "console"


class _Page(HTMLParser):
    """The page's script and stylesheet references, inline scripts, style and on* attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.sources: list[str] = []
        self.inline_scripts = 0
        self.inline_attributes: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        for name, _ in attrs:
            if name == "style" or name.startswith("on"):
                self.inline_attributes.append(f"<{tag} {name}>")
        if tag == "script":
            if named.get("src"):
                self.sources.append(str(named["src"]))
            else:
                self._in_script = True
        if tag == "link" and named.get("rel") == "stylesheet":
            self.sources.append(str(named["href"]))

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline_scripts += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False


def _page() -> _Page:
    page = _Page()
    page.feed((CONSOLE / "index.html").read_text())
    return page


def test_page_has_no_inline_script_style_or_event_handlers() -> None:
    page = _page()
    assert page.inline_scripts == 0
    assert page.inline_attributes == []


def test_every_asset_the_page_and_its_modules_load_is_served() -> None:
    assets = load_assets(load_settings())
    imports = [
        f"console/{name}"
        for module in CONSOLE.glob("*.js")
        for name in re.findall(r'from "\./([\w.]+\.js)"', module.read_text())
    ]
    for source in [*_page().sources, *imports]:
        assert not source.startswith(("http:", "https:", "//")), source
        assert f"/{source}" in assets, source


def test_chart_library_ships_with_its_licence_and_version() -> None:
    vendor = CONSOLE / "vendor"
    assert "window.Chart" in (vendor / "chart.umd.min.js").read_text()
    assert "MIT" in (vendor / "chart.js.LICENSE.md").read_text()
    assert re.match(r"chart\.js \d+\.\d+\.\d+ ", (vendor / "VERSIONS").read_text())


@pytest.fixture
def auth_settings(tmp_path: Path) -> Settings:
    return load_settings(data_dir=tmp_path / "data", auth_tokens="ops:console-test-token")


async def test_console_is_served_without_a_token_with_a_same_origin_csp(
    auth_settings: Settings, embedder: Embedder
) -> None:
    async with app_client(auth_settings, embedder) as client:
        page = await client.get(PAGE_PATH)
        script = await client.get(f"{PAGE_PATH}/main.js")
        chart = await client.get(f"{PAGE_PATH}/vendor/chart.umd.min.js")
        rpc = await client.post("/cstp", json=rpc_call("rpc.discover"))
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "default-src 'self'" in CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["x-frame-options"] == "DENY"
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert chart.status_code == 200
    # The page is open; the data behind it is not.
    assert rpc.status_code == 401


async def test_the_page_with_a_trailing_slash_redirects_to_it_without_a_token(
    auth_settings: Settings, embedder: Embedder
) -> None:
    # Reported by a new user: `/console/` answered 401 with auth on (and `/console` 200).
    async with app_client(auth_settings, embedder) as client:
        response = await client.get("/console/")
        followed = await client.get("/console/", follow_redirects=True)
    assert response.status_code == 308
    assert response.headers["location"] == PAGE_PATH
    assert followed.status_code == 200 and followed.url.path == PAGE_PATH
    assert followed.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


@pytest.mark.parametrize(
    "path",
    ["/console/nope.js", "/console/../pyproject.toml", "/console/vendor/"],
    ids=["unknown-asset", "dot-dot", "folder"],
)
async def test_paths_outside_the_asset_table_are_not_served(
    path: str, auth_settings: Settings, embedder: Embedder
) -> None:
    async with app_client(auth_settings, embedder) as client:
        response = await client.get(path)
    # Not an asset: auth answers first (401), or the router (404); never a file.
    assert response.status_code in (401, 404)
    assert "content-security-policy" not in response.headers


async def test_console_assets_refuse_post(auth_settings: Settings, embedder: Embedder) -> None:
    async with app_client(auth_settings, embedder) as client:
        response = await client.post(PAGE_PATH)
    assert response.status_code == 405


async def test_console_works_with_auth_off(settings: Settings, embedder: Embedder) -> None:
    async with app_client(settings, embedder) as client:
        page = await client.get(PAGE_PATH)
        rpc = await client.post("/cstp", json=rpc_call("cstp.listDecisions", {"limit": 1}))
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "result" in rpc.json()
