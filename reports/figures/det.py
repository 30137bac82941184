"""DET curves on normal-deviate axes with the EER point marked: per group of ``audit scores``, or for a bundle one
figure per experiment drawn (a panel per condition family, a curve per encoder); once a bundle's statistics are in,
the same figures with each curve's pointwise speaker-bootstrap band, and a figure per experiment with subgroups
(``det_band_figures``, from ``statistics.det_bands``)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reports.figures.data import LABEL_INCHES, _curves, _cut, _label, _number
from reports.figures.layout import (
    FIGSIZE_INCHES,
    LABEL_PAD_PT,
    LEGEND_INSIDE_MAX,
    LINE_EM,
    MARGIN_INCHES,
    SMALL_PT,
    TEXT_PT,
    TICK_INCHES,
    TITLE_PAD_PT,
    _boxes,
    _columns,
    _frame_inches,
    _legend_beside,
    _legend_columns,
    _legend_inches,
)
from reports.figures.legend import _best_corner, _legend_shapes, _legend_size
from reports.figures.outcome import FigureOutcome
from reports.figures.plain import (
    BLACK,
    KEY_PT,
    Box,
    Dot,
    Polygon,
    Polyline,
    Shape,
    Text,
    _axes_shapes,
    _dashes,
    _plain,
    _rgb,
    _series_colours,
)
from reports.format import format_number

if TYPE_CHECKING:
    import numpy as np


DET_TICKS = (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4)  # 0.002 would touch 0.001's label in a panel
DET_LIMITS = (0.0005, 0.6)
DET_TICK_LABELS = tuple(f"{100 * t:g}" for t in DET_TICKS)
BAND_ALT_RATES = (0.01, 0.1)  # false-alarm rates at which a band is given in words
BAND_ALPHA = 0.18
CURVE_PT, GRID_PT = 1.2, 0.8  # a curve's width, the grid's
EER_DOT_PT = 5.0  # across: matplotlib's 4 pt circle marker with its 1 pt edge
GRID, DIAGONAL = (230, 230, 230), (178, 178, 178)  # matplotlib's greys 0.9, 0.7
X_LABEL, Y_LABEL = "false-alarm probability (%)", "miss probability (%)"


def _clipped(values: Sequence[Any]) -> list[float]:
    """Rates within the DET axes' limits; an absent one (null in report.json) as NaN, a gap in the drawing."""
    low, high = DET_LIMITS
    return [math.nan if _number(v) is None else min(max(float(v), low), high) for v in values]


def _series(entry: Mapping[str, Any]) -> str:
    return str(entry.get("series", entry.get("group")))


def _det_axes(
    box: Box, curves: Sequence[Mapping[str, Any]], colours: Mapping[str, Any], bottom: bool = True, left: bool = True
) -> list[Shape]:
    """DET curves on normal-deviate axes in ``box`` (left, top, width, height, inches), each with its EER (interp)
    point, its band (shaded) where it has one and its ``linestyle`` where it names one, clipped to the axes; the
    grid at ``DET_TICKS``, the dotted diagonal, ticks out, the frame; the tick labels and axis labels below
    (``bottom``) and left (``left``). As matplotlib layered them: bands, grid, curves and points, diagonal, then the
    frame and texts."""
    import numpy as np
    from scipy.special import ndtri  # the normal deviate (scipy.stats.norm.ppf's, without importing scipy.stats)

    x0, y0, across, down = box
    low, high = (float(ndtri(limit)) for limit in DET_LIMITS)

    def at(xs: Any, ys: Any) -> np.ndarray:
        """Normal deviates as inches from the figure's top left."""
        xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
        return np.column_stack([x0 + (xs - low) / (high - low) * across, y0 + down - (ys - low) / (high - low) * down])

    shapes: list[Shape] = []
    for entry in curves:
        band = entry.get("band")
        if isinstance(band, Mapping):
            x, lower, upper = (ndtri(_clipped(band[key])) for key in ("p_fa", "low", "high"))
            ink = _rgb(colours[_series(entry)])
            for run in _runs(np.isfinite(x) & np.isfinite(lower) & np.isfinite(upper)):  # as fill_between splits
                outline = np.concatenate([at(x[run], lower[run]), at(x[run], upper[run])[::-1]])
                shapes.append(Polygon(outline, ink, BAND_ALPHA, box))
    ticks = np.asarray(ndtri(DET_TICKS), dtype=float)
    across_ticks = np.column_stack([ticks, ticks, np.full_like(ticks, np.nan)]).ravel()  # a NaN between grid lines
    along = np.tile([low, high, np.nan], len(ticks))
    shapes += [Polyline(at(across_ticks, along), GRID, GRID_PT, (), box),
               Polyline(at(along, across_ticks), GRID, GRID_PT, (), box)]  # fmt: skip
    for entry in curves:
        det = entry["det"]
        ink = _rgb(colours[_series(entry)])
        style = str(entry.get("linestyle") or "-")
        line = at(ndtri(_clipped(det["p_fa"])), ndtri(_clipped(det["p_miss"])))
        shapes.append(Polyline(line, ink, CURVE_PT, _dashes(style, CURVE_PT), box))
        eer = _number(entry.get("eer_interp"))
        if eer is not None:
            point = float(ndtri(min(max(eer, DET_LIMITS[0]), DET_LIMITS[1])))
            ((x, y),) = at([point], [point]).tolist()
            shapes.append(Dot(x, y, EER_DOT_PT, ink, box))
    shapes.append(Polyline(at([low, high], [low, high]), DIAGONAL, GRID_PT, _dashes(":", GRID_PT), box))
    xs, ys = (list(zip(positions, DET_TICK_LABELS, strict=True)) for positions in at(ticks, ticks).T.tolist())
    shapes += _axes_shapes(box, xs, ys, SMALL_PT, X_LABEL if bottom else "", Y_LABEL if left else "",
                           tick_labels=(bottom, left))  # fmt: skip
    return shapes


