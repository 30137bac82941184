"""DET curves on normal-deviate axes with the EER point marked: per group of ``audit scores``, or for a bundle one
figure per experiment drawn (a panel per condition family, a curve per encoder); once a bundle's statistics are in,
the same figures with each curve's pointwise speaker-bootstrap band, and a figure per experiment with subgroups
(``det_band_figures``, from ``statistics.det_bands``)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reports.figures.canvas import _drawn, _series_colours
from reports.figures.data import LABEL_INCHES, _curves, _label, _number
from reports.figures.layout import (
    FIGSIZE_INCHES,
    LABEL_PAD_PT,
    LINE_EM,
    MARGIN_INCHES,
    SMALL_PT,
    TEXT_PT,
    TICK_INCHES,
    TITLE_PAD_PT,
    _columns,
    _frame,
    _frame_inches,
    _legend,
    _legend_columns,
    _legend_inches,
    _panel_inches,
    _panels,
    _place,
)
from reports.figures.outcome import FigureOutcome
from reports.format import format_number

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


DET_TICKS = (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4)  # 0.002 would touch 0.001's label in a panel
DET_LIMITS = (0.0005, 0.6)
DET_TICK_LABELS = tuple(f"{100 * t:g}" for t in DET_TICKS)
BAND_ALT_RATES = (0.01, 0.1)  # false-alarm rates at which a band is given in words


def _clipped(values: Sequence[Any]) -> list[float]:
    """Rates within the DET axes' limits; an absent one (null in report.json) as NaN, a gap in the drawing."""
    low, high = DET_LIMITS
    return [math.nan if _number(v) is None else min(max(float(v), low), high) for v in values]


def _det_axes(
    axes: Axes, curves: Sequence[Mapping[str, Any]], colours: Mapping[str, Any], bottom: bool = True, left: bool = True
) -> None:
    """DET curves on normal-deviate axes, each with its EER (interp) point, its band (shaded) where it has one and
    its ``linestyle`` where it names one; the tick labels and axis labels below (``bottom``) and left (``left``)."""
    from scipy.special import ndtri  # the normal deviate (scipy.stats.norm.ppf's, without importing scipy.stats)

    low, high = DET_LIMITS
    for entry in curves:
        det = entry["det"]
        series = str(entry.get("series", entry.get("group")))
        colour = colours[series]
        band = entry.get("band")
        if isinstance(band, Mapping):
            x, lower, upper = (ndtri(_clipped(band[key])) for key in ("p_fa", "low", "high"))
            axes.fill_between(x, lower, upper, color=colour, alpha=0.18, linewidth=0)
        style = str(entry.get("linestyle") or "-")
        axes.plot(
            ndtri(_clipped(det["p_fa"])), ndtri(_clipped(det["p_miss"])), linewidth=1.2, color=colour,
            linestyle=style, label=_label(series, LABEL_INCHES),
        )  # fmt: skip
        eer = _number(entry.get("eer_interp"))
        if eer is not None:
            point = ndtri(min(max(eer, low), high))
            axes.plot([point], [point], marker="o", color=colour, markersize=4)
    axes.set_xlim(ndtri(low), ndtri(high))
    axes.set_ylim(ndtri(low), ndtri(high))
    axes.plot(ndtri([low, high]), ndtri([low, high]), color="0.7", linestyle=":", linewidth=0.8)
    ticks = [float(t) for t in ndtri(DET_TICKS)]
    _frame(axes, (ticks, DET_TICK_LABELS), (ticks, DET_TICK_LABELS), bottom, left, grid=True)
    if bottom:
        axes.set_xlabel("false-alarm probability (%)", fontsize=SMALL_PT)
    if left:
        axes.set_ylabel("miss probability (%)", fontsize=SMALL_PT)


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
    colours = _series_colours(list(dict.fromkeys(str(c.get("series", c.get("group"))) for c in curves)))
    banded = banded or {}
    return [banded.get(_det_filename(name)) or _det_figure(name, members, colours) for name, members in figures.items()]


def _det_filename(name: str) -> str:
    return f"det_curves_{_file_part(name)}.png" if name else "det_curves.png"


def _det_figure(
    name: str, curves: list[Mapping[str, Any]], colours: Mapping[str, Any], caption: str | None = None
) -> FigureOutcome:
    """One DET figure: a panel per ``panel`` of its curves (one panel when they name none); ``caption`` in place of
    the condition families' (a figure of bands, ``det_band_figures``)."""
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

    line = LINE_EM * SMALL_PT / 72
    frame = (2 * line + (TICK_INCHES * 72 + LABEL_PAD_PT) / 72, _frame_inches(DET_TICK_LABELS, SMALL_PT))

    def draw(figure: Figure, axes: Axes) -> None:
        if list(panels) == [""]:
            _det_axes(axes, curves, colours)
            axes.set_title(caption if name else heading)  # the groups' shading said in the caption alone
            right = _legend(figure, axes) + 0.1
            above = (LINE_EM * TEXT_PT * 1.2 + TITLE_PAD_PT) / 72  # a title at 1.2 em
            _place([axes], (frame[1] + MARGIN_INCHES, right + MARGIN_INCHES, above + MARGIN_INCHES, frame[0]), (0, 0))
            return
        series = list(dict.fromkeys(str(c.get("series", c.get("group"))) for c in curves))
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color=colours[s], linewidth=1.5, label=_label(s, LABEL_INCHES)) for s in series]
        styles = {str(c["condition"]): str(c["linestyle"]) for c in curves if c.get("linestyle")}
        handles += [
            Line2D([], [], color="black", linestyle=style, label=_label(name, LABEL_INCHES))
            for name, style in styles.items()
        ]
        columns = _legend_columns(handles)
        below = _legend_inches(math.ceil(len(handles) / columns)) + frame[0]
        above = line + TITLE_PAD_PT / 72
        margins = (frame[1] + MARGIN_INCHES, 0.1 + MARGIN_INCHES, above + MARGIN_INCHES, below + MARGIN_INCHES)
        grid = _panels(figure, axes, len(panels))
        _place(grid, margins, (0.25, above + 0.15))
        columns_of_panels = _columns(len(panels))
        for i, (panel, (title, members)) in enumerate(zip(grid, panels.items(), strict=True)):
            # one scale for all panels: tick labels where no panel is below or left
            _det_axes(panel, members, colours, i + columns_of_panels >= len(panels), i % columns_of_panels == 0)
            panel.set_title(_label(title, _panel_inches(panel)), fontsize=SMALL_PT)
        figure.legend(handles=handles, fontsize=SMALL_PT, loc="lower center", ncols=columns)

    size = (FIGSIZE_INCHES[0], 1.0 + 3.4 * math.ceil(len(panels) / _columns(len(panels)))) if len(panels) > 1 else None
    return _drawn(filename, caption, alt, draw, size or FIGSIZE_INCHES)


def _det_alt(entry: Mapping[str, Any]) -> str:
    """One curve in words: its series (and condition), its EER where known, its band at the false-alarm rates of
    ``BAND_ALT_RATES`` where it has one."""
    text = str(entry.get("series", entry.get("group")))
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
