"""The report's figures as deterministic PNG bytes, each with a caption and a text alternative (what it shows, in
words and numbers): IE vs additive prediction (paper Figure 3) with the coupling shown, the gender gap vs SNR per
noise type (paper Figure 4), the EER heatmap condition x encoder, 2x2 interaction plots per contrast family, and,
from per-trial scores, DET curves on normal-deviate axes with the EER point marked and the target vs non-target
score distributions: per group of ``audit scores``; for a bundle, one DET figure per experiment drawn (a panel
per condition family, a curve per encoder) and per encoder the histograms of the condition that moves its EER
most, over those of its clean reference (``audit.bundle.curves`` chooses them), and, where the run declares a
calibration, the normalised Bayes error plot of its clean list. Once a bundle's statistics are in, its DET figures
are drawn again with each curve's pointwise speaker-bootstrap band, and a DET figure per experiment with subgroups
is added (``det_band_figures``, from ``statistics.det_bands``).

matplotlib is imported inside the drawing functions so that ``import reports`` stays light. Figures are drawn
on an Agg canvas with matplotlib's default style (a user's matplotlibrc cannot change the bytes) and saved as
PNG and as SVG without the ``Software``/``Creator``/``Date`` metadata and with a fixed SVG id salt, so the same
report gives the same bytes on every run. A figure whose data is absent is skipped with the reason, never drawn
empty. Figures are at most ``FIGSIZE_INCHES`` wide, in at most two columns of panels, with no text below
``SMALL_PT``, so that scaled down to a phone's width their text stays legible.
"""

from __future__ import annotations

import io
import math
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any

from reports.format import format_number
from schemas import keyed_rows

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FIGSIZE_INCHES = (6.4, 4.4)  # narrow enough that text at SMALL_PT stays legible scaled down to a phone's width
DPI = 100
SMALL_PT, TEXT_PT = 8, 9  # the smallest text of any figure (ticks, legends, cell values), and the rest of its text
CHAR_INCHES = 0.62 * TEXT_PT / 72  # the mean width of a character at TEXT_PT (DejaVu Sans: about 0.6 em)
PNG_COMPRESSION = 1  # zlib's fastest, on RGB: a third of the time of RGBA at PIL's default 6, and a smaller file
SVG_SALT = "interbias-sv"  # SVG element ids derive from it, not from a random salt
CHANCE_EER = 0.5
LEGEND_INSIDE_MAX = 6
LEGEND_COLUMN_ROWS = 16
EXPECTED_R_PREFIX = "r_expected_"
FAMILY_MARKERS = {"speaker": "o", "ssl": "^", "": "o"}
GAP_KEYS = ("gap_abs_mean", "gap_mean")
GAP_SD_KEYS = ("gap_abs_sd", "gap_sd")


@dataclass(frozen=True)
class FigureOutcome:
    """One figure: its PNG bytes, or ``png is None`` and the reason it was skipped."""

    filename: str
    caption: str
    png: bytes | None
    skipped_because: str = ""
    alt: str = ""  # the text alternative of a drawn figure
    svg: bytes | None = None  # the same figure as SVG, written beside the PNG
    section: str = ""  # the id of the report section that shows it; "": the Figures section

    @property
    def svg_filename(self) -> str:
        return self.filename.removesuffix(".png") + ".svg"


