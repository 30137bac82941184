"""The gender EER gap against SNR per noise type (paper Figure 4), from ``aggregates.gap_vs_snr``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from reports.figures.canvas import _drawn
from reports.figures.data import LABEL_INCHES, _first_number, _label, _number, _rows
from reports.figures.layout import SMALL_PT, TEXT_PT, _lay_out, _legend, _text_inches
from reports.figures.outcome import FigureOutcome
from reports.format import format_number

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

NO_SNR = " (no SNR)"  # the legend entry of a noise type's clean reference, after its name


GAP_KEYS = ("gap_abs_mean", "gap_mean")
GAP_SD_KEYS = ("gap_abs_sd", "gap_sd")


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
            axes.errorbar(
                snrs, gaps, yerr=[lower, upper], marker="o", markersize=4, capsize=3, label=_label(name, LABEL_INCHES)
            )
        for name in sorted(references):
            label = f"{_label(name, LABEL_INCHES - _text_inches([NO_SNR], SMALL_PT))}{NO_SNR}"
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
