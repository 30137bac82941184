"""Target and non-target score histograms from per-trial scores: per group of ``audit scores``, or per encoder of a
bundle the condition that moves its EER most over its clean reference (``audit.bundle.curves`` chooses it)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from reports.figures.canvas import _drawn
from reports.figures.data import _curves, _label, _number
from reports.figures.layout import (
    MAX_PANELS,
    SMALL_PT,
    _lay_out,
    _legend_columns,
    _legend_inches,
    _panel_inches,
    _panel_size,
    _panels,
)
from reports.figures.outcome import FigureOutcome
from reports.format import format_number

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


MAX_HISTOGRAMS = 12  # a bundle's encoders with histograms
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
        titles: list[tuple[Axes, str, str]] = []  # the input's part of each title, cut to its panel once placed
        for panel, (name, members) in zip(panels, shown.items(), strict=True):
            for entry in members:
                histogram, edges = entry["histogram"], entry["histogram"]["edges"]
                for key, colour in HISTOGRAM_COLOURS:
                    if entry.get("role") == "reference":
                        panel.stairs(histogram[key], edges, color=colour, linewidth=1.1)
                    else:
                        panel.stairs(histogram[key], edges, fill=True, alpha=0.45, color=colour, label=key)
            titles.append((panel, name, ""))
            if moved:
                eers = {e.get("role"): format_number(_number(e.get("eer_interp"))) for e in members}
                condition = next((str(e.get("series")) for e in members if e.get("role") == "condition"), "")
                eer = f"\nEER (interp) {eers.get('reference')} clean, {eers.get('condition')}"
                titles[-1] = (panel, f"{name}: {condition}", eer)
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
            columns = _legend_columns([str(key.get_label()) for key in keys])
            figure.legend(handles=keys, fontsize=SMALL_PT, loc="lower center", ncols=columns)
            legend = _legend_inches(math.ceil(len(keys) / columns))
        _lay_out(panels, title_lines=2 if moved else 1, legend_inches=legend)
        for panel, named, eer in titles:
            panel.set_title(_label(named, _panel_inches(panel)) + eer, fontsize=SMALL_PT)

    return _drawn(filename, caption, alt, draw, _panel_size(len(shown)))
