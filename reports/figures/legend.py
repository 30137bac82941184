"""The figures' legends as plain shapes (``plain``): their entries (``Key``), their size and shapes with matplotlib's
default paddings and frame, split into columns as matplotlib splits them, and the place ``loc="best"`` chooses for
one inside a panel. One home for every figure's legend (the DET figures, the menagerie, the contrasts' and gap
figures, the score histograms and the Bayes error plot)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from reports.figures.layout import SMALL_PT
from reports.figures.plain import (
    MARKER_SIZE,
    RGB,
    WHITE,
    Box,
    Dot,
    Frame,
    Polygon,
    Polyline,
    Shape,
    Text,
    _drawn_inches,
    _marker,
    _rounded,
)

if TYPE_CHECKING:
    import numpy as np

LEGEND_EDGE = (204, 204, 204)  # matplotlib's grey 0.8: a legend's frame
ROW_EM = 1.0502  # a label's row: matplotlib 3.11's extent of a line of DejaVu Sans (measured; the font's line is 1.17)
LEGEND_ORDER = ("upper right", "upper left", "lower left", "lower right", "center right", "center left",
                "center right", "lower center", "upper center", "center")  # fmt: skip  # "best"'s, its "right" twice

Glyph = Callable[[float, float], list[Shape]]  # a legend key's drawing about its middle (x, y, inches)
Key = tuple[str, RGB, float, tuple[float, ...], str | Glyph]  # a legend entry: its label, ink, line width (0: no
# line), dashes and marker (``plain._marker``'s kind, at ``MARKER_SIZE``; empty: none) or glyph


def _legend_split(keys: Sequence[Key], columns: int) -> list[list[Key]]:
    """``keys`` in ``columns`` columns, the first ones one longer where they do not divide evenly (as matplotlib's
    legend splits them)."""
    rows, extra = divmod(len(keys), columns)
    ends = [(k + 1) * rows + min(k + 1, extra) for k in range(columns)]
    return [list(keys[end - rows - (k < extra) : end]) for k, end in enumerate(ends)]


def _legend_size(keys: Sequence[Key], columns: int, points: float = SMALL_PT) -> tuple[float, float]:
    """A legend's width and height in inches, with matplotlib's default paddings at ``points``: 0.4 em inside its
    frame, keys 2 em long 0.8 em before their labels, 2 em between columns, 0.5 em between rows."""
    em = points / 72
    split = _legend_split(keys, columns)
    widths = [_drawn_inches([key[0] for key in column], points) + 2.8 * em for column in split if column]
    rows = max(len(column) for column in split)
    return sum(widths) + (len(widths) - 1) * 2.0 * em + 0.8 * em, em * (rows * ROW_EM + (rows - 1) * 0.5 + 0.8)


def _legend_shapes(
    keys: Sequence[Key], columns: int, corner: tuple[float, float], points: float = SMALL_PT
) -> list[Shape]:
    """The legend of ``keys`` in ``columns`` at ``points`` with its top left at ``corner`` (inches): a white frame
    (opaque at 0.8, edged light grey, its corners rounded 0.2 em as matplotlib's), a key line (where it has a width)
    with its marker or glyph at its middle (where it has one) and a label per entry, column by column."""
    import numpy as np

    em = points / 72
    (left, top), (wide, high) = corner, _legend_size(keys, columns, points)
    outline = _rounded((left, top, wide, high), 0.2 * em)
    shapes: list[Shape] = [Polygon(outline[:-1], WHITE, 0.8), Polyline(outline, LEGEND_EDGE, 1.0)]
    x = left + 0.4 * em
    for column in _legend_split(keys, columns):
        if not column:
            continue
        for row, (label, ink, width, dashes, marker) in enumerate(column):
            y = top + (0.4 + row * (ROW_EM + 0.5) + ROW_EM / 2) * em
            if width:
                shapes.append(Polyline(np.array([[x, y], [x + 2 * em, y]]), ink, width, dashes))
            if callable(marker):
                shapes += marker(x + em, y)
            elif marker:
                shapes.append(_marker(marker, x + em, y, MARKER_SIZE, ink))
            shapes.append(Text(x + 2.8 * em, y, label, points, "lm"))
        x += _drawn_inches([key[0] for key in column], points) + 4.8 * em
    return shapes


def _best_corner(
    box: Box, size: tuple[float, float], shapes: Sequence[Polyline | Polygon | Dot | Frame]
) -> tuple[float, float]:
    """Where in ``box`` (inches) a legend of ``size`` covers least of ``shapes``, as matplotlib's ``loc="best"``
    chooses: of its places 0.5 em inside the axes, in its order, the first with the fewest of the shapes' points
    inside it plus shapes crossing it plus boxes (a frame: a text's extent) overlapping it."""
    import numpy as np

    pad = SMALL_PT / 72 / 2
    x0, y0, across, down = box
    wide, high = size
    xs = {"left": x0 + pad, "center": x0 + (across - wide) / 2, "right": x0 + across - pad - wide}
    ys = {"upper": y0 + pad, "center": y0 + (down - high) / 2, "lower": y0 + down - pad - high}
    paths = [np.array([[s.x, s.y]]) if isinstance(s, Dot) else s.points for s in shapes if not isinstance(s, Frame)]
    boxes = [(s.box[0], s.box[1], s.box[0] + s.box[2], s.box[1] + s.box[3]) for s in shapes if isinstance(s, Frame)]
    best, least = (xs["right"], ys["upper"]), math.inf
    for place in LEGEND_ORDER:
        vertical, _, horizontal = place.partition(" ")
        corner = (xs[horizontal or "center"], ys[vertical])
        bounds = (corner[0], corner[1], corner[0] + wide, corner[1] + high)
        badness = sum(_inside(points, bounds) + _crosses(points, bounds) for points in paths)
        badness += sum(max(b[0], bounds[0]) < min(b[2], bounds[2]) and max(b[1], bounds[1]) < min(b[3], bounds[3])
                       for b in boxes)  # fmt: skip
        if badness < least:
            best, least = corner, badness
    return best


def _inside(points: np.ndarray, bounds: tuple[float, float, float, float]) -> int:
    left, top, right, bottom = bounds
    x, y = points[:, 0], points[:, 1]
    return int(((x > left) & (x < right) & (y > top) & (y < bottom)).sum())


def _crosses(points: np.ndarray, bounds: tuple[float, float, float, float]) -> int:
    """1 where a segment of ``points`` meets the box ``bounds`` (left, top, right, bottom), else 0 (Liang-Barsky).

    >>> import numpy as np
    >>> [_crosses(np.array(segment, dtype=float), (0, 0, 1, 1)) for segment in
    ...  ([[-1, 0.5], [2, 0.5]], [[-1, 2], [2, 2]], [[0.5, -1], [0.5, 2]], [[2, -1], [2, 2]], [[-1, -1], [2, 2]])]
    [1, 0, 1, 0, 1]
    """
    import numpy as np

    start, end = points[:-1], points[1:]
    keep = np.isfinite(start).all(axis=1) & np.isfinite(end).all(axis=1)
    start, end = start[keep], end[keep]
    if not len(start):
        return 0
    enter, leave = np.zeros(len(start)), np.ones(len(start))
    for axis, (low, high) in enumerate(((bounds[0], bounds[2]), (bounds[1], bounds[3]))):
        step = end[:, axis] - start[:, axis]
        with np.errstate(divide="ignore", invalid="ignore"):
            a, b = (low - start[:, axis]) / step, (high - start[:, axis]) / step
        flat = step == 0
        within = (start[:, axis] >= low) & (start[:, axis] <= high)
        a = np.where(flat, np.where(within, -np.inf, np.inf), a)  # a flat segment outside the slab: never in it
        b = np.where(flat, np.inf, b)
        enter, leave = np.maximum(enter, np.minimum(a, b)), np.minimum(leave, np.maximum(a, b))
    return int(bool((enter <= leave).any()))
