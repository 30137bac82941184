"""``report.html`` in a real browser: headless Debian Chromium driven by playwright (``nox -s browser``).

Three reports: the example table (a table-only audit with claims), an ``audit scores`` report, and a signed
synthetic bundle audited with a table that differs from the signed one (a FAIL with its cause and failing cases, DET
and histogram figures). At 1400 px (a laptop) and 400 px (a phone), 900 px high: no console error, no network
request (everything is inline), no horizontal overflow of the page, every figure loaded, every table-of-contents
link resolving to a heading, the verdict and the headline table on the first screen; at 1400 px no table scrolls
(no column is cut) and the page above the appendix is at most ``BEFORE_APPENDIX_PX`` tall (the headline, then the
sections with their long tables, further flags and figure galleries folded); at 400 px the contents are one column.
Every ``<details>`` opens on a click of its summary and has something in it; opened, no figure is wider than the
page, and the smallest text of each (its SVG's smallest font over its width, scaled to the width the figure is
shown at) is at least ``FONT_FLOOR_PX``. In print, at a paper's width, every fold is unfolded and no table is cut.
A screenshot of each first screen is kept under ``out/browser/`` and the measurements are printed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit.cli import audit_results
from audit.scores.scoring import ScoringConfig, audit_scores
from audit.verify import AuditRequest
from reports import write_report
from tests.provenance.synthetic_bundle import build_bundle

# The browser extra (nox -s tests and browser install it); the light tiers skip the module.
sync_playwright = pytest.importorskip(
    "playwright.sync_api", reason="the browser extra is not installed"
).sync_playwright

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
WIDTHS = (1400, 400)
SCREEN_HEIGHT = 900
PRINT_WIDTH = 760  # an A4 or letter page at 96 px per inch, less its margins
# Measured at 1400 px (benchmarks/bench_report_height.py, RESULTS.md), above the appendix: 6,815 px (example table),
# 2,364 (audit scores), 4,859 (bundle), once issue 41 folded what is not headline (10,139, 2,444 and 5,270 before).
BEFORE_APPENDIX_PX = 8000
FONT_FLOOR_PX = {1400: 10.0, 400: 6.0}  # the smallest figure text as shown, in CSS px
SVG_WIDTH = re.compile(r'viewBox="0 0 ([\d.]+) ')
SVG_FONT = re.compile(r"font(?:-size)?: ([\d.]+)px")
PRINT_CHECK = """() => [
    [...document.querySelectorAll('.table-box')].filter(box => box.scrollWidth > box.clientWidth + 1).length,
    [...document.querySelectorAll('details.fold')].filter(d => d.getBoundingClientRect().height
        <= d.querySelector('summary').getBoundingClientRect().height + 1).length,
]"""


def example_report(out: Path) -> Path:
    _, written = audit_results(
        AuditRequest(ROOT / "examples" / "results.csv", claims=ROOT / "examples" / "paper-claims.toml"), out
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


def bundle_report(out: Path) -> Path:
    """A signed bundle audited with a copy of its table whose first row's EER differs: FAIL, table-binding."""
    bundle = build_bundle(out, analysis='equivalence_margin = 0.05\nn_resamples = 40\nseed = 3\ndev_speakers = ["s0"]')
    table = pd.read_csv(bundle.root / "results.csv", dtype=str, keep_default_na=False)
    table.loc[0, "eer"] = "0.3"
    table.to_csv(out / "paper.csv", index=False)
    _, written = audit_results(
        AuditRequest(out / "paper.csv", bundle=bundle.root, key=bundle.public_key), out / "report"
    )
    return written[2]


CHECKS = """() => {
    const box = element => element.getBoundingClientRect();
    const headline = document.getElementById('headline-results');
    let table = headline;
    while (table && !(table.classList && table.classList.contains('table-box'))) table = table.nextElementSibling;
    const items = [...document.querySelectorAll('nav.toc li')].map(li => Math.round(box(li).left));
    return {
        bodyWidth: document.body.scrollWidth,
        pageWidth: document.documentElement.scrollWidth,
        viewport: window.innerWidth,
        pageHeight: document.documentElement.scrollHeight,
        viewportMeta: document.querySelector('meta[name=viewport]') !== null,
        images: [...document.images].map(i => ({ok: i.complete && i.naturalWidth > 0, alt: i.alt.length})),
        links: [...document.querySelectorAll('a[href^="#"]')].map(a => a.getAttribute('href').slice(1)),
        unresolved: [...document.querySelectorAll('a[href^="#"]')]
            .filter(a => !document.getElementById(a.getAttribute('href').slice(1))).length,
        verdict: document.querySelector('.callout').textContent,
        verdictTop: box(document.querySelector('.callout')).top,
        headlineTableTop: table ? box(table).top : null,
        scrollingTables: [...document.querySelectorAll('.table-box')]
            .filter(b => b.scrollWidth > b.clientWidth + 1).length,
        tables: document.querySelectorAll('.table-box').length,
        contentsColumns: new Set(items).size,
        svgLinks: [...document.querySelectorAll('figcaption a')].map(a => a.getAttribute('href')),
        beforeAppendix: (() => {
            const appendix = [...document.querySelectorAll('h2')].find(h => h.textContent.startsWith('Appendix'));
            return appendix ? box(appendix).top + window.scrollY : document.documentElement.scrollHeight;
        })(),
    };
}"""
# Run after every summary was clicked: each <details> open with content below its summary; each figure's width.
OPENED = """() => ({
    closed: [...document.querySelectorAll('details')].filter(d => !d.open).length,
    empty: [...document.querySelectorAll('details')].filter(d => d.children.length < 2
        || d.getBoundingClientRect().height <= d.querySelector('summary').getBoundingClientRect().height + 1).length,
    details: document.querySelectorAll('details').length,
    pageWidth: document.documentElement.scrollWidth,
    figures: [...document.querySelectorAll('figure')].map(f => ({
        svg: (f.querySelector('figcaption a') || {getAttribute: () => null}).getAttribute('href'),
        width: f.querySelector('img').getBoundingClientRect().width,
        right: f.querySelector('img').getBoundingClientRect().right,
    })),
})"""


