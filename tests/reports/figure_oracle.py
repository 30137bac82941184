"""Oracles of the figures drawn as plain shapes (``reports.figures.plain``), independent of their drawing: the panels'
frames read from the SVG, the PNG decoded, and the limits, ticks and tick labels matplotlib itself gives an Axes of a
frame's size over the same data (``_matplotlib_scale``), against which the tests place points and tick marks."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from typing import Any

import matplotlib
import matplotlib.style
import numpy as np
from PIL import Image

from reports.figures import DPI, FigureOutcome

SVG = "{http://www.w3.org/2000/svg}"
# matplotlib's default line colours (its tab10 property cycle) as 0-255 RGB: what a figure's series are drawn in.
TAB10 = [tuple(round(255 * c) for c in matplotlib.colormaps["tab10"](i)[:3]) for i in range(10)]


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


Scale = tuple[tuple[float, float], tuple[float, float], list[float], list[float], list[str], list[str]]


def _matplotlib_scale(box: tuple[float, float, float, float], size: tuple[float, float], draw: Any) -> Scale:
    """The x and y limits, ticks and tick labels that matplotlib gives an Axes of ``box`` (inches from the top left
    of a figure of ``size``) on which ``draw`` (a function of the Axes) plots the data, as the figure was drawn by its
    artists (tick labels at 9 pt, the figures' text size): the oracle of the plain figure's scales."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.style.context("default"), matplotlib.rc_context({"font.size": 9}):
        figure = Figure(figsize=size, dpi=DPI)
        FigureCanvasAgg(figure)
        left, top, width, height = box
        axes = figure.add_axes((left / size[0], 1 - (top + height) / size[1], width / size[0], height / size[1]))
        draw(axes)
        limits, ticks, labels = [], [], []
        for axis, (low, high) in ((axes.xaxis, axes.get_xlim()), (axes.yaxis, axes.get_ylim())):
            slack = 1e-10 * (high - low)
            shown = [float(t) for t in axis.get_major_locator()() if low - slack <= t <= high + slack]
            limits.append((low, high))
            ticks.append(shown)
            labels.append(list(axis.get_major_formatter().format_ticks(shown)))
        return limits[0], limits[1], ticks[0], ticks[1], labels[0], labels[1]


def _assert_tick_marks(pixels: np.ndarray, box: tuple[float, float, float, float], scale: Scale) -> None:
    """Below ``box`` (inches) a tick mark at each of the scale's x ticks and left of it one at each y tick, at the
    pixel its limits put them (within a pixel)."""
    dark = pixels.max(axis=2) < 100
    (x0, x1), (y0, y1), x_ticks, y_ticks, _, _ = scale
    left, top, width, height = box
    start = round(left * DPI) - 3
    marks = np.flatnonzero(dark[round((top + height) * DPI) + 2, start : round((left + width) * DPI) + 4])
    runs = np.split(marks, np.flatnonzero(np.diff(marks) > 1) + 1) if len(marks) else []
    expected = [(left + (x - x0) / (x1 - x0) * width) * DPI - start for x in x_ticks]
    assert len(runs) == len(expected), (runs, expected)
    for run, x in zip(runs, expected, strict=True):
        assert abs(run.mean() + 0.5 - x) <= 1.0, (run, x)
    column = np.flatnonzero(dark[:, round(left * DPI) - 3])  # a column of the tick marks left of the frame
    inside = column[(column >= top * DPI - 2) & (column <= (top + height) * DPI + 2)]
    runs = np.split(inside, np.flatnonzero(np.diff(inside) > 1) + 1)
    expected = sorted((top + height - (y - y0) / (y1 - y0) * height) * DPI for y in y_ticks)  # downwards
    assert len(runs) == len(expected), (runs, expected)
    for run, y in zip(runs, expected, strict=True):
        assert abs(run.mean() + 0.5 - y) <= 1.0, (run, y)


def _to_pixels(
    box: tuple[float, float, float, float], limits: tuple[float, float, float, float], x: float, y: float
) -> tuple[float, float]:
    """(``x``, ``y``) in data units as pixels from the figure's top left, in a panel ``box`` (inches) whose axes run
    over ``limits`` (x low and high, y low and high)."""
    left, top, width, height = box
    x0, x1, y0, y1 = limits
    return (left + (x - x0) / (x1 - x0) * width) * DPI, (top + height - (y - y0) / (y1 - y0) * height) * DPI


def _assert_legend_where_matplotlibs_best_puts_it(
    figure: FigureOutcome, size: tuple[float, float], draw: Any, first: str
) -> None:
    """The figure's legend entry ``first`` (read from its SVG) starts where matplotlib's ``loc="best"`` put that
    entry's text (within 3 pixels across, 10 down: a row's height may differ) over ``draw``'s plot of the same data
    on an Axes of the size the SVG frames, its legend at 8 pt: the oracle of the plain figure's legend place."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    assert figure.svg is not None
    (box,) = _frames(figure)
    (label,) = [t for t in ET.fromstring(figure.svg).iter(f"{SVG}text") if t.text == first]
    with matplotlib.style.context("default"), matplotlib.rc_context({"font.size": 9}):
        drawn = Figure(figsize=size, dpi=DPI)
        canvas = FigureCanvasAgg(drawn)
        left, top, width, height = box
        axes = drawn.add_axes((left / size[0], 1 - (top + height) / size[1], width / size[0], height / size[1]))
        draw(axes)
        legend = axes.legend(fontsize=8, loc="best")
        canvas.draw()
        (text,) = [text for text in legend.get_texts() if text.get_text() == first]
        extent = text.get_window_extent()
    x, y = float(label.get("x", "nan")) / 72 * DPI, size[1] * DPI - float(label.get("y", "nan")) / 72 * DPI
    assert abs(x - extent.x0) <= 3 and abs(y - (extent.y0 + extent.y1) / 2) <= 10, (x, y, extent)


def _assert_same_bytes_at_size(figure: FigureOutcome, again: FigureOutcome, size: tuple[float, float]) -> None:
    """``again`` (the same report drawn again) is ``figure`` byte for byte; its PNG is ``size`` inches at ``DPI``
    (RGB), its SVG ``size`` in points."""
    assert again.png == figure.png and again.svg == figure.svg
    with Image.open(io.BytesIO(figure.png or b"")) as image:
        assert image.size == (round(size[0] * DPI), round(size[1] * DPI)) and image.mode == "RGB"
    root = ET.fromstring(figure.svg or b"")
    assert (root.get("width"), root.get("height")) == tuple(f"{inches * 72:g}pt" for inches in size)
