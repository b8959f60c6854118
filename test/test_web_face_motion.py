"""The web face's motion choice, run where it runs: `pickMotion` in web/face.js, in headless
Chromium, on the shipped web/face_map.json. The page is served from the web/ folder itself
(Playwright answers its requests), without config.json, so the face loads the shipped table
the way it does behind any plain web server; no token, so it never connects to a bridge."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pytest

from browser_rig import needs_chromium, open_page

REPO = Path(__file__).resolve().parents[1]
WEB = REPO / "web"
ORIGIN = "http://face.test"

pytestmark = [pytest.mark.slow, needs_chromium]  # a real browser, about a second

# (behavior, intensity) -> TapBody index, None = no motion (the idle group). The shipped
# table's strong_from_intensity is 0.6.
CASES = [
    ("nod", 0.3, 0),
    ("nod", 0.9, 1),  # light and strong variant
    ("invite", 0.3, 2),
    ("invite", 0.9, 2),  # one variant only
    ("idle", 1.0, None),
    ("moonwalk", 0.9, None),  # unknown behavior -> table default (Idle)
]


def serve_web_folder(route) -> None:
    name = urlparse(route.request.url).path.lstrip("/") or "index.html"
    path = (WEB / name).resolve()
    if WEB in path.parents and path.is_file():
        route.fulfill(path=str(path))
    else:
        route.fulfill(status=404, body="not found")


@pytest.fixture(scope="module")
def face_page(browser):
    """One page for the whole module (Playwright's default size); a JavaScript error fails it."""
    with open_page(browser) as page:
        page.route(f"{ORIGIN}/**", serve_web_folder)
        page.goto(f"{ORIGIN}/index.html")
        page.evaluate("() => window.fayFace.ready")  # resolves once the table is loaded
        yield page


def test_the_page_runs_on_the_shipped_table(face_page):
    assert face_page.evaluate("() => window.fayFace.map.motion.strong_from_intensity") == 0.6
    assert face_page.evaluate("() => document.body.dataset.connection") == "no-token"


@pytest.mark.parametrize("behavior, intensity, index", CASES)
def test_intensity_picks_the_light_or_strong_tapbody_variant(face_page, behavior, intensity, index):
    assert face_page.evaluate("([b, i]) => window.fayFace.pickMotion(b, i)", [behavior, intensity]) == index
