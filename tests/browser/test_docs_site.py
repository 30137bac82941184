"""The documentation site in a real browser: built strictly by MkDocs (as ``nox -s docs`` builds it), then every page
opened from disk in headless Debian Chromium at 1400 px (a laptop) and 400 px (a phone).

On every page: no script error, nothing fetched from outside the site folder (the site works offline), no page wider
than the viewport (wide code blocks and tables scroll inside their own box), and the navigation reachable: beside
the page at 1400 px; at 400 px hidden behind the menu button, where one click opens it (Home and the page's own
part at least, each a tap from the rest). A screenshot of the first tutorial at each width is kept under
``out/browser/``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs", reason="the docs extra is not installed (nox -s tests installs it)")
playwright_api = pytest.importorskip("playwright.sync_api", reason="the browser extra is not installed")

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
ARTEFACTS = ROOT / "out" / "browser"
CHECKS = """() => {
    const visible = element => {
        if (!element) return false;
        const box = element.getBoundingClientRect();
        if (box.width <= 0 || box.height <= 0 || box.right <= 0 || box.left >= window.innerWidth) return false;
        if (box.bottom <= 0 || box.top >= window.innerHeight) return false;  // counted on the first screen only
        const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
        return hit !== null && (hit === element || element.contains(hit));
    };
    const navLinks = [...document.querySelectorAll('nav.md-nav--primary .md-nav__link')].filter(visible).length;
    return {
        pageWidth: document.documentElement.scrollWidth,
        bodyWidth: document.body.scrollWidth,
        viewport: window.innerWidth,
        navLinks: navLinks,
        menuButton: visible(document.querySelector('label.md-header__button[for="__drawer"]')),
    };
}"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


@pytest.mark.slow  # about 45 pages at two widths
def test_every_page_of_the_site_fits_and_reaches_its_navigation(site: Path) -> None:
    pages = sorted(path for path in site.rglob("*.html") if path.name != "404.html")
    assert len(pages) > 40
    errors: list[str] = []
    outside: list[str] = []
    problems: list[str] = []
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        try:
            for width in (1400, 400):
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.on("pageerror", lambda error: errors.append(str(error)))
                page.on(
                    "request",
                    lambda request: (
                        None
                        if request.url.startswith((site.as_uri(), "data:", "blob:"))
                        else outside.append(request.url)
                    ),
                )
                for path in pages:
                    page.goto(path.as_uri(), wait_until="load")
                    seen = page.evaluate(CHECKS)
                    name = f"{path.relative_to(site)} at {width} px"
                    if max(seen["pageWidth"], seen["bodyWidth"]) > seen["viewport"]:
                        problems.append(f"{name}: {seen['pageWidth']} px wide")
                    if width == 1400 and seen["navLinks"] < 10:
                        problems.append(f"{name}: navigation not beside the page ({seen['navLinks']} links)")
                    if width == 400:
                        if not seen["menuButton"] or seen["navLinks"] > 0:
                            problems.append(f"{name}: no menu button, or the navigation over the page")
                        page.click('label.md-header__button[for="__drawer"]')
                        page.wait_for_timeout(300)
                        if page.evaluate(CHECKS)["navLinks"] < 2:  # Home and the page's part, at least
                            problems.append(f"{name}: the menu button does not open the navigation")
                    if path.name == "review-an-artefact.html":
                        ARTEFACTS.mkdir(parents=True, exist_ok=True)
                        page.screenshot(path=str(ARTEFACTS / f"docs-review-an-artefact-{width}px.png"))
                page.close()
        finally:
            browser.close()
    assert errors == []
    assert outside == []
    assert problems == [], "\n".join(problems)