def _runs(valid: np.ndarray) -> list[slice]:
    """The runs of ``valid`` of two points or more, as slices."""
    import numpy as np

    edges = np.flatnonzero(np.diff(np.concatenate([[False], valid, [False]]).astype(np.int8)))
    return [
        slice(start, end)
        for start, end in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True)
        if end - start > 1
    ]


def _file_part(text: str) -> str:
    """``text`` as part of a file name: letters, digits, ``-`` and ``_`` only."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "figure"


def det_curves(report: Mapping[str, Any], banded: Mapping[str, FigureOutcome] | None = None) -> list[FigureOutcome]:
    """DET curves (miss vs false-alarm probability on normal-deviate axes), the EER point (interp) marked on each:
    the groups of ``audit scores`` in one panel; a bundle's curves one figure per experiment, a panel per condition
    family, one colour per encoder in every panel. A figure whose file ``banded`` holds (``det_band_figures``) is
    that one, not drawn bare as well."""
    curves = [c for c in _curves(report, "det") if isinstance(c.get("det"), Mapping)]
    if not curves:
        caption = "DET curves per group, EER (interp) marked"
        why = "no per-trial scores in the report (a bundle or audit scores)"
        return [FigureOutcome("det_curves.png", caption, None, why)]
    figures: dict[str, list[Mapping[str, Any]]] = {}
    for entry in curves:
        figures.setdefault(str(entry.get("figure") or ""), []).append(entry)
    colours = _series_colours(list(dict.fromkeys(_series(c) for c in curves)))
    banded = banded or {}
    return [banded.get(_det_filename(name)) or _det_figure(name, members, colours) for name, members in figures.items()]


def _det_filename(name: str) -> str:
    return f"det_curves_{_file_part(name)}.png" if name else "det_curves.png"


def _det_figure(
    name: str, curves: list[Mapping[str, Any]], colours: Mapping[str, Any], caption: str | None = None
) -> FigureOutcome:
    """One DET figure: a panel per ``panel`` of its curves (one panel when they name none); ``caption`` in place of
    the condition families' (a figure of bands, ``det_band_figures``). Drawn as plain shapes placed in inches
    (``plain``), as matplotlib drew it before (its layout, colours, widths, greys and legend), without its artists,
    text layout and two draws, which were most of the figures' cost once the statistics are in."""
    if not name:
        curves = curves[:10]
    panels: dict[str, list[Mapping[str, Any]]] = {}
    for entry in curves:
        panels.setdefault(str(entry.get("panel") or ""), []).append(entry)
    filename = _det_filename(name)
    heading = (
        f"DET curves of {_label(name)} per condition family (each family at its hardest condition), one colour per "
        "encoder, EER (interp) marked"
        if name
        else "DET curves per group, EER (interp) marked"
    )
    bands = [c["band"] for c in curves if isinstance(c.get("band"), Mapping)]
    caption = caption or (f"{heading}; {_shaded(bands[0])}" if bands else heading)
    alt = f"DET curves{' of ' + name if name else ''}: " + "; ".join(
        (f"{panel}: " if panel else "") + ", ".join(_det_alt(c) for c in members) for panel, members in panels.items()
    )

    size = (FIGSIZE_INCHES[0], 1.0 + 3.4 * math.ceil(len(panels) / _columns(len(panels)))) if len(panels) > 1 else None
    if list(panels) == [""]:
        title = (caption if name else heading).replace("\\$", "$")  # the groups' shading said in the caption alone
        shapes = _one_panel(title, curves, colours, FIGSIZE_INCHES)
    else:
        shapes = _panel_grid(panels, colours, size or FIGSIZE_INCHES)
    return _plain(filename, caption, alt, size or FIGSIZE_INCHES, shapes)


