"""The menagerie figure of the speakers-under-stress section (``statistics.menagerie``): each speaker moved from the
clean reference to its hardest compound cell, as enrolment side (lambs) and as test side (wolves).

Drawn as plain shapes (``plain``) placed in inches as matplotlib drew it before (its autoscaled limits, AutoLocator
ticks, scatter markers, quiver arrows, dashed cuts, annotations with leaders and figure legend), without its
artists, text layout and two draws (Agg for the PNG, again for the SVG): 0.37 s CPU of the default bundle's audit
before."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from reports.figures.data import _cut, _label, _number
from reports.figures.layout import (
    DPI,
    LINE_EM,
    TITLE_PAD_PT,
    _autoscaled,
    _boxes,
    _grid_margins,
    _legend_inches,
    _nice_ticks,
    _text_inches,
    _tick_bins,
)
from reports.figures.legend import Key, _legend_shapes, _legend_size
from reports.figures.outcome import FigureOutcome
from reports.figures.plain import (
    KEY_PT,
    Box,
    Dot,
    Polygon,
    Polyline,
    Shape,
    Text,
    _axes_shapes,
    _dashes,
    _lp_em,
    _plain,
    _scale,
    _square,
)
from reports.format import format_number
from schemas import keyed_rows

if TYPE_CHECKING:
    import numpy as np


MENAGERIE_SECTION = "speakers-under-stress"  # the report section the menagerie figure belongs to
MAX_MENAGERIE_ROWS = 4  # clean references drawn (a row of two panels each)
MAX_MENAGERIE_LABELS = 4  # speakers named per panel: the farthest moved of those who change category first
MENAGERIE_FONT = 11  # points: legible with the figure scaled to 400 px wide (6.4 in at 100 dpi: 0.63 of its size)
SPEAKER_INCHES = 1.0  # a speaker's name at most, drawn beside its point
SIDES = (("fa_enrol", "lamb", "as enrolment side"), ("fa_test", "wolf", "as test side"))
LABEL_GAP_PT = 3.0  # between a speaker's marker and its name
LABEL_STEPS = 4  # the corners around a marker, then moved away from it by up to three label heights (with a leader)
MARKER_PX = 3.0  # half the side of a marker (matplotlib's s=18: a square of about 4.2 pt), in pixels at DPI
MARKER_PT = math.sqrt(18) + 1.5  # a marker across: matplotlib's scatter of s=18 with its 1.5 pt edge in its colour
CLEAN, STRESSED, GOAT, CUT = (31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189)  # tab: blue, red, ...
ARROW, LEADER = (140, 140, 140), (77, 77, 77)  # matplotlib's greys 0.55 and 0.3
SHAFT = 0.004  # an arrow's shaft across, of its panel's width (matplotlib's quiver, width=0.004)
HEAD_WIDTH, HEAD_LENGTH, HEAD_AXIS = 4.0, 5.0, 4.5  # an arrow's head, in shaft widths (quiver's, headaxislength's)
GOAT_PT, CUT_PT, LEADER_PT = 1.0, 1.2, 0.6  # line widths: the goat cut's, the lamb or wolf cut's, a leader's
LEADER_GAP_PT = 2.0  # between a leader and its marker's centre, and its text's box (matplotlib's shrinkB, pad / 2)
Corners = tuple[float, float, float, float]  # left, bottom, right, top in pixels from the figure's bottom left


def _overlap(a: Corners, b: Corners) -> float:
    """The area two boxes share."""
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def _label_corners(anchors: Sequence[tuple[float, float]], sizes: Sequence[tuple[float, float]],
                   markers: Sequence[tuple[float, float]], frame: Corners) -> list[tuple[float, float]]:  # fmt: skip
    """Where each label's lower left corner goes (pixels from the figure's bottom left, upwards), in turn: the first
    of the four corners around its anchor (above right, below right, above left, below left, ``LABEL_GAP_PT``
    away), then of those corners moved away from the anchor by one to ``LABEL_STEPS - 1`` label heights, whose box
    covers no label placed before it and no marker and stays in ``frame``; where none does, the one that covers
    least. Labels come in order of priority, so a
    crowded panel keeps its first names legible.

    Two labels of one point: the second goes below right; one near the right edge goes left; a third label of the
    point moves a label's height up.

    >>> corners = _label_corners([(50, 50)] * 2 + [(95, 20)] + [(50, 50)] * 3, [(20, 8)] * 6, [], (0, 0, 100, 100))
    >>> [(round(x, 1), round(y, 1)) for x, y in corners]
    [(54.2, 54.2), (54.2, 37.8), (70.8, 24.2), (25.8, 54.2), (25.8, 37.8), (54.2, 62.2)]
    """
    gap = LABEL_GAP_PT * DPI / 72
    placed: list[Corners] = []
    obstacles = [(x - MARKER_PX, y - MARKER_PX, x + MARKER_PX, y + MARKER_PX) for x, y in markers]
    corners = []
    for (x, y), (width, height) in zip(anchors, sizes, strict=True):
        ups = [step * height for step in range(LABEL_STEPS)]
        candidates = [corner for up in ups for corner in ((x + gap, y + gap + up), (x + gap, y - gap - height - up),
                      (x - gap - width, y + gap + up), (x - gap - width, y - gap - height - up))]  # fmt: skip

        def cost(corner: tuple[float, float], width: float = width, height: float = height) -> float:
            box = (corner[0], corner[1], corner[0] + width, corner[1] + height)
            inside = frame[0] <= box[0] and frame[1] <= box[1] and box[2] <= frame[2] and box[3] <= frame[3]
            outside = 0.0 if inside else width * height - _overlap(box, frame)
            return outside + sum(_overlap(box, other) for other in placed + obstacles)

        best = min(candidates, key=cost)  # the first of the least-covering corners
        placed.append((best[0], best[1], best[0] + width, best[1] + height))
        corners.append(best)
    return corners


def _hardest(result: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The compound cell of a menagerie result with the highest EER (the first when none has one)."""
    cells = [cell for cell in result.get("stressed") or [] if isinstance(cell, Mapping)]
    return max(cells, key=lambda cell: _number(cell.get("eer")) or -1.0, default=None)


