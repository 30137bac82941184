"""The table's figures of contrasts as ``reports.figures.plain`` writes them (lines and markers by Agg's path
renderer, frames, ticks and texts by Pillow, the SVG as text), checked against oracles of their own: each point
where matplotlib's own autoscaling of its panel (an Axes of the size the SVG frames) puts it, the PNG decoded and its
pixels against the series' colours, the tick labels matplotlib's AutoLocator and ScalarFormatter write for that
Axes, the SVG parsed as XML, the size against the figure's inches."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from typing import Any

import matplotlib
import matplotlib.style
import numpy as np
import pytest
from PIL import Image

from reports.figures import DPI, FigureOutcome, interaction_plots
from tests.reports.figure_text import past_the_edge

SVG = "{http://www.w3.org/2000/svg}"
TAB10 = [tuple(round(255 * c) for c in matplotlib.colormaps["tab10"](i)[:3]) for i in range(10)]

# Two families of two contrasts each: their means (clean, A, B, A+B) E13 speaker 0.1, 0.3, 0.2, 0.25 (the lines
# cross: its legend where they leave room) and E14 ssl 0.30, 0.28, 0.12, 0.05.
TERMS = {("E13", "speaker"): [(0.1, 0.3, 0.2, 0.2), (0.1, 0.3, 0.2, 0.3)],
         ("E14", "ssl"): [(0.3, 0.28, 0.12, 0.05), (0.3, 0.28, 0.12, 0.05)]}  # fmt: skip
MEANS = {"E13 speaker": (0.1, 0.3, 0.2, 0.25), "E14 ssl": (0.3, 0.28, 0.12, 0.05)}


def _report(factor_a: str = "noise", factor_b: str = "codec") -> dict[str, Any]:
    contrasts = [
        {"experiment": experiment, "model_family": family, "factor_a": factor_a, "factor_b": factor_b,
         **dict(zip(("eer_clean", "eer_a", "eer_b", "eer_ab"), terms, strict=True))}
        for (experiment, family), rows in TERMS.items() for terms in rows
    ]  # fmt: skip
    return {"aggregates": {"contrasts": contrasts}}


@pytest.fixture(scope="module")
def plots() -> FigureOutcome:
    return interaction_plots(_report())


def _pixels(figure: FigureOutcome) -> np.ndarray:
    assert figure.png is not None
    with Image.open(io.BytesIO(figure.png)) as image:
        assert image.mode == "RGB"
        return np.asarray(image).astype(int)


def _frames(figure: FigureOutcome) -> list[tuple[float, float, float, float]]:
    """The panels' frames (unfilled black rectangles) in the SVG, in inches: left, top, width, height."""
    assert figure.svg is not None
    return [
        tuple(float(rect.get(key, "nan")) / 72 for key in ("x", "y", "width", "height"))  # type: ignore[misc]
        for rect in ET.fromstring(figure.svg).iter(f"{SVG}rect")
        if "fill: none; stroke: #000000" in rect.get("style", "")
    ]


