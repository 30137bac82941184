"""The EER heatmap, condition by encoder (``aggregates.eer_by_model_condition``), in parts of a legible height on one
colour scale."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reports.figures.data import _number, _rows
from reports.figures.layout import (
    CHAR_INCHES,
    FIGSIZE_INCHES,
    LABEL_PAD_PT,
    LINE_EM,
    MARGIN_INCHES,
    SMALL_PT,
    TEXT_PT,
    TICK_INCHES,
    TITLE_GAP_INCHES,
    _nice_ticks,
    _text_inches,
    _tick_bins,
)
from reports.figures.outcome import FigureOutcome
from reports.figures.plain import BLACK, WHITE, Cells, Frame, Line, Shape, Text, _plain
from reports.format import format_number, visible_text

if TYPE_CHECKING:
    from matplotlib.colors import Colormap


MAX_HEATMAP_ROWS = 36  # conditions in one heatmap, a row each; more are drawn in further parts
HEATMAP_ROW_INCHES = 0.26  # a row: its label at TEXT_PT and a value at SMALL_PT, with room between rows
HEATMAP_COLUMN_INCHES = 0.9  # an encoder's column at the widest; narrower where many share the figure's width
COLORBAR_INCHES = 1.0  # the colour bar beside a heatmap: its gap, the bar, its tick labels and its label
COLORBAR_GAP_INCHES, COLORBAR_WIDTH_INCHES = 0.15, 0.15


def eer_heatmap(report: Mapping[str, Any]) -> list[FigureOutcome]:
    """Mean EER per experiment/condition (rows) and encoder (columns), in parts of at most ``MAX_HEATMAP_ROWS``
    conditions (``eer_heatmap.png``, then ``eer_heatmap_2.png``, ...: a gallery, each experiment's conditions in one
    part where they fit) on one colour scale; each part sized from its numbers (``_heatmap_part``)."""
    filename, caption = "eer_heatmap.png", "EER per encoder and condition (each row's own EER variant)"
    rows = [r for r in _rows(report, "eer_by_model_condition") if _number(r.get("eer_mean")) is not None]
    if not rows:
        return [FigureOutcome(filename, caption, None, "no EER per encoder and condition in the report")]
    models = sorted({str(r["model"]) for r in rows})
    cell = {(str(r["model"]), f"{r['experiment']} {r['condition']}"): float(r["eer_mean"]) for r in rows}
    experiment_of = {f"{r['experiment']} {r['condition']}": str(r["experiment"]) for r in rows}
    experiments: dict[str, list[str]] = {}
    for condition in sorted(experiment_of):
        experiments.setdefault(experiment_of[condition], []).append(condition)
    parts: list[list[str]] = [[]]
    for conditions in experiments.values():
        if parts[-1] and len(parts[-1]) + len(conditions) > MAX_HEATMAP_ROWS:
            parts.append([])
        for start in range(0, len(conditions), MAX_HEATMAP_ROWS):
            if len(parts[-1]) + len(conditions[start : start + MAX_HEATMAP_ROWS]) > MAX_HEATMAP_ROWS:
                parts.append([])
            parts[-1] += conditions[start : start + MAX_HEATMAP_ROWS]
    top = max(cell.values())
    if len(parts) == 1:
        return [_heatmap_part(filename, caption, "", models, parts[0], cell, top)]
    return [
        _heatmap_part(
            filename if n == 1 else f"eer_heatmap_{n}.png",
            f"{caption}, part {n} of {len(parts)}: "
            + " to ".join(dict.fromkeys((experiment_of[part[0]], experiment_of[part[-1]]))),
            f" (part {n} of {len(parts)})",
            models,
            part,
            cell,
            top,
        )
        for n, part in enumerate(parts, 1)
    ]


def _heatmap_part(
    filename: str,
    caption: str,
    part: str,
    models: Sequence[str],
    shown: Sequence[str],
    every: Mapping[tuple[str, str], float],
    top: float,
) -> FigureOutcome:
    """One heatmap of the conditions ``shown`` (rows) by ``models`` (columns) on the scale 0 to ``top``, sized from
    their numbers: a row per condition at a legible height, the columns sharing what ``FIGSIZE_INCHES``'s width
    leaves beside the row labels (half of it at most), each cell's value printed only where it fits its cell (the
    values are in the EER tables in any case), so no two numbers overprint. Drawn as plain shapes (``plain``), not by
    matplotlib, whose text layout, colour bar and two draws (PNG, SVG) made this the report's costliest figure."""
    import matplotlib
    import numpy as np

    rows = set(shown)
    row_names, column_names = [visible_text(c) for c in shown], [visible_text(m) for m in models]  # as drawn
    cell = {key: value for key, value in every.items() if key[1] in rows}
    label_inches = min(CHAR_INCHES * max(len(c) for c in row_names) + 0.3, FIGSIZE_INCHES[0] / 2)
    column = min(HEATMAP_COLUMN_INCHES, (FIGSIZE_INCHES[0] - label_inches - COLORBAR_INCHES) / len(models))
    numbers = column >= CHAR_INCHES * SMALL_PT / TEXT_PT * max(len(format_number(v)) for v in cell.values()) + 0.1
    upright = column >= CHAR_INCHES * max(len(m) for m in column_names) + 0.1  # encoder names fit across their column
    if not numbers:
        caption += "; the cells too narrow for their values: they are in the EER tables"
    worst = max(cell.items(), key=lambda item: item[1])
    best = min(cell.items(), key=lambda item: item[1])
    alt = (
        f"Heatmap of {len(models)} encoders by {len(shown)} conditions{part}; lowest EER "
        f"{format_number(best[1])} ({best[0][0]}, {best[0][1]}), highest {format_number(worst[1])} "
        f"({worst[0][0]}, {worst[0][1]})."
    )

    # A fixed layout in inches from the figure's top left, from the labels' measured widths: the row labels left of
    # the grid, the encoders' names above it, the title above them, the colour bar right.
    left = _text_inches(row_names, TEXT_PT) + TICK_INCHES + MARGIN_INCHES
    names = LINE_EM * TEXT_PT / 72 if upright else _text_inches(column_names, TEXT_PT)
    above = names + TICK_INCHES + LINE_EM * TEXT_PT / 72 + TITLE_GAP_INCHES + MARGIN_INCHES
    across, down = len(models) * column, HEATMAP_ROW_INCHES * len(shown)
    size = (left + across + COLORBAR_INCHES, above + down + MARGIN_INCHES)
    grid = np.array([[cell.get((m, c), math.nan) for m in models] for c in shown])
    colormap, scale = matplotlib.colormaps["viridis"], top if top > 0 else 1.0  # matplotlib's Normalize(0, top)
    box = (left, above, across, down)
    shapes: list[Shape] = [Cells(box, colormap(grid / scale, bytes=True)), Frame(box)]
    title = "EER per condition (rows) and encoder (columns)"
    shapes.append(Text(left + across / 2, MARGIN_INCHES, title, TEXT_PT, "ma"))
    for i, condition in enumerate(row_names):
        shapes.append(Text(left - TICK_INCHES, above + (i + 0.5) * HEATMAP_ROW_INCHES, condition, TEXT_PT, "rm"))
    for j, model in enumerate(column_names):
        x, y = left + (j + 0.5) * column, above - TICK_INCHES  # upright: its bottom centred; else its start
        shapes.append(Text(x, y, model, TEXT_PT, "md") if upright else Text(x, y, model, TEXT_PT, "lm", upward=True))
    if numbers:
        for (i, j), value in np.ndenumerate(grid):
            if math.isfinite(value):
                red, green, blue, _ = colormap(value / scale)
                ink = BLACK if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else WHITE
                x, y = left + (j + 0.5) * column, above + (i + 0.5) * HEATMAP_ROW_INCHES
                shapes.append(Text(x, y, format_number(value), SMALL_PT, "mm", ink))
    shapes += _colour_bar(left + across + COLORBAR_GAP_INCHES, above, down, scale, colormap)
    return _plain(filename, caption, alt, size, shapes)


