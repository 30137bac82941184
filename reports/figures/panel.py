"""A figure of one panel on linear axes as plain shapes (``plain``), laid out as matplotlib's axes and legend were
laid out when it drew the figures: the table's IE against prediction and gender gap against SNR, and a
bundle's Bayes error plot."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from reports.figures.layout import (
    LEGEND_INSIDE_MAX,
    SMALL_PT,
    TEXT_PT,
    TITLE_PAD_PT,
    _autoscaled_past,
    _boxes,
    _grid_margins,
    _legend_beside,
    _nice_ticks,
    _tick_bins,
)
from reports.figures.legend import Key, _best_corner, _legend_shapes, _legend_size
from reports.figures.plain import Box, Dot, Frame, Polygon, Polyline, Shape, Text, _axes_shapes, _scale

TITLE_PT = 1.2 * TEXT_PT  # matplotlib's axes title ("large")
At = Callable[[float, float], tuple[float, float]]  # data to inches from the figure's top left
Drawing = Callable[[Box, At], tuple[list[Shape], list[Polyline | Polygon | Dot | Frame]]]


def _linear_panel(
    size: tuple[float, float],
    data: tuple[tuple[Sequence[float], Sequence[float]], tuple[Sequence[float], Sequence[float]]],
    labels: tuple[str, str, str],
    keys: Sequence[Key],
    draw: Drawing,
    points: float = TEXT_PT,
    y_limits: tuple[float, float] | None = None,
) -> list[Shape]:
    """A figure of ``size`` inches of one panel whose axes are autoscaled to ``data`` (per axis, x then y, its values as
    matplotlib's autoscaling sees them and the lines across it drawn after them, ``_autoscaled_past``), its y axis over
    ``y_limits`` instead where given (``set_ylim``), under ``labels`` (title at ``TITLE_PT``, none where empty; x and y
    labels and tick labels at ``points``): placed where matplotlib placed its axes (room for ``0.000`` left of it, the
    ticks chosen there by ``_nice_ticks`` for the room matplotlib's AutoLocator saw, then placed again with room for
    their labels as they are; a long legend's room right of it), its content ``draw(box, at)`` (its shapes, and those
    that ``loc="best"`` keeps its legend off: a dot counted as a point, a line by its vertices and crossings, a frame as
    a text's extent), then its frame, ticks, labels and the legend of ``keys``: inside where it covers least when short,
    beside it in columns of 16 at the figure's top right when long (``layout._legend_beside``)."""
    columns, right = (1, 0.0) if len(keys) <= LEGEND_INSIDE_MAX else _legend_beside([key[0] for key in keys])
    x_limits, autoscaled = (_autoscaled_past(values, lines) for values, lines in data)
    y_limits = y_limits or autoscaled
    title_lines = 1.2 if labels[0] else 0.0  # a title at TITLE_PT: 1.2 lines

    def placed(ys: Sequence[str], xs: Sequence[str]) -> Box:
        margins, gaps = _grid_margins([ys], [xs], 1, points, points, title_lines=title_lines, right=right)
        return _boxes(1, size, margins, gaps)[0]

    first = placed(["0.000"], [])
    x_ticks = _nice_ticks(*x_limits, _tick_bins(first[2], TEXT_PT, 3))
    y_ticks = _nice_ticks(*y_limits, _tick_bins(first[3], TEXT_PT, 2))
    box = placed(y_ticks[1], x_ticks[1])
    at = _scale(box, x_limits, y_limits)
    shapes, obstacles = draw(box, at)
    xs = [(at(tick, y_limits[0])[0], label) for tick, label in zip(*x_ticks, strict=True)]
    ys = [(at(x_limits[0], tick)[1], label) for tick, label in zip(*y_ticks, strict=True)]
    shapes += _axes_shapes(box, xs, ys, points, labels[1], labels[2], points)
    if labels[0]:
        shapes.append(Text(box[0] + box[2] / 2, box[1] - TITLE_PAD_PT / 72, labels[0], TITLE_PT, "ms"))
    wide, high = _legend_size(keys, columns)
    if len(keys) <= LEGEND_INSIDE_MAX:
        corner = _best_corner(box, (wide, high), obstacles)
    else:
        corner = (size[0] - SMALL_PT / 72 / 2 - wide, SMALL_PT / 72 / 2)  # 0.5 em in from the figure's top right
    return shapes + _legend_shapes(keys, columns, corner)