def _frame_room() -> tuple[float, float]:
    """The inches below and left of a panel that its tick labels and axis labels take (with the ticks and pads)."""
    line = LINE_EM * SMALL_PT / 72
    return 2 * line + (TICK_INCHES * 72 + LABEL_PAD_PT) / 72, _frame_inches(DET_TICK_LABELS, SMALL_PT)


def _one_panel(
    title: str, curves: Sequence[Mapping[str, Any]], colours: Mapping[str, Any], size: tuple[float, float]
) -> list[Shape]:
    """One panel of ``curves`` under ``title`` (at 1.2 times ``TEXT_PT``, cut to the panel's width: a named figure's
    is its whole caption, which the report prints beside it) in a figure of ``size`` inches, a legend
    entry per curve: inside the panel where it covers least (``_best_corner``) when short, beside it in columns of
    16 at the figure's top right when long."""
    keys = [(_cut(_series(c), LABEL_INCHES), _rgb(colours[_series(c)]), CURVE_PT,
             _dashes(str(c.get("linestyle") or "-"), CURVE_PT), "") for c in curves]  # fmt: skip
    columns, right = (1, 0.0) if len(keys) <= LEGEND_INSIDE_MAX else _legend_beside([key[0] for key in keys])
    below, beside = _frame_room()
    above = (LINE_EM * TEXT_PT * 1.2 + TITLE_PAD_PT) / 72
    left, top = beside + MARGIN_INCHES, above + MARGIN_INCHES
    box = (left, top, size[0] - left - right - 0.1 - MARGIN_INCHES, size[1] - top - below)
    shapes = _det_axes(box, curves, colours)
    shapes.append(
        Text(left + box[2] / 2, top - TITLE_PAD_PT / 72, _cut(title, box[2], TEXT_PT * 1.2), TEXT_PT * 1.2, "ms")
    )
    wide, high = _legend_size(keys, columns)
    if len(keys) <= LEGEND_INSIDE_MAX:
        corner = _best_corner(box, (wide, high), [s for s in shapes if isinstance(s, Polyline | Polygon | Dot)])
    else:
        corner = (size[0] - SMALL_PT / 72 / 2 - wide, SMALL_PT / 72 / 2)
    return [*shapes, *_legend_shapes(keys, columns, corner)]


def _panel_grid(
    panels: Mapping[str, Sequence[Mapping[str, Any]]], colours: Mapping[str, Any], size: tuple[float, float]
) -> list[Shape]:
    """A panel per entry of ``panels`` (its title: its key, cut to the panel's width) in rows of two on one scale,
    tick labels only where no panel is below or left; below them one legend: a colour per series, then a black
    key per condition's line style."""
    curves = [entry for members in panels.values() for entry in members]
    series = list(dict.fromkeys(_series(c) for c in curves))
    keys = [(_cut(s, LABEL_INCHES), _rgb(colours[s]), KEY_PT, (), "") for s in series]
    styles = {str(c["condition"]): str(c["linestyle"]) for c in curves if c.get("linestyle")}
    keys += [(_cut(name, LABEL_INCHES), BLACK, KEY_PT, _dashes(style, KEY_PT), "") for name, style in styles.items()]
    columns = _legend_columns([key[0] for key in keys])
    below, beside = _frame_room()
    below += _legend_inches(math.ceil(len(keys) / columns))
    above = LINE_EM * SMALL_PT / 72 + TITLE_PAD_PT / 72
    margins = (beside + MARGIN_INCHES, 0.1 + MARGIN_INCHES, above + MARGIN_INCHES, below + MARGIN_INCHES)
    boxes = _boxes(len(panels), size, margins, (0.25, above + 0.15))
    across = _columns(len(panels))
    shapes: list[Shape] = []
    for i, (box, (title, members)) in enumerate(zip(boxes, panels.items(), strict=True)):
        shapes += _det_axes(box, members, colours, i + across >= len(panels), i % across == 0)
        shapes.append(Text(box[0] + box[2] / 2, box[1] - TITLE_PAD_PT / 72, _cut(title, box[2]), SMALL_PT, "ms"))
    wide, high = _legend_size(keys, columns)
    corner = ((size[0] - wide) / 2, size[1] - SMALL_PT / 72 / 2 - high)  # centred, 0.5 em above the figure's foot
    return [*shapes, *_legend_shapes(keys, columns, corner)]


