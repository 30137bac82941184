"""The menagerie figure (reports.figures.menagerie_figure) and its place in the speakers-under-stress section: drawn
as PNG and SVG from a synthetic report's statistics, the hardest compound cell chosen, and shown in its section (with
the section's second table) rather than under Figures."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from PIL import Image, ImageFont

from reports import write_report
from reports.blocks import Figure, Heading, Paragraph, Table
from reports.document import build_document
from reports.figures import MENAGERIE_SECTION, add_statistics_figures, menagerie_figure
from reports.figures.layout import _font_file
from schemas import keyed_rows, keyed_table


def _speakers(shift: float) -> dict[str, Any]:
    """Six speakers as statistics.menagerie writes them: a table, a list a speaker."""
    rows = {
        f"s{i}": {"target_mean": 1.0 + 0.1 * i - shift * (i < 2), "fa_enrol": 0.05 * i, "fa_test": 0.02 * (5 - i)}
        for i in range(6)
    }
    return keyed_table(rows, "speaker")


def _report() -> dict[str, Any]:
    """One clean reference with two compound cells: ``old x noise`` the harder (EER 0.3), where s0 and s1 drop."""
    key = {"experiment": "E13", "model": "m1", "condition": "clean", "record_id": "r-clean"}
    cells = [
        {"key": {**key, "condition": condition, "record_id": f"r-{condition}"}, "eer": eer,
         "speakers": _speakers(shift), "changes": changes}
        for condition, eer, shift, changes in (
            ("old x babble", 0.2, 0.0, []),
            ("old x noise", 0.3, 0.8, [{"speaker": "s0", "clean": "sheep", "stressed": "goat"}]),
        )
    ]  # fmt: skip
    result = {"key": key, "eer": 0.1, "speakers": _speakers(0.0), "stressed": cells,
              "cuts": {"goat": 1.05, "lamb": 0.2, "wolf": 0.08}}  # fmt: skip
    section = {
        "id": MENAGERIE_SECTION, "title": "Speakers under stress", "status": "info", "lines": ["rule"],
        "table": [{"speaker": "s0", "clean": "sheep", "stressed": "goat"}],
        "tables": [{"title": "Per-speaker EER, clean and stressed", "rows": [{"speaker": "s0", "EER clean": "0.1"}]}],
    }  # fmt: skip
    return {"verdict": "pass", "statistics": {"menagerie": [result]}, "sections": [section]}


def test_the_figure_is_drawn_as_png_and_svg_for_the_hardest_cell() -> None:
    (figure,) = menagerie_figure(_report())
    assert figure.png is not None and figure.svg is not None and figure.section == MENAGERIE_SECTION
    with Image.open(io.BytesIO(figure.png)) as image:
        assert image.format == "PNG" and image.size == (640, 360)  # a row of two panels, 6.4 in wide
    assert figure.svg.lstrip().startswith(b"<?xml") and b"old x noise" in figure.svg
    assert b"old x babble" not in figure.svg  # only the hardest cell
    assert "6 and 6 speakers (enrolment and test side) from clean to old x noise (EER 0.1 to 0.3)" in figure.alt
    assert menagerie_figure({"statistics": {"det_bands": []}}) == []


def test_the_figure_is_skipped_with_why_when_no_speaker_can_be_placed() -> None:
    """Speakers without a mean target score on both records: no point to draw, never an empty figure."""
    report = _report()
    (result,) = report["statistics"]["menagerie"]
    for record in (result, *result["stressed"]):
        rows = keyed_rows(record["speakers"])
        record["speakers"] = keyed_table({name: {**row, "target_mean": None} for name, row in rows.items()}, "speaker")
    (figure,) = menagerie_figure(report)
    assert figure.png is None and "no speaker has a mean target score" in figure.skipped_because


def test_the_figure_goes_in_its_section_and_the_section_shows_its_second_table(tmp_path: Path) -> None:
    report = _report()
    figures = add_statistics_figures([], report)
    blocks = build_document(report, figures)
    headings = [i for i, block in enumerate(blocks) if isinstance(block, Heading) and block.level == 2]
    (start,) = [i for i in headings if blocks[i].text.startswith("Speakers under stress")]  # type: ignore[union-attr]
    section = blocks[start : min([i for i in headings if i > start], default=len(blocks))]
    assert [type(block) for block in section if isinstance(block, Table | Paragraph | Figure)] == [
        Table, Paragraph, Table, Figure
    ]  # fmt: skip
    (figures_heading,) = [i for i in headings if blocks[i].text == "Figures"]  # type: ignore[union-attr]
    assert not any(
        isinstance(block, Figure) for block in blocks[figures_heading : headings[headings.index(figures_heading) + 1]]
    )
    written = {path.name for path in write_report(report, tmp_path / "out", figures)}
    assert {"menagerie.png", "menagerie.svg"} <= written


def test_the_named_speakers_do_not_overprint_each_other() -> None:
    """Four named speakers whose stressed points nearly coincide (all four changing category): each name is put
    beside its marker, or moved off it with a leader, where it covers no other name. The names' boxes are read from
    the SVG (baseline position) with their extents measured independently, by Pillow's FreeType in the figures'
    font; with every name at one fixed offset they covered each other."""
    report = _report()
    (result,) = report["statistics"]["menagerie"]
    crowded = {f"s{i}": {"target_mean": 0.5 + 0.001 * i, "fa_enrol": 0.1 + 0.001 * i, "fa_test": 0.1} for i in range(6)}
    hardest = result["stressed"][1]
    hardest["speakers"] = keyed_table(crowded, "speaker")
    hardest["changes"] = [{"speaker": f"s{i}", "clean": "sheep", "stressed": "goat"} for i in range(4)]
    (figure,) = menagerie_figure(report)
    assert figure.svg is not None
    texts = ElementTree.fromstring(figure.svg).iter("{http://www.w3.org/2000/svg}text")
    named = [(float(text.get("x", "nan")), float(text.get("y", "nan")), text.text or "") for text in texts]
    named = [entry for entry in named if entry[2] in {"s0", "s1", "s2", "s3"}]
    assert len(named) == 8  # four in each of the two panels
    font = ImageFont.truetype(_font_file(), 900)  # 100 x the names' size in the SVG's units (points): whole pixels
    ascent, descent = (extent / 100 for extent in font.getmetrics())
    boxes = [(x, y - ascent, x + font.getlength(name) / 100, y + descent) for x, y, name in named]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            shared = min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])
            assert min(shared) <= 0.5, (a, b)