def _colour_bar(left: float, top: float, down: float, scale: float, colormap: Colormap) -> list[Shape]:
    """The colour bar 0 to ``scale`` at (``left``, ``top``), ``down`` inches high, as matplotlib's colour bar draws it:
    the colormap's colours bottom to top, framed, ticks right (``_scale_ticks``) with their labels at ``TEXT_PT``,
    and the label "EER" beyond them reading upwards."""
    import numpy as np

    right = left + COLORBAR_WIDTH_INCHES
    colours = colormap(np.arange(colormap.N)[::-1, np.newaxis], bytes=True)  # a row per colour, the highest on top
    box = (left, top, COLORBAR_WIDTH_INCHES, down)
    shapes: list[Shape] = [Cells(box, colours), Frame(box)]
    ticks, labels = _scale_ticks(scale, down)
    for tick, label in zip(ticks, labels, strict=True):
        y = top + down * (1 - tick / scale)
        shapes += [Line((right, y), (right + TICK_INCHES / 2, y)), Text(right + TICK_INCHES, y, label, TEXT_PT, "lm")]
    beyond = right + TICK_INCHES + _text_inches(labels, TEXT_PT) + LABEL_PAD_PT / 72
    return [*shapes, Text(beyond, top + down / 2, "EER", TEXT_PT, "ma", upward=True)]


def _scale_ticks(top: float, inches: float) -> tuple[list[float], list[str]]:
    """The ticks from 0 to ``top`` that matplotlib's colour bar of ``inches`` chooses, and their labels
    (``_nice_ticks``: its AutoLocator, at most one tick per two lines of tick labels at ``TEXT_PT``)."""
    return _nice_ticks(0.0, top, _tick_bins(inches, TEXT_PT, 2))