def _det_alt(entry: Mapping[str, Any]) -> str:
    """One curve in words: its series (and condition), its EER where known, its band at the false-alarm rates of
    ``BAND_ALT_RATES`` where it has one."""
    text = _series(entry)
    if entry.get("linestyle"):
        text += f" ({entry.get('condition')})"
    eer = _number(entry.get("eer_interp"))
    if eer is not None:
        text += f" EER (interp) {format_number(eer)}"
    band = entry.get("band")
    if isinstance(band, Mapping):
        rates = [_number(rate) for rate in band["p_fa"]]
        for wanted in BAND_ALT_RATES:
            near = min(range(len(rates)), key=lambda i: abs(math.log((rates[i] or 1e-9) / wanted)))
            miss, low, high = (format_number(_number(band[key][near])) for key in ("p_miss", "low", "high"))
            text += f", miss {miss} [{low}, {high}] at {format_number(rates[near])} false alarms"
    return text


def _shaded(band: Mapping[str, Any]) -> str:
    """What a DET figure's shading is, in its caption."""
    level = format_number(100 * float(band.get("level") or 0.95))
    return f"shaded: the pointwise {level}% band of the miss rate over the speaker bootstrap's draws"


def det_band_figures(report: Mapping[str, Any]) -> list[FigureOutcome]:
    """DET curves with the pointwise speaker-bootstrap bands of the statistics (``statistics.det_bands``), drawn
    once the statistics are in: each condition-family DET figure of a bundle again, its curves banded (same file:
    it replaces the bare one, ``add_statistics_figures``), and per experiment with subgroup records a figure of its
    own: a panel per encoder, a colour per subgroup, solid at the clean condition and dashed at the hardest."""
    statistics = report.get("statistics")
    listed = statistics.get("det_bands") if isinstance(statistics, Mapping) else None
    bands = [
        band
        for band in listed or []
        if isinstance(band, Mapping) and isinstance(band.get("key"), Mapping) and band.get("p_fa")
    ]
    exact = {str(c.get("record_id")): c for c in _curves(report, "det") if isinstance(c.get("det"), Mapping)}
    figures: dict[str, list[Mapping[str, Any]]] = {}
    for band in bands:
        key = band["key"]
        style = str(key.get("style") or "")
        entry = {
            **exact.get(str(key.get("record_id")), {"det": {"p_fa": band["p_fa"], "p_miss": band["p_miss"]}}),
            **{name: str(key.get(name) or "") for name in ("figure", "panel", "series")},
            "band": band,
            **({"linestyle": "-" if style == "clean" else "--", "condition": style} if style else {}),
        }
        figures.setdefault(entry["figure"], []).append(entry)
    colours = _series_colours(list(dict.fromkeys(str(e["series"]) for members in figures.values() for e in members)))
    drawn = []
    for name, members in figures.items():
        shaded = _shaded(members[0]["band"])
        conditions = sorted({str(e["condition"]) for e in members if e.get("linestyle") == "--"})
        caption = (
            f"DET curves of {_label(name)}: a panel per encoder, one colour per subgroup, solid clean, dashed "
            f"{_label(', '.join(conditions)) or 'the hardest condition'}; {shaded}"
            if any("condition" in e for e in members)
            else f"DET curves of {_label(name)} per condition family (each family at its hardest condition), one "
            f"colour per encoder, EER (interp) marked; {shaded}"
        )
        drawn.append(_det_figure(name, members, colours, caption))
    return drawn