def _number(value: Any) -> float | None:
    """``value`` as a finite float, or None when it is absent, not a number or not finite."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _label(value: Any) -> str:
    """An input string as plain figure text: ``$`` would otherwise start matplotlib mathtext."""
    return str(value).replace("$", r"\$")


def _first_number(row: Mapping[str, Any], keys: Sequence[str]) -> float | None:
    """The first of ``keys`` that ``row`` holds, as a finite float (the audit writes ``gap_abs_mean`` where
    the report contract says ``gap_mean``; both are read)."""
    for key in keys:
        if key in row:
            return _number(row[key])
    return None


def _drawn(
    filename: str,
    caption: str,
    alt: str,
    draw: Callable[[Figure, Axes], None],
    figsize: tuple[float, float] = FIGSIZE_INCHES,
) -> FigureOutcome:
    """Run ``draw`` on a fresh figure and keep it as PNG and SVG bytes, identical for identical input; no text
    smaller than ``SMALL_PT``.

    The figure is laid out and rendered once on its Agg canvas, whose pixels are the PNG (``savefig`` would lay it
    out in a pass of its own, then render it again); the SVG is drawn from the same layout. The drawing places its
    axes itself (``_place``, ``_lay_out``, ``_heatmap_part``: a fixed layout in inches from measured text, not
    matplotlib's constrained layout, which measures every tick label again and again). Titles stay where
    ``axes.titley`` puts them (just above the axes): matplotlib would otherwise measure every y tick label per title
    per draw to see whether something above the axes pushes the title up.
    """
    import matplotlib
    import matplotlib.style
    import PIL.Image
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.text import Text

    rc = {"svg.hashsalt": SVG_SALT, "svg.fonttype": "none", "font.size": TEXT_PT, "axes.titley": 1.0}
    with matplotlib.style.context("default"), matplotlib.rc_context(rc):
        figure = Figure(figsize=figsize, dpi=DPI)
        canvas = FigureCanvasAgg(figure)
        draw(figure, figure.add_subplot())
        for text in figure.findobj(Text):  # the floor, whatever size a drawing asked for
            if text.get_fontsize() < SMALL_PT:
                text.set_fontsize(SMALL_PT)
        canvas.draw()  # the pixels, in the layout the drawing fixed
        png, svg = io.BytesIO(), io.BytesIO()
        pixels = PIL.Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba()).convert("RGB")
        pixels.save(png, format="png", dpi=(DPI, DPI), compress_level=PNG_COMPRESSION)  # opaque: RGB is lossless
        figure.savefig(svg, format="svg", metadata={"Creator": None, "Date": None})
    return FigureOutcome(filename, caption, png.getvalue(), alt=alt, svg=svg.getvalue())


def import_drawing() -> None:
    """Import matplotlib's drawing modules now: a process that draws some figures in a fork of itself and the others
    in itself (``audit verify --bundle --out``) then imports them once, before the fork, not in both."""
    import matplotlib.backends.backend_agg
    import matplotlib.figure
    import matplotlib.style  # noqa: F401
    import PIL.Image  # noqa: F401


def _legend(figure: Figure, axes: Axes, extra: Sequence[Artist] = ()) -> float:
    """A legend inside the axes when short, beside them (in columns of at most 16 entries) when long; the inches it
    takes right of the axes (0 inside them)."""
    handles, _ = axes.get_legend_handles_labels()
    handles = [*handles, *extra]
    if len(handles) <= LEGEND_INSIDE_MAX:
        axes.legend(handles=handles, fontsize=SMALL_PT, loc="best")
        return 0.0
    columns = math.ceil(len(handles) / LEGEND_COLUMN_ROWS)
    figure.legend(handles=handles, fontsize=SMALL_PT, loc="upper right", ncols=columns)
    column = _text_inches([str(handle.get_label()) for handle in handles], SMALL_PT) + (2.0 + 0.8) * SMALL_PT / 72
    return columns * column + ((columns - 1) * 2.0 + 2 * 0.4 + 0.5 + 1.0) * SMALL_PT / 72  # keys, pads, a gap


def _legend_columns(handles: Sequence[Artist]) -> int:
    """As many legend columns as fit across ``FIGSIZE_INCHES``'s width, each as wide as the longest label at
    ``SMALL_PT`` beside its key."""
    longest = max(len(str(handle.get_label())) for handle in handles)
    return max(1, min(len(handles), int(FIGSIZE_INCHES[0] // (CHAR_INCHES * SMALL_PT / TEXT_PT * longest + 0.6))))


def _rows(report: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    aggregates = report.get("aggregates") or {}
    return [row for row in aggregates.get(key) or [] if isinstance(row, Mapping)]


def coupling_lines(coupling: Mapping[str, Any]) -> list[str]:
    """The observed r, then every correlation expected under additivity the report gives (``r_expected_*``:
    the audit's binomial-noise value, and a bootstrap one when per-trial scores exist)."""
    observed = _number(coupling.get("r_observed"))
    lines = [f"observed r = {format_number(observed)}" if observed is not None else "observed r: not reported"]
    for key in sorted(key for key in coupling if key.startswith(EXPECTED_R_PREFIX)):
        expected = _number(coupling[key])
        how = key.removeprefix(EXPECTED_R_PREFIX).replace("_", " ")
        lines.append(f"expected r ({how}) = {format_number(expected) if expected is not None else 'n/a'}")
    if len(lines) == 1:
        lines.append("expected r under additivity: not reported")
    return lines


def ie_vs_prediction(report: Mapping[str, Any]) -> FigureOutcome:
    """Scatter of IE against the additive prediction (colour per experiment, marker per model family), with
    the observed correlation beside the one expected under additivity (IE contains -prediction, so the two are
    coupled by construction), the IE = 0 line and the chance line at prediction 0.5."""
    filename, caption = "ie_vs_prediction.png", "Interaction effect vs additive prediction"
    points: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for row in _rows(report, "contrasts"):
        prediction, ie = _number(row.get("prediction")), _number(row.get("ie"))
        if prediction is not None and ie is not None:
            key = (str(row.get("experiment", "?")), str(row.get("model_family") or ""))
            points.setdefault(key, []).append((prediction, ie))
    if not points:
        return FigureOutcome(filename, caption, None, "no contrast has both a prediction and an IE")
    note = "\n".join(coupling_lines((report.get("aggregates") or {}).get("ie_vs_prediction") or {}))
    experiments = sorted({experiment for experiment, _ in points})

    families = sorted({family for _, family in points})

    def draw(figure: Figure, axes: Axes) -> None:
        import matplotlib
        from matplotlib.lines import Line2D

        colormap = matplotlib.colormaps["tab10" if len(experiments) <= 10 else "tab20"]
        palette = [colormap(index) for index in range(colormap.N)]
        colours = {experiment: palette[index % len(palette)] for index, experiment in enumerate(experiments)}
        for (experiment, family), members in sorted(points.items()):
            xs, ys = zip(*members, strict=True)
            marker = FAMILY_MARKERS.get(family, "s")
            axes.scatter(xs, ys, s=14, alpha=0.75, color=colours[experiment], marker=marker)
        # One legend entry per experiment (colour) and per model family (marker), not per combination.
        keys = [
            Line2D([], [], color=colours[experiment], marker="o", linestyle="", label=_label(experiment))
            for experiment in experiments
        ]
        if families != [""]:
            keys += [
                Line2D([], [], color="0.4", marker=FAMILY_MARKERS.get(family, "s"), linestyle="",
                       label=_label(family or "family not stated"))
                for family in families
            ]  # fmt: skip
        axes.axhline(0.0, color="0.3", linewidth=0.8, label="IE = 0 (additive)")
        axes.axvline(CHANCE_EER, color="tab:red", linestyle="--", linewidth=0.9, label="chance (0.5)")
        box = {"boxstyle": "round", "facecolor": "white", "alpha": 0.85}
        axes.text(0.02, 0.03, note, transform=axes.transAxes, fontsize=SMALL_PT, va="bottom", bbox=box)
        axes.set_xlabel("additive prediction  EER(A) + EER(B) - EER(clean)")
        axes.set_ylabel("IE  EER(A+B) - prediction")
        axes.set_title(caption)
        _lay_out([axes], TEXT_PT, TEXT_PT, title_lines=1.2, right=_legend(figure, axes, keys))  # a title: 1.2 em

    n_points = sum(len(members) for members in points.values())
    alt = f"Scatter of {n_points} contrasts in {len(experiments)} experiments; " + "; ".join(note.split("\n"))
    return _drawn(filename, caption, alt, draw)


def gap_vs_snr(report: Mapping[str, Any]) -> FigureOutcome:
    """Mean absolute gender gap against SNR, one line per noise type with SD bars; the clean reference (a row
    without an SNR, or the rows' ``clean_gap_abs_mean``) is drawn as a horizontal dotted line."""
    filename, caption = "gap_vs_snr.png", "Gender EER gap vs SNR"
    rows = _rows(report, "gap_vs_snr")
    several = len({(row.get("experiment"), row.get("corpus")) for row in rows}) > 1
    series: dict[str, list[tuple[float, float, float, float]]] = {}  # snr, gap, lower and upper bar
    references: dict[str, float] = {}
    for row in rows:
        prefix = f"{row.get('experiment', '')} " if several else ""
        gap = _first_number(row, GAP_KEYS)
        name = prefix + str(row.get("noise", row.get("condition", "?")))
        snr = _number(row.get("snr_db"))
        clean = _number(row.get("clean_gap_abs_mean"))
        if clean is not None:
            references[f"{prefix}clean"] = clean
        if gap is None:
            continue
        if snr is None:
            references[name] = gap
        else:
            sd = _first_number(row, GAP_SD_KEYS)
            upper = math.nan if sd is None else sd
            lower = min(upper, gap) if GAP_KEYS[0] in row else upper  # an absolute gap's bar stops at zero
            series.setdefault(name, []).append((snr, gap, lower, upper))
    if not series:
        return FigureOutcome(filename, caption, None, "no gender gap with an SNR in the report")

    def draw(figure: Figure, axes: Axes) -> None:
        for name in sorted(series):
            snrs, gaps, lower, upper = zip(*sorted(series[name]), strict=True)
            axes.errorbar(snrs, gaps, yerr=[lower, upper], marker="o", markersize=4, capsize=3, label=_label(name))
        for name in sorted(references):
            label = f"{_label(name)} (no SNR)"
            axes.axhline(references[name], color="0.4", linestyle=":", linewidth=1.0, label=label)
        axes.set_xlabel("SNR (dB)")
        axes.set_ylabel("mean absolute gender EER gap (± SD)")
        axes.set_title(caption)
        _lay_out([axes], TEXT_PT, TEXT_PT, title_lines=1.2, right=_legend(figure, axes))  # a title: 1.2 em

    alt = "Gender gap by SNR: " + "; ".join(
        f"{name}: "
        + ", ".join(f"{format_number(snr)} dB {format_number(gap)}" for snr, gap, _, _ in sorted(series[name]))
        for name in sorted(series)
    )
    return _drawn(filename, caption, alt, draw)


def _panels(figure: Figure, axes: Axes, n: int) -> list[Axes]:
    """``n`` panels for ``_place``, the first the axes ``_drawn`` made."""
    return [axes] + [figure.add_axes((0.0, 0.0, 1.0, 1.0)) for _ in range(n - 1)]


def _place(
    panels: Sequence[Axes],
    margins: tuple[float, float, float, float],
    gaps: tuple[float, float],
    columns: int | None = None,
) -> None:
    """``panels`` in rows of ``columns`` (``_columns``'s by default) placed in inches: a fixed layout, not
    matplotlib's constrained layout (which measures every label on every draw). ``margins``: left, right, top and
    bottom of the grid; ``gaps``: between columns and between rows."""
    figure = panels[0].get_figure()
    width, height = figure.get_size_inches()
    left, right, top, bottom = margins
    columns = columns or _columns(len(panels))
    rows = math.ceil(len(panels) / columns)
    across = (width - left - right - (columns - 1) * gaps[0]) / columns
    down = (height - top - bottom - (rows - 1) * gaps[1]) / rows
    for i, panel in enumerate(panels):
        row, column = divmod(i, columns)
        box = (left + column * (across + gaps[0]), bottom + (rows - 1 - row) * (down + gaps[1]), across, down)
        panel.set_position(_fractions(box, (width, height)))


def _legend_inches(rows: int, points: float = SMALL_PT) -> float:
    """The height of a legend of ``rows`` rows of text at ``points`` with matplotlib's default paddings (0.4 em
    border, 0.5 em between rows, 0.5 em from the figure's edge), in inches."""
    return points * (rows * LINE_EM + (rows - 1) * 0.5 + 2 * 0.4 + 0.5) / 72


def _columns(n: int) -> int:
    return min(2, n)


def _panel_size(n: int, row_inches: float = 2.6) -> tuple[float, float]:
    return (FIGSIZE_INCHES[0], max(FIGSIZE_INCHES[1], row_inches * math.ceil(n / _columns(n))))


DET_TICKS = (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4)  # 0.002 would touch 0.001's label in a panel
DET_LIMITS = (0.0005, 0.6)
MAX_PANELS = 9
MAX_HISTOGRAMS = 12  # a bundle's encoders with histograms
MAX_HEATMAP_ROWS = 36  # conditions in one heatmap, a row each; more are drawn in further parts
HEATMAP_ROW_INCHES = 0.26  # a row: its label at TEXT_PT and a value at SMALL_PT, with room between rows
HEATMAP_COLUMN_INCHES = 0.9  # an encoder's column at the widest; narrower where many share the figure's width
COLORBAR_INCHES = 1.0  # the colour bar beside a heatmap: its gap, the bar, its tick labels and its label
COLORBAR_GAP_INCHES, COLORBAR_WIDTH_INCHES = 0.15, 0.15
TICK_INCHES = 7 / 72  # a tick (3.5 pt) and the pad between it and its label (3.5 pt)
LINE_EM = 1.17  # a line of DejaVu Sans (its ascent and descent), in em
TITLE_GAP_INCHES, MARGIN_INCHES = 0.08, 0.06


def _curves(report: Mapping[str, Any], figure: str) -> list[Mapping[str, Any]]:
    """The report's per-trial curves that ``figure`` (det or scores) draws (both when a curve does not say)."""
    return [
        curve
        for curve in report.get("curves") or []
        if isinstance(curve, Mapping) and figure in (curve.get("figures") or ("det", "scores"))
    ]


def _series_colours(names: Sequence[str]) -> dict[str, Any]:
    """One colour per series name, the same in every panel and figure (tab10, tab20 beyond ten)."""
    import matplotlib

    colormap = matplotlib.colormaps["tab10" if len(names) <= 10 else "tab20"]
    return {name: colormap(index % colormap.N) for index, name in enumerate(names)}


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
            linestyle=style, label=_label(series),
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


DET_TICK_LABELS = tuple(f"{100 * t:g}" for t in DET_TICKS)


def _frame(
    axes: Axes,
    x: tuple[Sequence[float], Sequence[str]],
    y: tuple[Sequence[float], Sequence[str]],
    bottom: bool = True,
    left: bool = True,
    grid: bool = False,
    points: float = SMALL_PT,
) -> None:
    """Ticks at ``x`` and ``y`` (positions, labels) drawn once as plain artists at the axes' present limits (kept): the
    grid (``grid``) and each side's tick marks one line each, the labels texts at ``points`` below (``bottom``) and
    left (``left``), and the axis labels placed beside them, not by matplotlib's tick machinery (a tick is four
    artists, created per axis and measured on every draw). Looks as matplotlib's default ticks and grid do: 3.5 pt
    ticks out, labels 3.5 pt beyond, the grid at 0.9 grey."""
    from matplotlib.transforms import offset_copy

    axes.set_xlim(axes.get_xlim())
    axes.set_ylim(axes.get_ylim())
    axes.set_xticks([])
    axes.set_yticks([])
    figure = axes.get_figure()
    along, across = axes.get_xaxis_transform(), axes.get_yaxis_transform()
    mark = {"linestyle": "", "color": "black", "markersize": 3.5, "markeredgewidth": 0.8, "clip_on": False}
    if grid:
        xs, ys = ([t for t in ticks for _ in range(3)] for ticks in (x[0], y[0]))
        edges = [0.0, 1.0, math.nan]  # a segment across the axes per tick, NaN between
        axes.plot(xs, edges * len(x[0]), transform=along, color="0.9", linewidth=0.8, zorder=1.5)
        axes.plot(edges * len(y[0]), ys, transform=across, color="0.9", linewidth=0.8, zorder=1.5)
    axes.plot(x[0], [0.0] * len(x[0]), marker=3, transform=along, **mark)  # TICKDOWN
    axes.plot([0.0] * len(y[0]), y[0], marker=0, transform=across, **mark)  # TICKLEFT
    gap = TICK_INCHES * 72
    if bottom:
        below = offset_copy(along, figure, y=-gap, units="points")
        for t, label in zip(*x, strict=True):
            axes.text(t, 0.0, label, ha="center", va="top", fontsize=points, transform=below)
        under = offset_copy(axes.transAxes, figure, y=-(gap + LINE_EM * points + LABEL_PAD_PT), units="points")
        axes.xaxis.set_label_coords(0.5, 0.0, under)
    if left:
        beside = offset_copy(across, figure, x=-gap, units="points")
        for t, label in zip(*y, strict=True):
            axes.text(0.0, t, label, ha="right", va="center_baseline", fontsize=points, transform=beside)
        width = _text_inches(y[1], points) * 72 if y[1] else 0.0
        outside = offset_copy(axes.transAxes, figure, x=-(gap + width + LABEL_PAD_PT), units="points")
        axes.yaxis.set_label_coords(0.0, 0.5, outside)


def _auto_ticks(axis: Any) -> tuple[list[float], list[str]]:
    """The ticks matplotlib would draw on ``axis`` (an x or y axis) at its present limits, and their labels: its
    locator and formatter asked once, no text laid out."""
    low, high = sorted(axis.get_view_interval())
    slack = 1e-10 * (high - low)
    ticks = [float(t) for t in axis.get_major_locator()() if low - slack <= t <= high + slack]
    return ticks, list(axis.get_major_formatter().format_ticks(ticks))


def _frame_inches(labels: Sequence[str], points: float) -> float:
    """The room left of an axes that ``_frame`` labels: the axis label's line, its pad, the tick labels, the tick."""
    return (LINE_EM * points + LABEL_PAD_PT + TICK_INCHES * 72) / 72 + (_text_inches(labels, points) if labels else 0)


def _lay_out(
    panels: Sequence[Axes],
    ticks_pt: float = SMALL_PT,
    label_pt: float = SMALL_PT,
    title_lines: float = 1.0,
    legend_inches: float = 0.0,
    right: float = 0.1,
    columns: int | None = None,
) -> None:
    """Panels with their own scales in a fixed layout: placed where their tick labels will be chosen (room for
    ``0.000`` left of each), their ticks then chosen once (``_auto_ticks``: a fixed locator's where a drawing set
    one) and drawn by ``_frame`` at ``ticks_pt``, the panels placed again with room for the y tick labels as they
    are. Room too for axis labels at ``label_pt``, titles of ``title_lines`` lines at ``label_pt``, a figure legend
    of ``legend_inches`` below and ``right`` inches right (text that may run past a panel's edge)."""
    columns = columns or _columns(len(panels))
    below = (TICK_INCHES * 72 + LINE_EM * ticks_pt + LABEL_PAD_PT + LINE_EM * label_pt) / 72
    above = (LINE_EM * label_pt * title_lines + TITLE_PAD_PT) / 72

    def place(ys: Sequence[Sequence[str]], xs: Sequence[Sequence[str]]) -> None:
        lefts = [_frame_inches(shown, ticks_pt) + LINE_EM * (label_pt - ticks_pt) / 72 for shown in ys]
        overhangs = [_text_inches(shown, ticks_pt) / 2 if shown else 0.0 for shown in xs]  # a last x label's half
        ends = [max(right, overhang) for i, overhang in enumerate(overhangs) if i % columns == columns - 1]
        margins = (max(lefts[::columns]) + MARGIN_INCHES, max(ends, default=right) + MARGIN_INCHES,
                   above + MARGIN_INCHES, below + legend_inches + 0.1)  # fmt: skip
        inner = [left + overhangs[i - 1] for i, left in enumerate(lefts) if i % columns]
        _place(panels, margins, (max(inner, default=0.0) + 0.2, below + above + 0.1), columns)

    place([["0.000"]] * len(panels), [[]] * len(panels))
    ys, xs = [], []
    for panel in panels:
        y, x = _auto_ticks(panel.yaxis), _auto_ticks(panel.xaxis)
        _frame(panel, x, y, points=ticks_pt)
        ys.append(y[1])
        xs.append(x[1])
    place(ys, xs)


LABEL_PAD_PT = 4.0  # between tick labels and an axis label (matplotlib's axes.labelpad)
TITLE_PAD_PT = 6.0  # between an axes and its title (axes.titlepad)


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
    caption = caption or (
        f"DET curves of {_label(name)} per condition family (each family at its hardest condition), one colour per "
        "encoder, EER (interp) marked"
        if name
        else "DET curves per group, EER (interp) marked"
    )
    alt = f"DET curves{' of ' + name if name else ''}: " + "; ".join(
        (f"{panel}: " if panel else "") + ", ".join(_det_alt(c) for c in members) for panel, members in panels.items()
    )

    line = LINE_EM * SMALL_PT / 72
    frame = (2 * line + (TICK_INCHES * 72 + LABEL_PAD_PT) / 72, _frame_inches(DET_TICK_LABELS, SMALL_PT))

    def draw(figure: Figure, axes: Axes) -> None:
        if list(panels) == [""]:
            _det_axes(axes, curves, colours)
            axes.set_title(caption)
            right = _legend(figure, axes) + 0.1
            above = (LINE_EM * TEXT_PT * 1.2 + TITLE_PAD_PT) / 72  # a title at 1.2 em
            _place([axes], (frame[1] + MARGIN_INCHES, right + MARGIN_INCHES, above + MARGIN_INCHES, frame[0]), (0, 0))
            return
        series = list(dict.fromkeys(str(c.get("series", c.get("group"))) for c in curves))
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color=colours[s], linewidth=1.5, label=_label(s)) for s in series]
        styles = {str(c["condition"]): str(c["linestyle"]) for c in curves if c.get("linestyle")}
        handles += [
            Line2D([], [], color="black", linestyle=style, label=_label(name)) for name, style in styles.items()
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
            panel.set_title(_label(title), fontsize=SMALL_PT)
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


BAND_ALT_RATES = (0.01, 0.1)  # false-alarm rates at which a band is given in words


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
        level = format_number(100 * float(members[0]["band"].get("level") or 0.95))
        shaded = f"shaded: the pointwise {level}% band of the miss rate over the speaker bootstrap's draws"
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


DET_PENDING = "drawn once the statistics are in (add_statistics_figures)"


def add_statistics_figures(figures: Sequence[FigureOutcome], report: Mapping[str, Any]) -> list[FigureOutcome]:
    """``figures`` (drawn from the aggregates and curves, perhaps before the statistics ran) with the figures that
    need the statistics (``det_band_figures``): one of the same file replaces the figure drawn without them, the
    others follow the DET figures, the menagerie's (``menagerie_figure``) last. The DET figures that
    ``render_figures(..., statistics_pending=True)`` left out are drawn here, each once: with its bands, or bare
    where the statistics give it none."""
    banded = {figure.filename: figure for figure in det_band_figures(report)}
    kept = []
    for figure in figures:
        if figure.skipped_because == DET_PENDING:
            kept += det_curves(report, banded)
        else:
            kept.append(banded.get(figure.filename, figure))
    for figure in kept:
        banded.pop(figure.filename, None)
    last_det = max((i for i, figure in enumerate(kept) if figure.filename.startswith("det_curves")), default=-1)
    return [*kept[: last_det + 1], *banded.values(), *kept[last_det + 1 :], *menagerie_figure(report)]


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


HISTOGRAM_COLOURS = (("target", "tab:blue"), ("nontarget", "tab:red"))


def score_distributions(report: Mapping[str, Any]) -> FigureOutcome:
    """Target and non-target score histograms: one panel per group of ``audit scores``; for a bundle one panel per
    encoder, the condition that moves its EER most (filled) over its clean reference (outlined)."""
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

    def draw(figure: Figure, axes: Axes) -> None:
        panels = _panels(figure, axes, len(shown))
        for panel, (name, members) in zip(panels, shown.items(), strict=True):
            for entry in members:
                histogram, edges = entry["histogram"], entry["histogram"]["edges"]
                for key, colour in HISTOGRAM_COLOURS:
                    if entry.get("role") == "reference":
                        panel.stairs(histogram[key], edges, color=colour, linewidth=1.1)
                    else:
                        panel.stairs(histogram[key], edges, fill=True, alpha=0.45, color=colour, label=key)
            title = _label(name)
            if moved:
                eers = {e.get("role"): format_number(_number(e.get("eer_interp"))) for e in members}
                condition = next((str(e.get("series")) for e in members if e.get("role") == "condition"), "")
                title += f": {_label(condition)}\nEER (interp) {eers.get('reference')} clean, {eers.get('condition')}"
            panel.set_title(title, fontsize=SMALL_PT)
            panel.set_xlabel("score", fontsize=SMALL_PT)
            panel.set_ylabel("trials", fontsize=SMALL_PT)
            if not moved:
                panel.legend(fontsize=SMALL_PT)
        legend = 0.0
        if moved:
            from matplotlib.lines import Line2D
            from matplotlib.patches import Patch

            keys: list[Artist] = [Patch(color=c, alpha=0.45, label=f"{k}: the condition") for k, c in HISTOGRAM_COLOURS]
            keys += [Line2D([], [], color=c, label=f"{k}: clean reference") for k, c in HISTOGRAM_COLOURS]
            columns = _legend_columns(keys)
            figure.legend(handles=keys, fontsize=SMALL_PT, loc="lower center", ncols=columns)
            legend = _legend_inches(math.ceil(len(keys) / columns))
        _lay_out(panels, title_lines=2 if moved else 1, legend_inches=legend)

    return _drawn(filename, caption, alt, draw, _panel_size(len(shown)))


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


def _text_inches(texts: Sequence[str], points: float) -> float:
    """The width of the widest of ``texts`` at ``points`` in inches, from the font's glyph advances (``_advance``)
    plus half a pixel per character (the most that Agg's hinting rounds an advance up by) and two (a last glyph's
    ink past its advance): at least the width Agg draws, without laying each text out (matplotlib's layout of a
    text costs about a millisecond)."""
    return max(sum(_advance(char, points) + 0.5 for char in str(text)) + 2 for text in texts) / DPI


@cache
def _advance(char: str, points: float) -> float:
    """The advance of ``char`` at ``points`` in the figures' font, in pixels at ``DPI`` (kerning left out: it only
    narrows a text)."""
    from matplotlib.font_manager import FontProperties, findfont, get_font

    font = get_font(findfont(FontProperties(size=points)))
    font.set_size(points, DPI)
    return font.load_char(ord(char)).linearHoriAdvance / 65536


def _fractions(box: tuple[float, float, float, float], size: tuple[float, float]) -> list[float]:
    """A box (left, bottom, width, height) in inches as fractions of a figure of ``size`` inches."""
    left, bottom, width, height = box
    return [left / size[0], bottom / size[1], width / size[0], height / size[1]]


def interaction_plots(report: Mapping[str, Any]) -> FigureOutcome:
    """Per contrast family (experiment, model family): mean EER without and with factor A, one line without B and
    one with B; parallel lines are additive, their gap's change is the mean IE."""
    filename, caption = "interaction_plots.png", "2x2 interaction plots per contrast family (mean EER)"
    families: dict[str, list[tuple[float, float, float, float]]] = {}
    names: dict[str, tuple[str, str]] = {}
    for row in _rows(report, "contrasts"):
        terms = [_number(row.get(k)) for k in ("eer_clean", "eer_a", "eer_b", "eer_ab")]
        if any(term is None for term in terms):
            continue
        family = f"{row.get('experiment', '?')} {row.get('model_family') or ''}".strip()
        families.setdefault(family, []).append(tuple(terms))  # type: ignore[arg-type]
        names.setdefault(family, (str(row.get("factor_a") or "A"), str(row.get("factor_b") or "B")))
    if not families:
        return FigureOutcome(filename, caption, None, "no contrast has all four terms")
    shown = sorted(families)[:MAX_PANELS]
    means = {f: [sum(t[i] for t in families[f]) / len(families[f]) for i in range(4)] for f in shown}
    alt = "Interaction plots: " + "; ".join(
        f"{f} ({len(families[f])} contrasts): clean {format_number(m[0])}, A {format_number(m[1])}, "
        f"B {format_number(m[2])}, A+B {format_number(m[3])}, mean IE {format_number(m[3] - m[1] - m[2] + m[0])}"
        for f, m in means.items()
    )

    def draw(figure: Figure, axes: Axes) -> None:
        panels = _panels(figure, axes, len(shown))
        for panel, family in zip(panels, shown, strict=True):
            clean, a, b, ab = means[family]
            factor_a, factor_b = names[family]
            panel.plot([0, 1], [clean, a], marker="o", label=f"without {_label(factor_b)}")
            panel.plot([0, 1], [b, ab], marker="s", label=f"with {_label(factor_b)}")
            panel.set_xticks([0, 1], ["clean", _label(factor_a)], fontsize=SMALL_PT)
            panel.set_title(f"{_label(family)} (n={len(families[family])})", fontsize=TEXT_PT)
            panel.set_ylabel("mean EER", fontsize=SMALL_PT)
            panel.legend(fontsize=SMALL_PT)
        _lay_out(panels, title_lines=TEXT_PT / SMALL_PT)

    return _drawn(filename, caption, alt, draw, _panel_size(len(shown)))


def bayes_error_plot(report: Mapping[str, Any]) -> FigureOutcome:
    """The normalised Bayes error of the clean list's calibrated LLRs (solid) and of their PAV recalibration
    (dashed), one colour per encoder, over the prior log-odds; 1 is the cost of deciding without the scores."""
    curves = [c for c in _curves(report, "bayes-error") if isinstance(c.get("actual"), list)]
    filename = "bayes_error.png"
    if not curves:
        return FigureOutcome(filename, "Normalised Bayes error of the clean list", None, "no declared calibration")
    figure_of = str(curves[0].get("figure") or "")
    caption = (
        f"Normalised Bayes error of the clean list ({figure_of}): calibrated LLRs (solid) and after the best "
        "monotone recalibration (PAV, dashed), per encoder"
    )
    colours = _series_colours([str(c.get("series")) for c in curves])
    parts = []
    for entry in curves:
        x, actual, minimum = entry["prior_log_odds"], entry["actual"], entry["minimum"]
        middle = min(range(len(x)), key=lambda i: abs(x[i]))
        parts.append(
            f"{entry.get('series')} ({entry.get('n_target')} target, {entry.get('n_nontarget')} non-target trials): "
            f"at even odds {format_number(actual[middle])} actual, {format_number(minimum[middle])} minimum; "
            f"largest gap {format_number(max(a - m for a, m in zip(actual, minimum, strict=True)))}"
        )
    alt = "Normalised Bayes error against prior log-odds: " + "; ".join(parts)

    def draw(figure: Figure, axes: Axes) -> None:
        from matplotlib.lines import Line2D

        for entry in curves:
            colour = colours[str(entry.get("series"))]
            axes.plot(entry["prior_log_odds"], entry["actual"], color=colour, label=_label(entry.get("series")))
            axes.plot(entry["prior_log_odds"], entry["minimum"], color=colour, linestyle="--", linewidth=1)
        axes.axhline(1.0, color="grey", linestyle=":", linewidth=1)
        axes.set_ylim(0, 1.2)
        axes.set_xlabel("prior log-odds log(p / (1 - p))", fontsize=SMALL_PT)
        axes.set_ylabel("normalised Bayes error", fontsize=SMALL_PT)
        styles = [
            Line2D([], [], color="black", label="calibrated (actual)"),
            Line2D([], [], color="black", linestyle="--", label="PAV (minimum)"),
            Line2D([], [], color="grey", linestyle=":", label="no decision (1)"),
        ]
        _lay_out([axes], title_lines=0.0, right=_legend(figure, axes, styles))

    return _drawn(filename, caption, alt, draw)


FIGURES: Sequence[Callable[[Mapping[str, Any]], FigureOutcome | list[FigureOutcome]]] = (
    ie_vs_prediction,
    gap_vs_snr,
    eer_heatmap,
    interaction_plots,
    det_curves,
    score_distributions,
    bayes_error_plot,
)


def render_figures(report: Mapping[str, Any], statistics_pending: bool = False) -> list[FigureOutcome]:
    """Every figure of the report, drawn or skipped, in a fixed order. ``FIGURES`` read only the report's
    ``aggregates`` and ``curves``, so they can be drawn before its statistics are in; the DET figures, which the
    statistics' bands redraw, are drawn last, each once (``add_statistics_figures``). ``statistics_pending``: the
    report's statistics are yet to come, so the DET figures are left to ``add_statistics_figures`` (one entry
    marks their place)."""
    drawn: list[FigureOutcome] = []
    for make in FIGURES:
        made = FigureOutcome("det_curves.png", "DET curves", None, DET_PENDING) if make is det_curves else make(report)
        drawn += made if isinstance(made, list) else [made]
    return drawn if statistics_pending else add_statistics_figures(drawn, report)
