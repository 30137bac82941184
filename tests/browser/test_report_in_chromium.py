"""``report.html`` in a real browser: headless Debian Chromium driven by playwright (``nox -s browser``).

On the report of the example table (with claims) and on an ``audit scores`` report: no console error, no network
request (everything is inline), no horizontal overflow of the page body at 1400 px, every figure loaded, every
table-of-contents link resolving to a heading. A screenshot of each first screen is kept under ``out/browser/``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import sync_playwright

from audit.cli import audit_results
from audit.scores.scoring import ScoringConfig, audit_scores
from reports import write_report

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")  # Debian's package: configs and nox -s browser install it
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
ARTEFACTS = ROOT / "out" / "browser"
WIDTH = 1400
PRINT_WIDTH = 760  # an A4 or letter page at 96 px per inch, less its margins
PRINT_CHECK = """() => [...document.querySelectorAll('.table-box')]
    .filter(box => box.scrollWidth > box.clientWidth + 1).length"""


def example_report(out: Path) -> Path:
    _, written = audit_results(
        ROOT / "examples" / "results.csv", claims=ROOT / "examples" / "paper-claims.toml", out=out
    )
    return written[2]


def scores_report(out: Path) -> Path:
    rng = np.random.default_rng(0)
    trials, scores = [], []
    for n in range(600):
        enrol = int(rng.integers(0, 30))
        same = bool(rng.random() < 0.3)
        test = enrol if same else (enrol + 1 + int(rng.integers(0, 29))) % 30
        pair = f"id1{enrol:04d}/a/{n:05d}.wav id1{test:04d}/b/{n:05d}.wav"
        trials.append(f"{int(same)} {pair}")
        scores.append(f"{rng.normal(2.0 if same else 0.0):.5f} {pair}")
    (out / "trials.txt").write_text("\n".join(trials) + "\n")
    (out / "scores.txt").write_text("\n".join(scores) + "\n")
    report = audit_scores(out / "trials.txt", out / "scores.txt", config=ScoringConfig(n_resamples=50))
    return write_report(report, out / "report")[2]


CHECKS = """() => ({
    bodyWidth: document.body.scrollWidth,
    pageWidth: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
    images: [...document.images].map(i => ({ok: i.complete && i.naturalWidth > 0, alt: i.alt.length})),
    links: [...document.querySelectorAll('a[href^="#"]')].map(a => a.getAttribute('href').slice(1)),
    unresolved: [...document.querySelectorAll('a[href^="#"]')]
        .filter(a => !document.getElementById(a.getAttribute('href').slice(1))).length,
    firstScreen: document.elementFromPoint(10, 10) !== null,
    tocTop: document.querySelector('nav.toc').getBoundingClientRect().top,
    verdictTop: document.querySelector('.callout').getBoundingClientRect().top,
})"""


@pytest.mark.slow
@pytest.mark.parametrize("make", [example_report, scores_report], ids=["example-table", "audit-scores"])
def test_the_report_in_headless_chromium(tmp_path: Path, make: object) -> None:
    page_path = make(tmp_path)  # type: ignore[operator]
    page_url = page_path.as_uri()
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": 900})
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("request", lambda request: requests.append(request.url))
            page.goto(page_url, wait_until="load")
            found = page.evaluate(CHECKS)
            ARTEFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTEFACTS / f"{make.__name__}-{WIDTH}px.png"))  # type: ignore[attr-defined]
            # In print, at a paper-like width, tables wrap instead of scrolling: no column is cut.
            page.emulate_media(media="print")
            page.set_viewport_size({"width": PRINT_WIDTH, "height": 1000})
            cut_tables = page.evaluate(PRINT_CHECK)
        finally:
            browser.close()
    assert errors == []
    assert [url for url in requests if url != page_url and not url.startswith("data:")] == []
    assert found["bodyWidth"] <= found["viewport"] and found["pageWidth"] <= found["viewport"], found
    assert found["images"] and all(image["ok"] and image["alt"] > 0 for image in found["images"])
    assert found["links"] and found["unresolved"] == 0
    assert found["verdictTop"] < found["tocTop"] < 900  # verdict and contents on the first screen
    assert cut_tables == 0