def _matplotlib_scale(
    box: tuple[float, float, float, float], size: tuple[float, float], means: tuple[float, ...]
) -> tuple[tuple[float, float], tuple[float, float], list[str]]:
    """The x and y limits and the y tick labels that matplotlib gives an Axes of ``box`` (inches from the top left of
    a figure of ``size``) with the two lines plotted, as the figure was drawn by its artists (tick labels at 9 pt, the
    figures' text size): the oracle of the plain figure's scales."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.style.context("default"), matplotlib.rc_context({"font.size": 9}):
        figure = Figure(figsize=size, dpi=DPI)
        FigureCanvasAgg(figure)
        left, top, width, height = box
        axes = figure.add_axes((left / size[0], 1 - (top + height) / size[1], width / size[0], height / size[1]))
        axes.plot([0, 1], means[:2], marker="o")
        axes.plot([0, 1], means[2:], marker="s")
        (low, high) = axes.get_ylim()
        ticks = [t for t in axes.yaxis.get_major_locator()() if low <= t <= high]
        return axes.get_xlim(), (low, high), list(axes.yaxis.get_major_formatter().format_ticks(ticks))


def _to_pixels(
    box: tuple[float, float, float, float], limits: tuple[float, float, float, float], x: float, y: float
) -> tuple[float, float]:
    """(``x``, ``y``) in data units as pixels from the figure's top left, in a panel ``box`` (inches) whose axes run
    over ``limits`` (x low and high, y low and high)."""
    left, top, width, height = box
    x0, x1, y0, y1 = limits
    return (left + (x - x0) / (x1 - x0) * width) * DPI, (top + height - (y - y0) / (y1 - y0) * height) * DPI


def test_each_mean_is_where_matplotlibs_scales_put_it(plots: FigureOutcome) -> None:
    """Each family's four means are tab:blue (without B: clean and A) and tab:orange (with B) markers at the pixel
    that the panel's frame (read from the SVG) and matplotlib's own limits of those points put them, and each line's
    middle is its colour."""
    pixels = _pixels(plots)
    frames = _frames(plots)
    assert len(frames) == 2
    for box, means in zip(frames, MEANS.values(), strict=True):
        (x0, x1), (y0, y1), _ = _matplotlib_scale(box, (6.4, 4.4), means)

        def pixel(x: float, y: float, box: Any = box, limits: Any = (x0, x1, y0, y1)) -> np.ndarray:
            across, down = _to_pixels(box, limits, x, y)
            return pixels[round(down - 0.5), round(across - 0.5)]  # the pixel whose centre is nearest the point

        for (before, after), colour in zip((means[:2], means[2:]), TAB10, strict=False):
            for x, y in ((0.0, before), (1.0, after)):
                assert np.abs(pixel(x, y) - colour).max() <= 12, (box, x, y, pixel(x, y))
        before, after = means[2:]  # the line with B, at a quarter of its way (the lines cross in E13's middle)
        assert np.abs(pixel(0.25, before + (after - before) / 4) - TAB10[1]).max() <= 40


def _five() -> dict[str, Any]:
    """Five families (three rows of panels, each lower than a row of two's), of scales of their own; E0's from 0.1
    to 0.45, whose ticks are 0.1 apart for the room its panel has and 0.05 apart for a little more."""
    contrasts = [{"experiment": f"E{i}", "eer_clean": 0.1 + 0.03 * i, "eer_a": 0.45 if i == 0 else 0.2 - 0.02 * i,
                  "eer_b": 0.3 + i / 7, "eer_ab": 0.4 - 0.05 * i} for i in range(5)]  # fmt: skip
    return {"aggregates": {"contrasts": contrasts}}


@pytest.mark.parametrize("which", ["two", "five"])
def test_the_tick_marks_are_where_matplotlibs_scales_put_its_ticks(which: str, plots: FigureOutcome) -> None:
    """Below each panel a tick mark at x 0 and 1 and left of it one per y tick label matplotlib writes for the
    panel's scale (its labels read as numbers), at the pixel its limits put them (within a pixel): the scale and
    the AutoLocator's choice of ticks, against matplotlib's own."""
    figure = plots if which == "two" else interaction_plots(_five())
    report = _report() if which == "two" else _five()
    rows: dict[str, list[tuple[float, ...]]] = {}
    for row in report["aggregates"]["contrasts"]:
        name = f"{row['experiment']} {row.get('model_family') or ''}".strip()
        rows.setdefault(name, []).append(tuple(row[key] for key in ("eer_clean", "eer_a", "eer_b", "eer_ab")))
    means = [tuple(float(np.mean(column)) for column in zip(*terms, strict=True)) for _, terms in sorted(rows.items())]
    dark = _pixels(figure).max(axis=2) < 100
    size = (6.4, 4.4) if which == "two" else (6.4, 7.8)
    frames = _frames(figure)
    assert len(frames) == len(means)
    for box, family in zip(frames, means, strict=True):
        (x0, x1), (y0, y1), labels = _matplotlib_scale(box, size, family)
        left, top, width, height = box
        below = round((top + height) * DPI) + 2  # a row of the tick marks under the frame
        marks = np.flatnonzero(dark[below, round(left * DPI) - 3 : round((left + width) * DPI) + 4])
        expected = [(left + (x - x0) / (x1 - x0) * width) * DPI - round(left * DPI) + 3 for x in (0.0, 1.0)]
        assert len(marks) == 2 * len(expected) or len(marks) == len(expected), marks
        for x in expected:
            assert np.abs(marks - x).min() <= 1.0, (marks, expected)
        beside = round(left * DPI) - 3  # a column of the tick marks left of the frame
        column = np.flatnonzero(dark[:, beside])
        ticks = [float(label.replace("\u2212", "-")) for label in labels]
        expected = sorted((top + height - (y - y0) / (y1 - y0) * height) * DPI for y in ticks)  # downwards
        inside = column[(column >= top * DPI - 2) & (column <= (top + height) * DPI + 2)]
        runs = np.split(inside, np.flatnonzero(np.diff(inside) > 1) + 1)
        assert len(runs) == len(expected), (runs, expected)
        for run, y in zip(runs, expected, strict=True):
            assert abs(run.mean() + 0.5 - y) <= 1.0, (run, y)


def test_the_svg_holds_every_title_tick_label_and_legend_label_as_text(plots: FigureOutcome) -> None:
    """The SVG parses as XML; its texts hold each panel's title with its count, its y label, its x tick labels
    (clean and factor A), its legend's two labels and the y tick labels matplotlib writes for its scale."""
    assert plots.svg is not None
    shown = [text.text for text in ET.fromstring(plots.svg).iter(f"{SVG}text")]
    assert {"E13 speaker (n=2)", "E14 ssl (n=2)"} <= set(shown)
    assert shown.count("mean EER") == shown.count("clean") == shown.count("noise") == 2
    assert shown.count("without codec") == shown.count("with codec") == 2
    for box, means in zip(_frames(plots), MEANS.values(), strict=True):
        _, _, labels = _matplotlib_scale(box, (6.4, 4.4), means)
        assert labels and set(labels) <= set(shown), labels


def test_the_same_report_gives_the_same_bytes_at_the_figures_size(plots: FigureOutcome) -> None:
    again = interaction_plots(_report())
    assert again.png == plots.png and again.svg == plots.svg
    with Image.open(io.BytesIO(plots.png or b"")) as image:
        assert image.size == (640, 440)  # 6.4 x 4.4 in at 100 dpi: a row of two panels
    root = ET.fromstring(plots.svg or b"")
    assert (root.get("width"), root.get("height")) == ("460.8pt", "316.8pt")
    five = interaction_plots({"aggregates": {"contrasts": [
        {"experiment": f"E{i}", "eer_clean": 0.1, "eer_a": 0.2, "eer_b": 0.3, "eer_ab": 0.4} for i in range(5)
    ]}})  # fmt: skip
    with Image.open(io.BytesIO(five.png or b"")) as image:
        assert image.size == (640, 780)  # three rows of 2.6 in


def test_hostile_names_are_escaped_cut_and_drawn_as_written() -> None:
    """Markup, a ``$`` (no mathtext: drawn as written) and 200 characters as factor names: the SVG parses, holds
    the names as text, cut with ``...`` to the figure."""
    figure = interaction_plots(_report("<b>a$1</b>&amp;", "x" * 200))
    assert figure.svg is not None and b"<b>" not in figure.svg
    shown = [text.text or "" for text in ET.fromstring(figure.svg).iter(f"{SVG}text")]
    assert "<b>a$1</b>&amp;" in shown or any(text.startswith("<b>a$1") and text.endswith("...") for text in shown)
    assert any(text.startswith("with xxx") and text.endswith("...") for text in shown)
    assert past_the_edge(figure.svg) == []
