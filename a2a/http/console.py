"""GET /console: the operator console, a static page that is one more client of POST /cstp.

The page and its assets hold no data, so they are served without a token
(CONTRACT.md, "The operator console"); every call the page makes goes to POST /cstp with
the token the operator pastes. Assets are read from the package (`a2a/console/`) once, when
the app is built, and served from that table: a path not in it is a 404, never a file lookup.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from a2a.app.console import console_config
from a2a.settings import Settings

#: Where the page is served; its assets live under `PAGE_PATH + "/"`.
PAGE_PATH = "/console"
#: The page with a trailing slash (typed or bookmarked): redirected to PAGE_PATH, open too.
PAGE_SLASH = PAGE_PATH + "/"

#: Media types of the files the console ships, by suffix; other files are not served.
MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
}
#: The broad-match line and words (a2a.app.console), served beside the page so the console
#: shows a result list exactly as `cstp query` does.
MATCHING_PATH = f"{PAGE_PATH}/matching.json"

#: Only the service's own origin, no inline script or style, no framing, no form posts
#: elsewhere (CSP Level 3). `connect-src 'self'` is what lets the page call POST /cstp.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
    # Always revalidate: a new version of the service must not run an old page's script.
    "Cache-Control": "no-cache",
}


@dataclass(frozen=True)
class Asset:
    """One file of the console: its bytes and its media type."""

    body: bytes
    media_type: str


def load_assets(settings: Settings) -> dict[str, Asset]:
    """The console's files by URL path (`/console`, `/console/main.js`, ...).

    `index.html` is served at `/console` itself, and `matching.json` holds
    a2a.app.console.console_config(settings). Raises FileNotFoundError when the package
    was installed without its console files (package data in pyproject.toml).
    """
    root = resources.files("a2a") / "console"
    assets: dict[str, Asset] = {}
    for relative, body in _files(root, ""):
        media_type = MEDIA_TYPES.get(_suffix(relative))
        if media_type is None:
            continue
        path = PAGE_PATH if relative == "index.html" else f"{PAGE_PATH}/{relative}"
        assets[path] = Asset(body, media_type)
    if PAGE_PATH not in assets:
        raise FileNotFoundError("a2a/console/index.html is missing from the installed package")
    matching = json.dumps(console_config(settings)).encode()
    assets[MATCHING_PATH] = Asset(matching, "application/json")
    return assets


def _files(folder: Traversable, prefix: str) -> list[tuple[str, bytes]]:
    found: list[tuple[str, bytes]] = []
    for entry in folder.iterdir():
        if entry.is_dir():
            found += _files(entry, f"{prefix}{entry.name}/")
        elif entry.is_file():
            found.append((prefix + entry.name, entry.read_bytes()))
    return found


def _suffix(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:] if dot > 0 else ""


def console_routes(assets: dict[str, Asset]) -> list[Route]:
    """One GET route per asset, each sent with SECURITY_HEADERS."""

    def endpoint_for(asset: Asset) -> Callable[[Request], Awaitable[Response]]:
        async def serve(request: Request) -> Response:
            return Response(asset.body, media_type=asset.media_type, headers=SECURITY_HEADERS)

        return serve

    async def to_page(request: Request) -> Response:
        return RedirectResponse(PAGE_PATH, status_code=308)

    routes = [Route(path, endpoint_for(asset), methods=["GET"]) for path, asset in assets.items()]
    return [*routes, Route(PAGE_SLASH, to_page, methods=["GET"])]
