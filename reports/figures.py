"""The report's figures as deterministic PNG bytes: IE vs additive prediction (paper Figure 3) with the
coupling shown, and the gender gap vs SNR per noise type (paper Figure 4).

matplotlib is imported inside the drawing functions so that ``import reports`` stays light. Figures are drawn
on an Agg canvas with matplotlib's default style (a user's matplotlibrc cannot change the bytes) and saved
without the ``Software`` metadata, so the same report gives the same bytes on every run. A figure whose data
is absent is skipped with the reason, never drawn empty.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reports.format import format_number

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FIGSIZE_INCHES = (8.0, 4.8)
DPI = 100
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


def _draw_png(draw: Callable[[Figure, Axes], None]) -> bytes:
    """Run ``draw`` on a fresh figure and return the PNG bytes, identical for identical input."""
    import matplotlib.style
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.style.context("default"):
        figure = Figure(figsize=FIGSIZE_INCHES, dpi=DPI, layout="constrained")
        FigureCanvasAgg(figure)
        draw(figure, figure.add_subplot())
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def _legend(figure: Figure, axes: Axes, extra: Sequence[Artist] = ()) -> None:
    """A legend inside the axes when short, beside them (in columns of at most 16 entries) when long."""
    handles, _ = axes.get_legend_handles_labels()
    handles = [*handles, *extra]
    if len(handles) <= LEGEND_INSIDE_MAX:
        axes.legend(handles=handles, fontsize=7, loc="best")
    else:
        columns = math.ceil(len(handles) / LEGEND_COLUMN_ROWS)
        figure.legend(handles=handles, fontsize=7, loc="outside right upper", ncols=columns)


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
        axes.text(0.02, 0.03, note, transform=axes.transAxes, fontsize=8, va="bottom", bbox=box)
        axes.set_xlabel("additive prediction  EER(A) + EER(B) - EER(clean)")
        axes.set_ylabel("IE  EER(A+B) - prediction")
        axes.set_title(caption)
        _legend(figure, axes, keys)

    return FigureOutcome(filename, caption, _draw_png(draw))


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
        _legend(figure, axes)

    return FigureOutcome(filename, caption, _draw_png(draw))


FIGURES: Sequence[Callable[[Mapping[str, Any]], FigureOutcome]] = (ie_vs_prediction, gap_vs_snr)


def render_figures(report: Mapping[str, Any]) -> list[FigureOutcome]:
    """Every figure of the report, drawn or skipped, in a fixed order."""
    return [make(report) for make in FIGURES]
