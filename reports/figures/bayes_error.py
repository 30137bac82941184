"""The normalised Bayes error plot of a bundle's clean list, where the run declares a calibration."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from reports.figures.canvas import _drawn, _series_colours
from reports.figures.data import LABEL_INCHES, _curves, _label
from reports.figures.layout import SMALL_PT, _lay_out, _legend
from reports.figures.outcome import FigureOutcome
from reports.format import format_number

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


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
            axes.plot(
                entry["prior_log_odds"], entry["actual"], color=colour, label=_label(entry.get("series"), LABEL_INCHES)
            )
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
