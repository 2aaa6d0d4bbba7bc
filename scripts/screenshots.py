"""PNG screenshots of each console view for the README, taken in the system chromium.

    python scripts/screenshots.py docs/screenshots                    # starts its own server
    python scripts/screenshots.py docs/screenshots --url URL --token TOKEN

Without --url it starts `cstp serve` over ../shared/data/adr and examples/decisions, as the
browser tests do (about two minutes of indexing). Needs /usr/bin/chromium.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.console.browser import TOKEN, chromium, corpus_server  # noqa: E402

QUERY = "separate Kubernetes clusters for each environment"
#: Nothing in the corpus is about it: the console shows its broad-match state.
OFF_TOPIC = "office kitchen paint colour"


def _console(browser: Any, url: str, token: str, width: int, height: int) -> Any:
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    page.goto(f"{url}/console")
    page.fill("#token", token)
    page.click("#token-use")
    return page


def _search(page: Any, query: str = QUERY) -> None:
    page.fill("#q", query)
    page.select_option("#mode", "hybrid")
    page.click("#search-submit")
    page.wait_for_selector("#results[data-total]", state="attached")


def take(browser: Any, url: str, token: str, out: Path) -> list[Path]:
    """Write search, broad (the broad-match state), decision, browse, calibration and narrow
    (375 px) PNGs into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    page = _console(browser, url, token, 1280, 900)
    _search(page)  # the filters start folded, so the results show
    page.screenshot(path=out / "search.png")
    page.click("#results .result >> nth=0")
    page.wait_for_selector("dialog#decision[open]")
    page.screenshot(path=out / "decision.png")
    page.keyboard.press("Escape")
    _search(page, OFF_TOPIC)
    page.screenshot(path=out / "broad.png")
    page.click("#nav-browse")
    page.wait_for_selector("#browse-page[data-page='1']")
    page.screenshot(path=out / "browse.png", full_page=True)
    page.click("#nav-calibration")
    page.wait_for_selector("#months-status[data-counted]")
    page.screenshot(path=out / "calibration.png", full_page=True)
    narrow = _console(browser, url, token, 375, 812)
    _search(narrow)
    narrow.evaluate("window.scrollTo(0, 0)")
    narrow.screenshot(path=out / "narrow.png")
    names = ("search", "broad", "decision", "browse", "calibration", "narrow")
    return [out / f"{n}.png" for n in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder for the PNG files")
    parser.add_argument("--url", help="a running service (default: start one)")
    parser.add_argument("--token", default=TOKEN, help="its bearer token")
    args = parser.parse_args()
    with ExitStack() as stack:
        url = args.url
        if url is None:
            data_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="cstp-shots-")))
            url = stack.enter_context(corpus_server(data_dir))
        browser = stack.enter_context(chromium())
        for path in take(browser, url, args.token, args.out):
            print(path)


if __name__ == "__main__":
    main()
