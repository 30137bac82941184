"""The menagerie figure of the speakers-under-stress section (``statistics.menagerie``): each speaker moved from the
clean reference to its hardest compound cell, as enrolment side (lambs) and as test side (wolves)."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from reports.figures.canvas import _drawn
from reports.figures.data import _label, _number
from reports.figures.layout import _lay_out, _legend_inches, _panels
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
SIDES = (("fa_enrol", "lamb", "as enrolment side"), ("fa_test", "wolf", "as test side"))


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

    def named(cell: Mapping[str, Any], points: Sequence[tuple[Any, ...]]) -> set[str]:
        changed = {str(change.get("speaker")) for change in cell.get("changes") or [] if isinstance(change, Mapping)}
        farthest = sorted(points, key=lambda p: (p[0] not in changed, -math.hypot(p[3] - p[1], p[4] - p[2])))
        return {point[0] for point in farthest[:MAX_MENAGERIE_LABELS]}

    def title(key: Mapping[str, Any]) -> str:
        return _label(f"{key.get('experiment', '')}/{key.get('model', '')}")

    def draw(figure: Figure, axes: Axes) -> None:
        panels = _panels(figure, axes, 2 * len(shown))
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
                for speaker, _, _, x, y in (point for point in points if point[0] in labelled):
                    label = _label(speaker.removeprefix(prefix))
                    panel.annotate(label, (x, y), xytext=(3, 3), textcoords="offset points",
                                   fontsize=MENAGERIE_FONT - 2)  # fmt: skip
                goat, cut = _number(cuts.get("goat")), _number(cuts.get(kind))
                if goat is not None:
                    panel.axvline(goat, color="tab:green", linestyle="--", linewidth=1.0)
                if cut is not None:
                    panel.axhline(max(cut, 0.0), color="tab:purple", linestyle=":", linewidth=1.2)
                condition = _label((cell.get("key") or {}).get("condition", ""))
                name = title(cell.get("key") or {}) if measure == "fa_enrol" else condition
                panel.set_title(textwrap.shorten(name, 34, placeholder="..."), fontsize=MENAGERIE_FONT - 1)
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
