"""Target and non-target score histograms from per-trial scores: per group of ``audit scores``, or per encoder of a
bundle the condition that moves its EER most over its clean reference (``audit.bundle.curves`` chooses it)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reports.figures.data import _curves, _cut, _number
from reports.figures.layout import (
    MAX_PANELS,
    SMALL_PT,
    TEXT_PT,
    TITLE_PAD_PT,
    _autoscaled,
    _boxes,
    _columns,
    _grid_margins,
    _legend_columns,
    _legend_inches,
    _nice_ticks,
    _panel_size,
    _text_block,
    _tick_bins,
)
from reports.figures.legend import Key, _best_corner, _legend_shapes, _legend_size
from reports.figures.outcome import FigureOutcome
from reports.figures.plain import KEY_PT, RGB, Box, Polygon, Polyline, Shape, Text, _axes_shapes, _plain, _scale
from reports.format import format_number

MAX_HISTOGRAMS = 12  # a bundle's encoders with histograms
HISTOGRAM_COLOURS: tuple[tuple[str, RGB], ...] = (("target", (31, 119, 180)), ("nontarget", (214, 39, 40)))  # tab:
# blue, tab:red
FILL_ALPHA, OUTLINE_PT, EDGE_PT = 0.45, 1.1, 1.0  # a filled histogram's opacity, an outlined one's width, a legend
# patch's edge (patch.linewidth)


def score_distributions(report: Mapping[str, Any]) -> FigureOutcome:
    """Target and non-target score histograms: one panel per group of ``audit scores``; for a bundle one panel per
    encoder, the condition that moves its EER most (filled) over its clean reference (outlined). Drawn as plain
    shapes (``plain``) placed in inches as matplotlib drew its ``stairs`` (its layout, autoscaled limits stuck at
    zero counts, AutoLocator ticks, two-line titles and legends), without its artists, text layout and two draws."""
    curves = [c for c in _curves(report, "scores") if isinstance(c.get("histogram"), Mapping)]
    panels: dict[str, list[Mapping[str, Any]]] = {}
    for entry in curves:
        panels.setdefault(str(entry.get("panel") or entry.get("group")), []).append(entry)
    shown = dict(list(panels.items())[: MAX_PANELS if all("panel" not in c for c in curves) else MAX_HISTOGRAMS])
    moved = any(c.get("role") for c in curves)
    filename = "score_distributions.png"
    caption = (
        "Target vs non-target scores per encoder: the condition that moves its EER most (filled) over its clean "
        "reference (outlined)"
        if moved
        else "Target vs non-target scores per group"
    )
    if not curves:
        return FigureOutcome(filename, caption, None, "no per-trial scores in the report (a bundle or audit scores)")
    parts = []
    for members in shown.values():
        for entry in members:
            histogram = entry["histogram"]
            eer = format_number(_number(entry.get("eer_interp")))
            parts.append(
                f"{entry.get('group')}: {sum(histogram['target'])} target and {sum(histogram['nontarget'])} "
                f"non-target scores from {format_number(histogram['edges'][0])} to "
                f"{format_number(histogram['edges'][-1])}, EER (interp) {eer}"
            )
    alt = "Score histograms: " + "; ".join(parts)

    size = _panel_size(len(shown))
    return _plain(filename, caption, alt, size, _histogram_shapes(shown, moved, size))


def _histogram_shapes(
    shown: Mapping[str, Sequence[Mapping[str, Any]]], moved: bool, size: tuple[float, float]
) -> list[Shape]:
    """A panel per entry of ``shown`` (its name, its curves) in rows of two on a figure of ``size`` inches, placed where
    matplotlib placed its axes (``layout._grid_margins``: room for ``0.000`` left of each, the ticks chosen there by
    ``_nice_ticks`` for the room matplotlib's AutoLocator saw, the panels placed again with room for their labels);
    each curve's histograms as ``Axes.stairs`` drew them: a clean reference's outlined, the others filled (at 0.45,
    no edge), clipped to the panel. ``moved``: each title the encoder and its condition over a line of the two EERs,
    one legend below the panels; else each title the group's name, a legend in each panel where it covers least
    (``loc="best"``)."""
    keys: list[Key] = []
    if moved:
        keys = [(f"{key}: the condition", ink, 0.0, (), _patch_key(ink, True)) for key, ink in HISTOGRAM_COLOURS]
        keys += [(f"{key}: clean reference", ink, KEY_PT, (), "") for key, ink in HISTOGRAM_COLOURS]
    columns = _legend_columns([key[0] for key in keys]) if keys else 1
    legend = _legend_inches(math.ceil(len(keys) / columns)) if keys else 0.0
    n = len(shown)

    def boxes(ys: Sequence[Sequence[str]], xs: Sequence[Sequence[str]]) -> list[Box]:
        return _boxes(n, size, *_grid_margins(ys, xs, _columns(n), title_lines=2 if moved else 1, legend_inches=legend))

    limits = [_limits(members) for members in shown.values()]
    first = boxes([["0.000"]] * n, [[]] * n)
    ticks = [(_nice_ticks(*x, _tick_bins(box[2], TEXT_PT, 3)), _nice_ticks(*y, _tick_bins(box[3], TEXT_PT, 2)))
             for box, (x, y) in zip(first, limits, strict=True)]  # fmt: skip
    shapes: list[Shape] = []
    placed = boxes([y[1] for _, y in ticks], [x[1] for x, _ in ticks])
    for box, (name, members), (x_limits, y_limits), (x_ticks, y_ticks) in zip(
        placed, shown.items(), limits, ticks, strict=True
    ):
        at = _scale(box, x_limits, y_limits)
        drawn = [shape for entry in members for shape in _stairs(entry, at, box)]
        shapes += drawn
        xs = [(at(tick, y_limits[0])[0], label) for tick, label in zip(*x_ticks, strict=True)]
        ys = [(at(x_limits[0], tick)[1], label) for tick, label in zip(*y_ticks, strict=True)]
        shapes += _axes_shapes(box, xs, ys, x_label="score", y_label="trials")
        shapes += _title(box, name, members, moved)
        if not moved:
            inside = [(key, ink, 0.0, (), _patch_key(ink, False)) for _ in members for key, ink in HISTOGRAM_COLOURS]
            corner = _best_corner(box, _legend_size(inside, 1), [s for s in drawn if isinstance(s, Polygon)])
            shapes += _legend_shapes(inside, 1, corner)
    if keys:
        wide, high = _legend_size(keys, columns)
        shapes += _legend_shapes(keys, columns, ((size[0] - wide) / 2, size[1] - SMALL_PT / 72 / 2 - high))
    return shapes


def _limits(members: Sequence[Mapping[str, Any]]) -> tuple[tuple[float, float], tuple[float, float]]:
    """A panel's x and y limits as matplotlib autoscales its stairs: their edges' span widened by 5% each side; the
    counts' from zero (the stairs' baseline, a sticky edge the margin stops at) to 5% over the largest."""
    edges = [float(e) for entry in members for e in (entry["histogram"]["edges"][0], entry["histogram"]["edges"][-1])]
    counts = [0.0] + [float(c) for entry in members for key, _ in HISTOGRAM_COLOURS for c in entry["histogram"][key]]
    low, high = _autoscaled(counts)
    return _autoscaled(edges), (max(low, 0.0) if max(counts) > 0 else low, high)


def _stairs(entry: Mapping[str, Any], at: Callable[[float, float], tuple[float, float]], box: Box) -> list[Shape]:
    """A curve's target and non-target histograms as ``Axes.stairs`` draws them: the steps from the baseline at the
    first edge to the baseline at the last, outlined (``OUTLINE_PT``) for a clean reference, else filled at
    ``FILL_ALPHA`` without an edge (``stairs``' filled width: 0), clipped to ``box``."""
    import numpy as np

    histogram = entry["histogram"]
    xs = np.repeat(np.asarray(histogram["edges"], dtype=float), 2)
    shapes: list[Shape] = []
    for key, ink in HISTOGRAM_COLOURS:
        ys = np.concatenate([[0.0], np.repeat(np.asarray(histogram[key], dtype=float), 2), [0.0]])
        steps = np.array([at(x, y) for x, y in zip(xs.tolist(), ys.tolist(), strict=True)])
        if entry.get("role") == "reference":
            shapes.append(Polyline(steps, ink, OUTLINE_PT, (), box))
        else:
            shapes.append(Polygon(steps, ink, FILL_ALPHA, box))
    return shapes


def _title(box: Box, name: str, members: Sequence[Mapping[str, Any]], moved: bool) -> list[Shape]:
    """A panel's title at ``SMALL_PT``, its last line's baseline ``TITLE_PAD_PT`` above the panel (matplotlib's
    title, ``va="baseline"``): the input's part cut to the panel's width; ``moved``: the encoder and its condition
    over the clean and moved EERs, a line each where matplotlib's text layout puts them (``_text_block``)."""
    middle, foot = box[0] + box[2] / 2, box[1] - TITLE_PAD_PT / 72
    if not moved:
        return [Text(middle, foot, _cut(name, box[2]), SMALL_PT, "ms")]
    eers = {e.get("role"): format_number(_number(e.get("eer_interp"))) for e in members}
    condition = next((str(e.get("series")) for e in members if e.get("role") == "condition"), "")
    lines = [
        _cut(f"{name}: {condition}", box[2]),
        f"EER (interp) {eers.get('reference')} clean, {eers.get('condition')}",
    ]
    baselines, _, _ = _text_block(lines, SMALL_PT)
    return [
        Text(middle, foot - baselines[-1] + y, line, SMALL_PT, "ms") for y, line in zip(baselines, lines, strict=True)
    ]


def _patch_key(ink: RGB, edged: bool) -> Callable[[float, float], list[Shape]]:
    """A filled histogram's legend key as matplotlib's patch handler draws it: a box 2 em by 0.7 em about the key's
    middle, filled at ``FILL_ALPHA``; ``edged``: edged at it too (``EDGE_PT``: a ``Patch`` key's, not the filled
    stairs' own, which have none)."""

    def glyph(x: float, y: float) -> list[Shape]:
        import numpy as np

        em = SMALL_PT / 72
        left, top, right, bottom = x - em, y - 0.35 * em, x + em, y + 0.35 * em
        outline = np.array([[left, top], [right, top], [right, bottom], [left, bottom], [left, top]])
        edge = [Polyline(outline, ink, EDGE_PT, (), None, FILL_ALPHA)] if edged else []
        return [Polygon(outline[:4], ink, FILL_ALPHA), *edge]

    return glyph
