"""The EER heatmap, condition by encoder (``aggregates.eer_by_model_condition``), in parts of a legible height on one
colour scale."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reports.figures.canvas import _drawn
from reports.figures.data import _label, _number, _rows
from reports.figures.layout import (
    CHAR_INCHES,
    FIGSIZE_INCHES,
    LINE_EM,
    MARGIN_INCHES,
    SMALL_PT,
    TEXT_PT,
    TICK_INCHES,
    TITLE_GAP_INCHES,
    _fractions,
    _text_inches,
)
from reports.figures.outcome import FigureOutcome
from reports.format import format_number

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


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
    values are in the EER tables in any case), so no two numbers overprint."""
    cell = {key: value for key, value in every.items() if key[1] in shown}
    label_inches = min(CHAR_INCHES * max(len(c) for c in shown) + 0.3, FIGSIZE_INCHES[0] / 2)
    column = min(HEATMAP_COLUMN_INCHES, (FIGSIZE_INCHES[0] - label_inches - COLORBAR_INCHES) / len(models))
    numbers = column >= CHAR_INCHES * SMALL_PT / TEXT_PT * max(len(format_number(v)) for v in cell.values()) + 0.1
    upright = column >= CHAR_INCHES * max(len(m) for m in models) + 0.1  # encoder names fit across their column
    if not numbers:
        caption += "; the cells too narrow for their values: they are in the EER tables"
    worst = max(cell.items(), key=lambda item: item[1])
    best = min(cell.items(), key=lambda item: item[1])
    alt = (
        f"Heatmap of {len(models)} encoders by {len(shown)} conditions{part}; lowest EER "
        f"{format_number(best[1])} ({best[0][0]}, {best[0][1]}), highest {format_number(worst[1])} "
        f"({worst[0][0]}, {worst[0][1]})."
    )

    def draw(figure: Figure, axes: Axes) -> None:
        # A fixed layout in inches, from the labels' measured widths: the row labels left of the grid, the encoders'
        # names above it, the title above them, the colour bar right; the labels are plain texts, not ticks (whose
        # machinery measures each label several times per drawing).
        left = _text_inches(shown, TEXT_PT) + TICK_INCHES + MARGIN_INCHES
        names = LINE_EM * TEXT_PT / 72 if upright else _text_inches(models, TEXT_PT)
        above = names + TICK_INCHES + LINE_EM * TEXT_PT / 72 + TITLE_GAP_INCHES + MARGIN_INCHES
        across, down = len(models) * column, HEATMAP_ROW_INCHES * len(shown)
        size = (left + across + COLORBAR_INCHES, above + down + MARGIN_INCHES)
        figure.set_size_inches(size)
        axes.set_position(_fractions((left, MARGIN_INCHES, across, down), size))
        grid = [[cell.get((m, c), math.nan) for m in models] for c in shown]
        image = axes.imshow(grid, aspect="auto", cmap="viridis", vmin=0.0, vmax=top)
        axes.set_xticks([])
        axes.set_yticks([])
        inches = figure.dpi_scale_trans
        top_edge = MARGIN_INCHES + down
        for i, condition in enumerate(shown):
            y = top_edge - (i + 0.5) * HEATMAP_ROW_INCHES
            figure.text(left - TICK_INCHES, y, _label(condition), ha="right", va="center", transform=inches)
        for j, model in enumerate(models):
            x, rotation = left + (j + 0.5) * column, 0 if upright else 90
            figure.text(x, top_edge + TICK_INCHES, _label(model), ha="center", va="bottom", rotation=rotation,
                        transform=inches)  # fmt: skip
        if numbers:
            for i, row in enumerate(grid):
                for j, value in enumerate(row):
                    if math.isfinite(value):
                        red, green, blue, _ = image.cmap(image.norm(value))
                        ink = "black" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else "white"
                        axes.text(j, i, format_number(value), ha="center", va="center", fontsize=SMALL_PT, color=ink)
        bar = (left + across + COLORBAR_GAP_INCHES, MARGIN_INCHES, COLORBAR_WIDTH_INCHES, down)
        figure.colorbar(image, cax=figure.add_axes(_fractions(bar, size)), label="EER")
        title = "EER per condition (rows) and encoder (columns)"
        figure.text(left + across / 2, size[1] - MARGIN_INCHES, title, ha="center", va="top", transform=inches)

    return _drawn(filename, caption, alt, draw)
