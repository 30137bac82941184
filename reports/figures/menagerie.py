"""The menagerie figure of the speakers-under-stress section (``statistics.menagerie``): each speaker moved from the
clean reference to its hardest compound cell, as enrolment side (lambs) and as test side (wolves)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from reports.figures.canvas import _drawn
from reports.figures.data import _label, _number
from reports.figures.layout import DPI, LINE_EM, _lay_out, _legend_inches, _panel_inches, _panels, _text_inches
from reports.figures.outcome import FigureOutcome
from reports.format import format_number
from schemas import keyed_rows

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


MENAGERIE_SECTION = "speakers-under-stress"  # the report section the menagerie figure belongs to
MAX_MENAGERIE_ROWS = 4  # clean references drawn (a row of two panels each)
MAX_MENAGERIE_LABELS = 4  # speakers named per panel: the farthest moved of those who change category first
MENAGERIE_FONT = 11  # points: legible with the figure scaled to 400 px wide (6.4 in at 100 dpi: 0.63 of its size)
SPEAKER_INCHES = 1.0  # a speaker's name at most, drawn beside its point
SIDES = (("fa_enrol", "lamb", "as enrolment side"), ("fa_test", "wolf", "as test side"))
LABEL_GAP_PT = 3.0  # between a speaker's marker and its name
LABEL_STEPS = 4  # the corners around a marker, then moved away from it by up to three label heights (with a leader)
MARKER_PX = 3.0  # half the side of a marker (matplotlib's s=18: a square of about 4.2 pt), in pixels at DPI
LEADER = {"arrowstyle": "-", "color": "0.3", "linewidth": 0.6, "shrinkA": 0, "shrinkB": 2}
Box = tuple[float, float, float, float]  # left, bottom, right, top in pixels


def _overlap(a: Box, b: Box) -> float:
    """The area two boxes share."""
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def _label_corners(anchors: Sequence[tuple[float, float]], sizes: Sequence[tuple[float, float]],
                   markers: Sequence[tuple[float, float]], frame: Box) -> list[tuple[float, float]]:  # fmt: skip
    """Where each label's lower left corner goes (pixels), in turn: the first of the four corners around its anchor
    (above right, below right, above left, below left, ``LABEL_GAP_PT`` away), then of those corners moved away from
    the anchor by one to ``LABEL_STEPS - 1`` label heights, whose box covers no label placed before it and no marker
    and stays in ``frame``; where none does, the one that covers least. Labels come in order of priority, so a
    crowded panel keeps its first names legible.

    Two labels of one point: the second goes below right; one near the right edge goes left; a third label of the
    point moves a label's height up.

    >>> corners = _label_corners([(50, 50)] * 2 + [(95, 20)] + [(50, 50)] * 3, [(20, 8)] * 6, [], (0, 0, 100, 100))
    >>> [(round(x, 1), round(y, 1)) for x, y in corners]
    [(54.2, 54.2), (54.2, 37.8), (70.8, 24.2), (25.8, 54.2), (25.8, 37.8), (54.2, 62.2)]
    """
    gap = LABEL_GAP_PT * DPI / 72
    placed: list[Box] = []
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

    def label(panel: Axes, points: Sequence[tuple[Any, ...]], labelled: Sequence[tuple[Any, ...]]) -> None:
        """Name the ``labelled`` speakers at their stressed points, each beside its marker where it covers no other
        name or marker (``_label_corners``); called once the panel is laid out, its scales fixed."""
        panel.get_xlim(), panel.get_ylim()  # the scales as drawn (a stale view is brought up to date)
        to_pixels = panel.transData.transform
        anchors = [tuple(to_pixels((x, y))) for _, _, _, x, y in labelled]
        markers = [tuple(to_pixels(xy)) for point in points for xy in (point[1:3], point[3:5])]
        names = [_label(point[0].removeprefix(prefix), SPEAKER_INCHES, MENAGERIE_FONT - 2) for point in labelled]
        sizes = [(_text_inches([name], MENAGERIE_FONT - 2) * DPI, LINE_EM * (MENAGERIE_FONT - 2) * DPI / 72)
                 for name in names]  # fmt: skip
        left, bottom, right, top = panel.get_window_extent().extents
        corners = _label_corners(anchors, sizes, markers, (left, bottom, right, top))
        for point, name, (x, y), (corner_x, corner_y), (_, height) in zip(
            labelled, names, anchors, corners, sizes, strict=True
        ):
            offset = ((corner_x - x) * 72 / DPI, (corner_y - y) * 72 / DPI)
            moved = max(corner_y - y, y - corner_y - height) > LABEL_GAP_PT * DPI / 72 + 0.5  # a leader to its marker
            panel.annotate(name, point[3:5], xytext=offset, textcoords="offset points", fontsize=MENAGERIE_FONT - 2,
                           ha="left", va="bottom", arrowprops=LEADER if moved else None)  # fmt: skip

    def title(key: Mapping[str, Any], inches: float | None = None) -> str:
        return _label(f"{key.get('experiment', '')}/{key.get('model', '')}", inches, MENAGERIE_FONT - 1)

    def draw(figure: Figure, axes: Axes) -> None:
        panels = _panels(figure, axes, 2 * len(shown))
        names: list[tuple[Axes, list[tuple[Any, ...]], list[tuple[Any, ...]]]] = []
        heads: list[tuple[Axes, Mapping[str, Any] | None, str]] = []  # titled once placed: cut to the panel
        for (result, cell), row in zip(shown, zip(panels[::2], panels[1::2], strict=True), strict=True):
            cuts = result.get("cuts") or {}
            for panel, (measure, kind, side) in zip(row, SIDES, strict=True):
                points = moves(result, cell, measure)
                labelled = named(cell, points)
                if points:  # one artist per kind, not per speaker: a panel of 80 speakers draws as fast as of 8
                    _, x0, y0, x1, y1 = (list(values) for values in zip(*points, strict=True))
                    dx, dy = ([b - a for a, b in zip(start, end, strict=True)] for start, end in ((x0, x1), (y0, y1)))
                    panel.quiver(
                        x0,
                        y0,
                        dx,
                        dy,
                        angles="xy",
                        scale_units="xy",
                        scale=1,
                        color="0.55",
                        width=0.004,
                        headwidth=4,
                        headlength=5,
                    )
                    panel.scatter(x0, y0, s=18, color="tab:blue", zorder=3)
                    panel.scatter(x1, y1, s=18, color="tab:red", marker="s", zorder=3)
                names.append((panel, points, labelled))
                goat, cut = _number(cuts.get("goat")), _number(cuts.get(kind))
                if goat is not None:
                    panel.axvline(goat, color="tab:green", linestyle="--", linewidth=1.0)
                if cut is not None:
                    panel.axhline(max(cut, 0.0), color="tab:purple", linestyle=":", linewidth=1.2)
                key = cell.get("key") or {}
                heads.append((panel, key if measure == "fa_enrol" else None, str(key.get("condition", ""))))
                if not points:
                    panel.text(0.5, 0.5, "no speaker with both values", ha="center", transform=panel.transAxes,
                               fontsize=MENAGERIE_FONT - 2)  # fmt: skip
                panel.set_xlabel("mean target score", fontsize=MENAGERIE_FONT)
                panel.set_ylabel(f"FA share {side.removeprefix('as ')}", fontsize=MENAGERIE_FONT - 1)
        from matplotlib.lines import Line2D

        keys = [
            Line2D([], [], color="tab:blue", marker="o", linestyle="", label="clean"),
            Line2D([], [], color="tab:red", marker="s", linestyle="", label="stressed"),
            Line2D([], [], color="tab:green", linestyle="--", label="goat cut"),
            Line2D([], [], color="tab:purple", linestyle=":", label="lamb / wolf cut"),
        ]
        figure.legend(handles=keys, fontsize=MENAGERIE_FONT - 1, loc="lower center", ncols=4)
        legend = _legend_inches(1, MENAGERIE_FONT - 1)
        _lay_out(panels, MENAGERIE_FONT - 2, MENAGERIE_FONT + 1, legend_inches=legend, right=0.3, columns=2)
        for panel, points, labelled in names:
            label(panel, points, labelled)
        for panel, key, condition in heads:  # cut at a character: a name without blanks keeps its start
            inches = _panel_inches(panel)
            shown_title = title(key, inches) if key is not None else _label(condition, inches, MENAGERIE_FONT - 1)
            panel.set_title(shown_title, fontsize=MENAGERIE_FONT - 1)

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
    figsize = (6.4, 3.0 * len(shown) + 0.6)
    return [replace(_drawn(filename, caption, alt, draw, figsize), section=MENAGERIE_SECTION)]
