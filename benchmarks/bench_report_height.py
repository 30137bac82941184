"""How tall ``report.html`` is in headless Chromium, before its appendix and in all, at 1400 px and 400 px (issue 41).

Usage: ``PYTHONPATH=. python benchmarks/bench_report_height.py DIR [--build] [--quick] [--json]``. ``--build`` audits,
under ``DIR``, the browser test's three reports (the example table, an ``audit scores`` report, a signed synthetic
bundle audited with a differing table) and a paper-scale-ish one: ``runner.rehearsal.write_paper_bundle`` at 5 % of
the trial budget, 12 encoders, unpadded (every statistic of a bundle; ``--quick``: 1 %, 3 encoders), each
``DIR/<name>/.../report.json`` kept.
Every run then writes each report again from its ``report.json`` with the ``reports`` on ``PYTHONPATH``
(``DIR/<name>/now/``), so the same audits are measured before and after a change to the rendering, and prints per
report and width: the top of the first ``Appendix`` heading (the height a reader scrolls before the appendix), the
page height, the widest figure and the number of ``<details>``. Needs the browser extra (playwright) and Debian's
``/usr/bin/chromium``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

WIDTHS = (1400, 400)
MEASURE = """() => {
    const appendix = [...document.querySelectorAll('h2')].find(h => h.textContent.startsWith('Appendix'));
    return {
        beforeAppendix: appendix ? Math.round(appendix.getBoundingClientRect().top + window.scrollY) : null,
        height: document.documentElement.scrollHeight,
        widestFigure: Math.max(0, ...[...document.images].map(i => Math.round(i.getBoundingClientRect().width))),
        details: document.querySelectorAll('details').length,
    };
}"""


def build(folder: Path, quick: bool = False) -> None:
    """The four audits, each report under ``folder/<name>/``; ``quick``: a small paper-scale-ish bundle."""
    from audit.cli import audit_results
    from audit.verify import AuditRequest
    from runner.rehearsal import write_paper_bundle
    from tests.browser.test_report_in_chromium import bundle_report, example_report, scores_report

    for make in (example_report, scores_report, bundle_report):
        out = folder / make.__name__
        out.mkdir(parents=True, exist_ok=True)
        make(out)
    scale, labels = (0.01, 3) if quick else (0.05, 12)
    paper = write_paper_bundle(folder / "paper-bundle", scale=scale, labels=labels, pad=False, seed=7)
    audit_results(
        AuditRequest(paper.root / "results.csv", bundle=paper.root, key=paper.public_key), folder / "paper_report"
    )


def report_json(folder: Path) -> Path:
    """The ``report.json`` an audit wrote under ``folder`` (directly or in its ``report/``)."""
    return next(path for path in (folder / "report.json", folder / "report" / "report.json") if path.is_file())


def measure(
    folder: Path, measured: Callable[[str, int, dict[str, Any]], None] | None = None
) -> dict[str, dict[int, dict[str, Any]]]:
    """Each report written again with this checkout's code, and its heights at each width (each told to
    ``measured`` as it is taken)."""
    from playwright.sync_api import sync_playwright

    from reports import write_report
    from tests.browser.test_report_in_chromium import CHROMIUM, FLAGS, SCREEN_HEIGHT

    pages = {}
    for name in ("example_report", "scores_report", "bundle_report", "paper_report"):
        if (folder / name).is_dir():
            report = json.loads(report_json(folder / name).read_text())
            pages[name] = write_report(report, folder / name / "now")[2]
    found: dict[str, dict[int, dict[str, Any]]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        try:
            for name, page_path in pages.items():
                for width in WIDTHS:
                    page = browser.new_page(viewport={"width": width, "height": SCREEN_HEIGHT})
                    page.goto(page_path.as_uri(), wait_until="load")
                    found.setdefault(name, {})[width] = page.evaluate(MEASURE)
                    page.close()
                    if measured is not None:
                        measured(name, width, found[name][width])
        finally:
            browser.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--build", action="store_true", help="audit the four reports into FOLDER first")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    parser.add_argument("--quick", action="store_true", help="with --build: a small paper-scale-ish bundle")
    options = parser.parse_args()
    if options.build:
        build(options.folder, options.quick)
    found = measure(options.folder, None if options.json else _line)
    if options.json:
        print(json.dumps(found, indent=1))


def _line(name: str, width: int, seen: dict[str, Any]) -> None:
    print(
        f"{name:15} {width:5} px: before the appendix {seen['beforeAppendix']} px, in all {seen['height']} px, "
        f"widest figure {seen['widestFigure']} px, {seen['details']} <details>",
        flush=True,
    )


if __name__ == "__main__":
    main()