def smallest_text(svg: str, shown_width: float) -> float:
    """The smallest font size of an SVG figure (in its viewBox units), in CSS px at ``shown_width``."""
    return min(float(size) for size in SVG_FONT.findall(svg)) * shown_width / float(SVG_WIDTH.search(svg)[1])


@pytest.mark.slow
@pytest.mark.parametrize(
    "make", [example_report, scores_report, bundle_report], ids=["example-table", "audit-scores", "bundle-fail"]
)
def test_the_report_in_headless_chromium(tmp_path: Path, make: object) -> None:
    page_path = make(tmp_path)  # type: ignore[operator]
    page_url = page_path.as_uri()
    errors: list[str] = []
    requests: list[str] = []
    found, opened = {}, {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        try:
            for width in WIDTHS:
                page = browser.new_page(viewport={"width": width, "height": SCREEN_HEIGHT})
                page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
                page.on("pageerror", lambda error: errors.append(str(error)))
                page.on("request", lambda request: requests.append(request.url))
                page.goto(page_url, wait_until="load")
                found[width] = page.evaluate(CHECKS)
                ARTEFACTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(ARTEFACTS / f"{make.__name__}-{width}px.png"))  # type: ignore[attr-defined]
                for summary in page.locator("details > summary").all():  # in document order: outer before inner
                    summary.click()
                opened[width] = page.evaluate(OPENED)
            # In print, at a paper-like width, folds unfolded and tables wrapping instead of scrolling: no column is
            # cut, nothing folded away.
            page = browser.new_page(viewport={"width": PRINT_WIDTH, "height": 1000})
            page.goto(page_url, wait_until="load")
            page.emulate_media(media="print")
            cut_tables, folded_away = page.evaluate(PRINT_CHECK)
        finally:
            browser.close()
    print(make.__name__, json.dumps({w: {k: v for k, v in f.items() if k not in ("images", "links")}  # type: ignore[attr-defined]
                                     for w, f in found.items()}),
          {w: {k: v for k, v in o.items() if k != "figures"} for w, o in opened.items()})  # fmt: skip
    assert errors == []
    assert [url for url in requests if url != page_url and not url.startswith("data:")] == []
    for width, seen in found.items():
        assert seen["viewportMeta"]
        assert seen["bodyWidth"] <= seen["viewport"] and seen["pageWidth"] <= seen["viewport"], (width, seen)
        assert seen["images"] and all(image["ok"] and image["alt"] > 0 for image in seen["images"])
        assert seen["links"] and seen["unresolved"] == 0
        assert seen["verdict"].startswith("Verdict: ")
        assert 0 <= seen["verdictTop"] < seen["headlineTableTop"] < SCREEN_HEIGHT, (width, seen)
        assert seen["svgLinks"] and all(link.endswith(".svg") for link in seen["svgLinks"])
    assert found[1400]["scrollingTables"] == 0, found[1400]
    assert found[1400]["beforeAppendix"] <= BEFORE_APPENDIX_PX, found[1400]
    for width, seen in opened.items():
        assert seen["closed"] == 0 and seen["empty"] == 0, (width, seen)
        assert seen["pageWidth"] <= width, (width, seen)
        assert seen["figures"] and all(0 < figure["right"] <= width for figure in seen["figures"]), (width, seen)
        for figure in seen["figures"]:
            if figure["svg"]:
                svg = (page_path.parent / figure["svg"]).read_text()
                assert smallest_text(svg, figure["width"]) >= FONT_FLOOR_PX[width], (width, figure)
    assert found[400]["contentsColumns"] == 1
    assert cut_tables == 0 and folded_away == 0
