"""A signed bundle whose names are hostile, audited with ``audit verify results.csv --bundle --key --out``: every
figure of a bundle report drawn (DET curves with their bands, score distributions, the Bayes error of a declared
calibration, the heatmap, the interaction plots, the menagerie) from encoders, condition levels, speakers and a corpus
named with markup, control characters, a right-to-left override, CJK, Markdown specials and 200 characters.

The names are written the same in every file that holds them (results.csv, the trial lists, the corpus table,
checkpoints.json, the run config) and the bundle is signed after, so it verifies: the audit must end as the same
bundle with plain names ends, every SVG must be XML, report.html and report.md must show the names as text (no
markup of theirs, no raw control or direction-override character, no table cell split by a ``|``), every PNG must open.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from PIL import Image

from tests.audit.test_cli import ROOT
from tests.provenance.synthetic_bundle import Names, build_bundle
from tests.reports.figure_text import past_the_edge

SCRIPT = "m<script>alert(1)</script>&amp;"
LONG = "encoder-" + "x" * 192
OVERRIDE = "babble\x01\u202eevil"  # U+0001 and a right-to-left override, no newline
MARKDOWN = "o\"p'|*s*"
HOSTILE = Names(
    models=(SCRIPT, LONG),
    levels={"babble": OVERRIDE, "opus": MARKDOWN},
    speakers=("话者一", "话者二", "s\"'|*2*", "\u202espk", "s4\x01", "y" * 200),
    corpus="c\"o'r|p*u*s",
)
FIGURES = {
    "bayes_error",
    "det_curves_E13",
    "eer_heatmap",
    "ie_vs_prediction",
    "interaction_plots",
    "menagerie",
    "score_distributions",
}
# Raw characters no figure or document may hold: controls (tab, newline and carriage return aside: the files' own
# layout), the two non-characters XML and HTML lack, and the explicit direction embeddings, overrides and isolates,
# which would reorder the report's own text after a name.
RAW = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff\u202a-\u202e\u2066-\u2069]")


def _audit(tmp_path: Path, names: Names | None) -> tuple[int, str, Path]:
    """Build the bundle (a declared calibration and clean enrolment/test conditions, so the Bayes error is drawn)
    and audit it into ``tmp_path/report``."""
    dev = ", ".join(json.dumps(names.speaker(k) if names else f"s{k}", ensure_ascii=False) for k in (0, 1))
    analysis = (
        f"equivalence_margin = 0.05\nn_resamples = 40\nseed = 3\ndev_speakers = [{dev}]\n"
        'calibration = { method = "platt", fit_on = "dev" }'
    )

    def conditions(results: Any) -> Any:
        clean = results["level_a"].eq("none") & results["level_b"].eq("none")
        return results.assign(enrol_condition="clean", test_condition=results["condition"].where(~clean, "clean"))

    bundle = build_bundle(tmp_path, analysis=analysis, names=names, results_edit=conditions)
    out = tmp_path / "report"
    done = subprocess.run(  # the command a reviewer runs: all it writes to stderr, the figure drawer's too
        [sys.executable, "-m", "audit.cli", "verify", str(bundle.root / "results.csv"), "--bundle", str(bundle.root),
         "--key", str(bundle.public_key), "--out", str(out)],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip
    return done.returncode, done.stderr, out


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _page(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


def _flags(out: Path) -> list[tuple[str, str]]:
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return sorted((flag["id"], flag["severity"]) for flag in report["flags"])


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str, Path]]:
    return {
        kind: _audit(tmp_path_factory.mktemp(kind), names) for kind, names in (("plain", None), ("hostile", HOSTILE))
    }


def test_the_hostile_bundle_ends_as_the_plain_one_with_every_figure(
    audited: dict[str, tuple[int, str, Path]],
) -> None:
    (plain_code, _, plain), (code, stderr, out) = audited["plain"], audited["hostile"]
    assert code == plain_code == 0, stderr
    # No traceback and no warning (of a glyph the figures' font lacks): only the audit's own notes (the numba
    # kernels compiled on a first run), as the plain bundle's
    for kind in ("plain", "hostile"):
        assert [line for line in audited[kind][1].splitlines() if not line.startswith("audit: ")] == [], kind
    assert _flags(out) == _flags(plain)
    drawn = {path.stem for path in (out / "figures").glob("*.svg")}
    assert drawn == {path.stem for path in (plain / "figures").glob("*.svg")} == FIGURES
    assert {path.stem for path in (out / "figures").glob("*.png")} == FIGURES


def test_every_svg_is_xml_showing_the_names_without_raw_control_characters(
    audited: dict[str, tuple[int, str, Path]],
) -> None:
    out = audited["hostile"][2]
    texts: dict[str, str] = {}
    for path in sorted((out / "figures").glob("*.svg")):
        tree = ET.parse(path)  # the markup of a name is escaped, its controls written as their escapes
        assert RAW.findall(path.read_text(encoding="utf-8")) == [], path.name
        texts[path.stem] = "\n".join(node.text or "" for node in tree.iter() if node.tag.endswith("text"))
    for figure in ("bayes_error", "det_curves_E13", "eer_heatmap", "score_distributions"):
        assert SCRIPT in texts[figure], figure  # drawn as text, as written
    for model in ("m<script>alert(1)", "encoder-xxxxxxxxxx"):  # a panel's title names its encoder, cut
        assert f"E13/{model}" in texts["menagerie"], model
    for figure in ("det_curves_E13", "eer_heatmap", "menagerie"):
        assert "babble\\x01\\u202eevil" in texts[figure], figure
    assert "话者一" in texts["menagerie"] and "s4\\x01" in texts["menagerie"]
    for path in sorted((out / "figures").glob("*.png")):
        with Image.open(path) as image:
            image.verify()


def test_no_name_runs_past_its_figure(audited: dict[str, tuple[int, str, Path]]) -> None:
    """A 200-character encoder or speaker is cut where it is drawn (a legend entry, a panel's title, a point's
    name), ``...`` last: the other encoder's entry stays on the figure."""
    for kind in ("plain", "hostile"):
        for svg in sorted((audited[kind][2] / "figures").glob("*.svg")):
            assert past_the_edge(svg.read_bytes()) == [], (kind, svg.name)


def test_report_html_shows_the_names_as_text(audited: dict[str, tuple[int, str, Path]]) -> None:
    html = (audited["hostile"][2] / "report.html").read_text(encoding="utf-8")
    assert "<script" not in html.lower()
    assert RAW.findall(html) == []
    page = _page(html)
    assert "script" not in page.tags
    shown = "".join(page.text)
    assert SCRIPT in shown and "babble\\x01\\u202eevil" in shown and "话者一" in shown


def test_report_md_keeps_every_table_row_to_its_columns(audited: dict[str, tuple[int, str, Path]]) -> None:
    markdown = (audited["hostile"][2] / "report.md").read_text(encoding="utf-8")
    assert RAW.findall(markdown) == []
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    assert "<script" not in html.lower()
    tables = re.findall(r"<table>.*?</table>", html, flags=re.S)
    assert tables
    for table in tables:
        widths = {row.count("<td") + row.count("<th") for row in re.findall(r"<tr>.*?</tr>", table, flags=re.S)}
        assert len(widths) == 1, table[:300]
    for table in re.findall(r"(?:^\|.*\n)+", markdown, flags=re.M):  # the source too: a row's unescaped pipes
        assert len({len(re.findall(r"(?<!\\)\|", row)) for row in table.splitlines()}) == 1, table[:300]
    shown = "".join(_page(html).text)
    assert SCRIPT in shown and MARKDOWN in shown and "话者一" in shown
