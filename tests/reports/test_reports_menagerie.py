"""The menagerie figure (reports.figures.menagerie_figure) and its place in the speakers-under-stress section: drawn
as PNG and SVG from a synthetic report's statistics, the hardest compound cell chosen, and shown in its section (with
the section's second table) rather than under Figures."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import matplotlib
import matplotlib.style
import numpy as np
import pytest
from PIL import Image, ImageFont

from reports import write_report
from reports.blocks import Figure, Heading, Paragraph, Table
from reports.document import build_document
from reports.figures import MENAGERIE_SECTION, add_statistics_figures, menagerie_figure
from reports.figures.layout import DPI, _autoscaled, _font_file, _nice_ticks
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


SVG = "{http://www.w3.org/2000/svg}"


def _moved_report() -> dict[str, Any]:
    """``_report`` with every speaker moved (clean and stressed points apart, none covering another) and a speaker
    named ``a$b`` (no mathtext: drawn as written)."""
    report = _report()
    (result,) = report["statistics"]["menagerie"]
    clean = {f"s{i}": {"target_mean": 0.2 + 0.12 * i, "fa_enrol": 0.02 * i, "fa_test": 0.01 * (5 - i)}
             for i in range(6)}  # fmt: skip
    stressed = {name: {"target_mean": row["target_mean"] - 0.15, "fa_enrol": row["fa_enrol"] + 0.05,
                       "fa_test": row["fa_test"] + 0.03} for name, row in clean.items()}  # fmt: skip
    clean["a$b"], stressed["a$b"] = ({"target_mean": 0.9, "fa_enrol": 0.0, "fa_test": 0.0},
                                     {"target_mean": 0.5, "fa_enrol": 0.2, "fa_test": 0.12})  # fmt: skip
    result["speakers"] = keyed_table(clean, "speaker")
    result["stressed"][1]["speakers"] = keyed_table(stressed, "speaker")
    result["stressed"][1]["changes"] = [{"speaker": "a$b", "clean": "sheep", "stressed": "lamb"}]
    return report


def _matplotlib_scales(
    box: tuple[float, float, float, float], xs: list[float], ys: list[float], goat: float, cut: float
) -> tuple[tuple[float, float], tuple[float, float], list[str], list[str]]:
    """The limits and tick labels matplotlib gives axes of ``box`` (left, top, width, height, inches, in a figure 6.4
    by 3.6 in) with the points ``xs``, ``ys`` scattered and the cuts drawn (axvline, axhline), as the menagerie was
    drawn by matplotlib's artists: the oracle of the plain figure's scales."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.style.context("default"), matplotlib.rc_context({"font.size": 9}):
        figure = Figure(figsize=(6.4, 3.6), dpi=DPI)
        FigureCanvasAgg(figure)
        left, top, width, height = box
        axes = figure.add_axes((left / 6.4, 1 - (top + height) / 3.6, width / 6.4, height / 3.6))
        axes.scatter(xs, ys, s=18)
        axes.axvline(goat)
        axes.axhline(cut)
        x_limits, y_limits = axes.get_xlim(), axes.get_ylim()
        labels = []
        for axis, (low, high) in ((axes.xaxis, x_limits), (axes.yaxis, y_limits)):
            ticks = [t for t in axis.get_major_locator()() if low <= t <= high]
            labels.append(list(axis.get_major_formatter().format_ticks(ticks)))
    return x_limits, y_limits, labels[0], labels[1]


@pytest.fixture(scope="module")
def moved() -> Any:
    (figure,) = menagerie_figure(_moved_report())
    return figure


def _frames(svg: bytes) -> list[tuple[float, float, float, float]]:
    """The panels' frames (unfilled black rectangles) in the SVG, in inches: left, top, width, height."""
    root = ElementTree.fromstring(svg)
    return [
        tuple(float(rect.get(key, "nan")) / 72 for key in ("x", "y", "width", "height"))  # type: ignore[misc]
        for rect in root.iter(f"{SVG}rect")
        if "fill: none; stroke: #000000" in rect.get("style", "")
    ]


