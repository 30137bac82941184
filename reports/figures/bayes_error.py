"""The normalised Bayes error plot of a bundle's clean list, where the run declares a calibration."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reports.figures.data import LABEL_INCHES, _curves, _cut
from reports.figures.layout import FIGSIZE_INCHES, SMALL_PT
from reports.figures.legend import Key
from reports.figures.outcome import FigureOutcome
from reports.figures.panel import At, _linear_panel
from reports.figures.plain import (
    BLACK,
    KEY_PT,
    RGB,
    Box,
    Dot,
    Frame,
    Polygon,
    Polyline,
    Shape,
    _dashes,
    _plain,
    _rgb,
    _series_colours,
)
from reports.format import format_number

Y_LIMITS = (0.0, 1.2)
NO_DECISION: RGB = (128, 128, 128)  # matplotlib's "grey": the line at 1
MINIMUM_PT, NO_DECISION_PT = 1.0, 1.0  # the PAV curves' and the line at 1's widths (the calibrated ones': KEY_PT)


def bayes_error_plot(report: Mapping[str, Any]) -> FigureOutcome:
    """The normalised Bayes error of the clean list's calibrated LLRs (solid) and of their PAV recalibration
    (dashed), one colour per encoder, over the prior log-odds; 1 is the cost of deciding without the scores. Drawn as
    plain shapes (``panel._linear_panel``) as matplotlib drew its lines (its layout, autoscaled x limits, the y axis
    from 0 to 1.2, AutoLocator ticks, lines clipped to the panel and legend), without its artists, text layout and
    two draws."""
    curves = [c for c in _curves(report, "bayes-error") if isinstance(c.get("actual"), list)]
    filename = "bayes_error.png"
    if not curves:
        return FigureOutcome(filename, "Normalised Bayes error of the clean list", None, "no declared calibration")
    figure_of = str(curves[0].get("figure") or "")
    caption = (
        f"Normalised Bayes error of the clean list ({figure_of}): calibrated LLRs (solid) and after the best "
        "monotone recalibration (PAV, dashed), per encoder"
    )
    colours = {name: _rgb(colour) for name, colour in _series_colours([str(c.get("series")) for c in curves]).items()}
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

    keys: list[Key] = [(_cut(entry.get("series"), LABEL_INCHES), colours[str(entry.get("series"))], KEY_PT, (), "")
                       for entry in curves]  # fmt: skip
    keys += [("calibrated (actual)", BLACK, KEY_PT, (), ""),
             ("PAV (minimum)", BLACK, KEY_PT, _dashes("--", KEY_PT), ""),
             ("no decision (1)", NO_DECISION, KEY_PT, _dashes(":", KEY_PT), "")]  # fmt: skip

    def draw(box: Box, at: At) -> tuple[list[Shape], list[Polyline | Polygon | Dot | Frame]]:
        """As matplotlib layered them: each encoder's calibrated then PAV curve, then the line at 1, clipped."""
        import numpy as np

        lines: list[Polyline | Polygon | Dot | Frame] = []
        for entry in curves:
            ink = colours[str(entry.get("series"))]
            for key, width, dashes in (("actual", KEY_PT, ()), ("minimum", MINIMUM_PT, _dashes("--", MINIMUM_PT))):
                points = np.array([at(x, y) for x, y in zip(entry["prior_log_odds"], entry[key], strict=True)])
                lines.append(Polyline(points, ink, width, dashes, box))
        _, one = at(0.0, 1.0)
        lines.append(Polyline(np.array([[box[0], one], [box[0] + box[2], one]]), NO_DECISION, NO_DECISION_PT,
                              _dashes(":", NO_DECISION_PT), box))  # fmt: skip
        return list(lines), lines

    data = (([float(x) for entry in curves for x in entry["prior_log_odds"]], []), ([], []))
    labels = ("", "prior log-odds log(p / (1 - p))", "normalised Bayes error")
    shapes = _linear_panel(FIGSIZE_INCHES, data, labels, keys, draw, SMALL_PT, Y_LIMITS)
    return _plain(filename, caption, alt, FIGSIZE_INCHES, shapes)