def _common_prefix(names: Sequence[str]) -> str:
    """The names' common prefix up to its last separator (``-``, ``_``, ``:`` or ``/``): a corpus name before the
    speaker ids, left off the figure's labels (the caption names it).

    >>> _common_prefix(["common_voice-s0015", "common_voice-s0503"])
    'common_voice-'
    """
    if not names:
        return ""
    first, last = min(names), max(names)
    length = next((i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), min(len(first), len(last)))
    shared = first[:length]
    return shared[: max(shared.rfind(separator) for separator in "-_:/") + 1]


def _moves(result: Mapping[str, Any], cell: Mapping[str, Any], measure: str) -> list[tuple[Any, ...]]:
    """Each speaker with a mean target score and ``measure`` both clean and in ``cell``: its name, clean x and y,
    stressed x and y."""
    points, stressed = [], keyed_rows(cell["speakers"])  # each a table of speakers (statistics.menagerie)
    for speaker, before in sorted(keyed_rows(result["speakers"]).items()):
        after = stressed.get(speaker)
        values = [_number(row.get(name)) if isinstance(row, Mapping) else None
                  for row in (before, after) for name in ("target_mean", measure)]  # fmt: skip
        if all(value is not None for value in values):
            points.append((str(speaker), *values))
    return points


@dataclass(frozen=True)
class _Panel:
    """A panel's content: its speakers' moves (``_moves``), those of them named, in priority, the goat cut and the lamb
    or wolf cut (None: not drawn), its title and its y axis's label, both uncut."""

    points: Sequence[tuple[Any, ...]]
    named: Sequence[tuple[Any, ...]]
    goat: float | None
    cut: float | None
    title: str
    y_label: str

    def limits(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """Its x and y view limits as matplotlib autoscaled them: the points, clean and stressed, and the cuts."""
        xs = [value for point in self.points for value in (point[1], point[3])] + [self.goat] * (self.goat is not None)
        ys = [value for point in self.points for value in (point[2], point[4])]
        return _autoscaled(xs), _autoscaled(ys + ([max(self.cut, 0.0)] if self.cut is not None else []))


def _menagerie_shapes(panels: Sequence[_Panel], size: tuple[float, float], prefix: str) -> list[Shape]:
    """The panels in rows of two on a figure of ``size`` inches, as plain shapes (``plain``): placed where
    matplotlib placed its axes (room for ``0.000`` left of each, the ticks chosen, ``_nice_ticks``, then placed again
    with room for their labels as they are), the legend of the four keys below them."""
    ticks_pt, label_pt = MENAGERIE_FONT - 2, MENAGERIE_FONT + 1
    legend = _legend_inches(1, MENAGERIE_FONT - 1)

    def boxes(ys: Sequence[Sequence[str]], xs: Sequence[Sequence[str]]) -> list[Box]:
        margins, gaps = _grid_margins(ys, xs, 2, ticks_pt, label_pt, legend_inches=legend, right=0.3)
        return _boxes(len(panels), size, margins, gaps)

    limits = [panel.limits() for panel in panels]
    first = boxes([["0.000"]] * len(panels), [[]] * len(panels))
    ticks = [
        (_nice_ticks(*x, _tick_bins(box[2], ticks_pt, 3)), _nice_ticks(*y, _tick_bins(box[3], ticks_pt, 2)))
        for box, (x, y) in zip(first, limits, strict=True)
    ]
    shapes: list[Shape] = []
    placed = boxes([y[1] for _, y in ticks], [x[1] for x, _ in ticks])
    for panel, box, scales, (x, y) in zip(panels, placed, limits, ticks, strict=True):
        shapes += _panel_shapes(panel, box, scales, x, y, size[1], prefix)
    return shapes + _legend(size)


def _panel_shapes(
    panel: _Panel,
    box: Box,
    limits: tuple[tuple[float, float], tuple[float, float]],
    x_ticks: tuple[list[float], list[str]],
    y_ticks: tuple[list[float], list[str]],
    height: float,
    prefix: str,
) -> list[Shape]:
    """One panel in ``box`` (left, top, width, height, inches) of a figure ``height`` inches high: layered as
    matplotlib drew it, the arrows, the cuts, the clean then the stressed markers (all clipped to the panel), the
    leaders, then the frame, ticks, labels, title and names."""
    import numpy as np

    left, top, across, down = box
    (x_low, _), (y_low, _) = limits
    at = _scale(box, *limits)
    shapes: list[Shape] = []
    starts, ends = [at(*point[1:3]) for point in panel.points], [at(*point[3:5]) for point in panel.points]
    shapes += [Polygon(_arrow(a, b, SHAFT * across), ARROW, clip=box) for a, b in zip(starts, ends, strict=True)]
    if panel.goat is not None:
        x, _ = at(panel.goat, y_low)
        line = np.array([[x, top + down], [x, top]])  # upwards from the panel's foot, as axvline draws it
        shapes.append(Polyline(line, GOAT, GOAT_PT, _dashes("--", GOAT_PT), box))
    if panel.cut is not None:
        _, y = at(x_low, max(panel.cut, 0.0))
        shapes.append(Polyline(np.array([[left, y], [left + across, y]]), CUT, CUT_PT, _dashes(":", CUT_PT), box))
    shapes += [Dot(x, y, MARKER_PT, CLEAN, box) for x, y in starts]
    shapes += [Polygon(_square(x, y, MARKER_PT), STRESSED, clip=box) for x, y in ends]
    names, texts = _names(panel, at, box, height, prefix)
    shapes += names
    xs = [(at(tick, y_low)[0], label) for tick, label in zip(*x_ticks, strict=True)]
    ys = [(at(x_low, tick)[1], label) for tick, label in zip(*y_ticks, strict=True)]
    small, label_pt, title_pt = MENAGERIE_FONT - 2, MENAGERIE_FONT + 1, MENAGERIE_FONT - 1
    shapes += _axes_shapes(box, xs, ys, small, "mean target score", panel.y_label, label_pt, title_pt)
    title = _cut(panel.title, across, title_pt)  # cut at a character: a name without blanks keeps its start
    shapes.append(Text(left + across / 2, top - TITLE_PAD_PT / 72, title, title_pt, "ms"))
    if not panel.points:
        shapes.append(Text(left + across / 2, top + down / 2, "no speaker with both values", small, "ms"))
    return shapes + texts


def _names(panel: _Panel, at: Any, box: Box, height: float, prefix: str) -> tuple[list[Shape], list[Shape]]:
    """The named speakers' names at their stressed points (``at``: data to inches) in ``box`` of a figure ``height``
    inches high, each beside its marker where it covers no other name or marker (``_label_corners``, in pixels from
    the figure's bottom left, upwards), with a leader to its marker where it is moved off it: the leaders, the
    names."""

    def pixels(xy: tuple[float, float]) -> tuple[float, float]:
        return xy[0] * DPI, (height - xy[1]) * DPI

    small = MENAGERIE_FONT - 2
    left, top, across, down = box
    anchors = [at(*point[3:5]) for point in panel.named]
    markers = [pixels(at(*xy)) for point in panel.points for xy in (point[1:3], point[3:5])]
    names = [_cut(point[0].removeprefix(prefix), SPEAKER_INCHES, small) for point in panel.named]
    sizes = [(_text_inches([name], small) * DPI, LINE_EM * small * DPI / 72) for name in names]
    frame = (left * DPI, (height - top - down) * DPI, (left + across) * DPI, (height - top) * DPI)
    corners = _label_corners([pixels(anchor) for anchor in anchors], sizes, markers, frame)
    leaders: list[Shape] = []
    texts: list[Shape] = []
    for name, anchor, (corner_x, corner_y), (wide, high) in zip(names, anchors, corners, sizes, strict=True):
        text_left, text_foot = corner_x / DPI, height - corner_y / DPI  # the text's bottom left, inches
        texts.append(Text(text_left, text_foot - _lp_em()[1] * small / 72, name, small, "ls"))
        y = pixels(anchor)[1]
        if max(corner_y - y, y - corner_y - high) > LABEL_GAP_PT * DPI / 72 + 0.5:  # moved off its marker
            leader = _leader((text_left, text_foot - high / DPI, text_left + wide / DPI, text_foot), anchor)
            if leader is not None:
                leaders.append(Polyline(leader, LEADER, LEADER_PT))
    return leaders, texts


def _leader(text: tuple[float, float, float, float], marker: tuple[float, float]) -> np.ndarray | None:
    """A leader from a name's box ``text`` (left, top, right, bottom, inches) to its ``marker``, as matplotlib's
    annotation draws it: from the box's centre towards the marker, starting where it leaves the box padded by
    ``LEADER_GAP_PT``, ending that far short of the marker's centre; None where nothing of it is left."""
    import numpy as np

    centre = np.array([(text[0] + text[2]) / 2, (text[1] + text[3]) / 2])
    way = np.asarray(marker) - centre
    length = float(np.hypot(*way))
    pad = LEADER_GAP_PT / 72
    half = np.array([(text[2] - text[0]) / 2 + pad, (text[3] - text[1]) / 2 + pad])
    leaves = min((half[i] / abs(way[i]) if way[i] else math.inf) for i in range(2))  # a fraction of the way
    end = 1 - pad / length if length else 0.0
    if leaves >= end:
        return None
    return np.array([centre + leaves * way, centre + end * way])


def _arrow(start: tuple[float, float], end: tuple[float, float], shaft: float) -> np.ndarray:
    """The outline of an arrow from ``start`` to ``end`` (inches) with a shaft ``shaft`` inches across, as
    matplotlib's quiver draws it (its ``_h_arrows``): a head ``HEAD_LENGTH`` shafts long and ``HEAD_WIDTH`` wide, its
    notch at ``HEAD_AXIS``; an arrow shorter than its head shrunk whole, one shorter than a shaft a hexagon a shaft
    across."""
    import numpy as np

    way = (end[0] - start[0], end[1] - start[1])
    length = math.hypot(*way) / shaft  # in shafts
    if length < 1:
        turns = np.arange(8) * math.pi / 3
        along, across = np.cos(turns) * 0.5, np.sin(turns) * 0.5
    else:
        reach = max(length, HEAD_LENGTH)
        along = np.array([0, reach - HEAD_AXIS, reach - HEAD_LENGTH, reach, reach - HEAD_LENGTH, reach - HEAD_AXIS, 0])
        across = 0.5 * np.array([1, 1, HEAD_WIDTH, 0, -HEAD_WIDTH, -1, -1])
        if length < HEAD_LENGTH:
            along, across = along * length / HEAD_LENGTH, across * length / HEAD_LENGTH
    cos, sin = (way[0] / (length * shaft), way[1] / (length * shaft)) if length else (1.0, 0.0)
    return np.column_stack([start[0] + shaft * (along * cos - across * sin),
                            start[1] + shaft * (along * sin + across * cos)])  # fmt: skip


def _legend(size: tuple[float, float]) -> list[Shape]:
    """The legend of the four keys in a row at the foot of a figure of ``size`` inches, centred 0.5 em above its
    edge, as matplotlib's figure legend (``loc="lower center"``, ``ncols=4``) draws it at ``MENAGERIE_FONT - 1``."""
    points = MENAGERIE_FONT - 1
    keys: list[Key] = [("clean", CLEAN, 0.0, (), "o"), ("stressed", STRESSED, 0.0, (), "s"),
                       ("goat cut", GOAT, KEY_PT, _dashes("--", KEY_PT), ""),
                       ("lamb / wolf cut", CUT, KEY_PT, _dashes(":", KEY_PT), "")]  # fmt: skip
    wide, high = _legend_size(keys, len(keys), points)
    return _legend_shapes(keys, len(keys), ((size[0] - wide) / 2, size[1] - 0.5 * points / 72 - high), points)


def menagerie_figure(report: Mapping[str, Any]) -> list[FigureOutcome]:
    """Per clean reference (at most ``MAX_MENAGERIE_ROWS``) and its hardest compound cell (highest EER), each speaker
    at its mean target score against its false-accept share, as enrolment side (lambs) and as test side (wolves),
    an arrow from clean to stressed, the reference's goat and lamb or wolf cuts drawn; the speakers who change
    category named. None without menagerie statistics."""
    statistics = report.get("statistics")
    listed = statistics.get("menagerie") if isinstance(statistics, Mapping) else None
    if not listed:
        return []
    filename, caption = "menagerie.png", "Speakers under stress: clean to the hardest compound cell"
    pairs = [
        (result, cell)
        for result in listed
        if isinstance(result, Mapping) and isinstance(result.get("speakers"), Mapping)
        for cell in [_hardest(result)]
        if cell is not None
        and isinstance(cell.get("speakers"), Mapping)
        and any(_moves(result, cell, measure) for measure, _, _ in SIDES)
    ]
    if not pairs:
        why = "no speaker has a mean target score and a false-accept share both clean and in a hardest compound cell"
        return [FigureOutcome(filename, caption, None, why, section=MENAGERIE_SECTION)]
    shown = pairs[:MAX_MENAGERIE_ROWS]
    moves = _moves
    prefix = _common_prefix([str(name) for result, _ in shown for name in keyed_rows(result["speakers"])])

    def named(cell: Mapping[str, Any], points: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """The points whose speaker is named, first to last in priority: those who change category, the farthest
        moved first."""
        changed = {str(change.get("speaker")) for change in cell.get("changes") or [] if isinstance(change, Mapping)}
        farthest = sorted(points, key=lambda p: (p[0] not in changed, -math.hypot(p[3] - p[1], p[4] - p[2])))
        return farthest[:MAX_MENAGERIE_LABELS]

    def title(key: Mapping[str, Any], inches: float | None = None) -> str:
        return _label(f"{key.get('experiment', '')}/{key.get('model', '')}", inches, MENAGERIE_FONT - 1)

    panels = []
    for result, cell in shown:
        cuts, key = result.get("cuts") or {}, cell.get("key") or {}
        for measure, kind, side in SIDES:
            points = moves(result, cell, measure)
            head = f"{key.get('experiment', '')}/{key.get('model', '')}" if measure == "fa_enrol" else None
            cuts_at = _number(cuts.get("goat")), _number(cuts.get(kind))
            label = f"FA share {side.removeprefix('as ')}"
            panels.append(_Panel(points, named(cell, points), *cuts_at, head or str(key.get("condition", "")), label))
    size = (6.4, 3.0 * len(shown) + 0.6)
    shapes = _menagerie_shapes(panels, size, prefix)

    def described(result: Mapping[str, Any], cell: Mapping[str, Any]) -> str:
        before, after = (format_number(_number(record.get("eer"))) for record in (result, cell))
        return (
            f"{title(result.get('key') or {})}: {len(moves(result, cell, 'fa_enrol'))} and "
            f"{len(moves(result, cell, 'fa_test'))} speakers (enrolment and test side) from clean to "
            f"{_label((cell.get('key') or {}).get('condition'))} (EER {before} to {after}), "
            f"{len(cell.get('changes') or [])} changing category"
        )

    alt = "; ".join(described(result, cell) for result, cell in shown)
    more = len(pairs) - len(shown)
    caption += (
        ": per speaker its mean target score against its false-accept share at the clean reference's EER threshold, "
        "as enrolment side (left, lambs above the dotted cut) and as test side (right, wolves above it); goats left "
        "of the dashed cut; arrows from clean (circles) to stressed (squares)"
        + (f"; speakers named without their common prefix {_label(prefix)}" if prefix else "")
        + (f"; the first {len(shown)} of {len(pairs)} clean references" if more else "")
    )
    return [replace(_plain(filename, caption, alt, size, shapes), section=MENAGERIE_SECTION)]