def test_each_marker_is_where_matplotlibs_scales_put_its_point(moved: Any) -> None:
    """Each speaker's clean point is blue (tab:blue) and its stressed point red (tab:red) at the pixel that the
    panel's frame (read from the SVG) and matplotlib's own autoscaled limits of those points and cuts (an Axes of
    the frame's size) put it: the data-to-pixel map computed independently of the figure's."""
    with Image.open(io.BytesIO(moved.png)) as image:
        pixels = np.asarray(image.convert("RGB")).astype(int)
    (result,) = _moved_report()["statistics"]["menagerie"]
    before, after = keyed_rows(result["speakers"]), keyed_rows(result["stressed"][1]["speakers"])
    frames = _frames(moved.svg)
    assert len(frames) == 2
    for box, measure, kind in zip(frames, ("fa_enrol", "fa_test"), ("lamb", "wolf"), strict=True):
        points = [(row["target_mean"], row[measure]) for rows in (before, after) for row in rows.values()]
        xs, ys = [x for x, _ in points], [y for _, y in points]
        (x0, x1), (y0, y1), _, _ = _matplotlib_scales(box, xs, ys, result["cuts"]["goat"], result["cuts"][kind])
        left, top, width, height = box
        for rows, colour in ((before, (31, 119, 180)), (after, (214, 39, 40))):
            for name, row in rows.items():
                x = (left + (row["target_mean"] - x0) / (x1 - x0) * width) * DPI
                y = (top + height - (row[measure] - y0) / (y1 - y0) * height) * DPI
                seen = pixels[round(y - 0.5), round(x - 0.5)]  # the pixel whose centre is nearest the point
                assert np.abs(seen - colour).max() <= 12, (measure, name, seen)


def test_the_svg_holds_every_name_title_tick_label_and_legend_label_as_text(moved: Any) -> None:
    """The SVG parses as XML; its texts hold the four named speakers per panel (the one changing category,
    ``a$b`` as written, and three others moved as far), both titles, the axis labels, the legend's four labels
    and, per panel, the tick labels matplotlib would have written for its scales."""
    shown = [text.text for text in ElementTree.fromstring(moved.svg).iter(f"{SVG}text")]
    assert shown.count("a$b") == 2 and sum(text in {f"s{i}" for i in range(6)} for text in shown) == 2 * 3
    assert {"E13/m1", "old x noise", "mean target score", "FA share enrolment side", "FA share test side"} <= set(shown)
    assert {"clean", "stressed", "goat cut", "lamb / wolf cut"} <= set(shown)
    (result,) = _moved_report()["statistics"]["menagerie"]
    before, after = keyed_rows(result["speakers"]), keyed_rows(result["stressed"][1]["speakers"])
    for box, measure, kind in zip(_frames(moved.svg), ("fa_enrol", "fa_test"), ("lamb", "wolf"), strict=True):
        points = [(row["target_mean"], row[measure]) for rows in (before, after) for row in rows.values()]
        _, _, x_labels, y_labels = _matplotlib_scales(box, [x for x, _ in points], [y for _, y in points],
                                                      result["cuts"]["goat"], result["cuts"][kind])  # fmt: skip
        assert set(x_labels) <= set(shown) and set(y_labels) <= set(shown), (x_labels, y_labels)


def test_the_same_report_gives_the_same_bytes_at_the_figures_size(moved: Any) -> None:
    (again,) = menagerie_figure(_moved_report())
    assert again.png == moved.png and again.svg == moved.svg
    with Image.open(io.BytesIO(moved.png)) as image:
        assert image.size == (640, 360) and image.mode == "RGB"  # 6.4 x 3.6 in at 100 dpi
    root = ElementTree.fromstring(moved.svg)
    assert (root.get("width"), root.get("height")) == ("460.8pt", "259.2pt")


@pytest.mark.parametrize("seed", range(4))
def test_ticks_and_limits_are_matplotlibs(seed: int) -> None:
    """``_nice_ticks`` and ``_autoscaled`` against matplotlib's AutoLocator, ScalarFormatter and autoscaling (5 %
    margins, a single value widened) on random data of the menagerie's kinds of range, on axes of 1 to 9 bins."""
    from matplotlib.ticker import MaxNLocator, ScalarFormatter

    random = np.random.default_rng(seed)
    for _ in range(200):
        low = float(random.uniform(-1.0, 1.0))
        values = [low, low + float(random.choice([0.0, 1e-3, 0.05, 0.3, 1.5]))]
        with matplotlib.style.context("default"):
            from matplotlib.figure import Figure

            axes = Figure().add_subplot()
            axes.scatter(values, values)
            limits = axes.get_xlim()
        assert np.allclose(_autoscaled(values), limits, rtol=0, atol=1e-12), (values, limits)
        bins = int(random.integers(1, 10))
        locator = MaxNLocator(nbins=bins, steps=[1, 2, 2.5, 5, 10])
        span = limits[1] - limits[0]
        ticks = [t for t in locator.tick_values(*limits) if limits[0] - 1e-10 * span <= t <= limits[1] + 1e-10 * span]
        formatter = ScalarFormatter(useOffset=False)
        formatter.axis = axes.xaxis
        ours, labels = _nice_ticks(*limits, bins)
        assert np.allclose(ours, ticks, rtol=0, atol=1e-9 * span) and labels == formatter.format_ticks(ticks)
