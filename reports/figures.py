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
    from matplotlib.axes import Axes

FIGSIZE_INCHES = (6.4, 4.4)
DPI = 100
CHANCE_EER = 0.5


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


def _draw_png(draw: Callable[[Axes], None]) -> bytes:
    """Run ``draw`` on fresh axes and return the PNG bytes, identical for identical input."""
    import matplotlib.style
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.style.context("default"):
        figure = Figure(figsize=FIGSIZE_INCHES, dpi=DPI, layout="tight")
        FigureCanvasAgg(figure)
        draw(figure.add_subplot())
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def _rows(report: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    aggregates = report.get("aggregates") or {}
    return [row for row in aggregates.get(key) or [] if isinstance(row, Mapping)]


def ie_vs_prediction(report: Mapping[str, Any]) -> FigureOutcome:
    """Scatter of IE against the additive prediction, one colour per experiment, with the observed
    correlation beside the one expected under additivity (IE contains -prediction, so the two are coupled by
    construction), the IE = 0 line and the chance line at prediction 0.5."""
    filename, caption = "ie_vs_prediction.png", "Interaction effect vs additive prediction"
    points: dict[str, list[tuple[float, float]]] = {}
    for row in _rows(report, "contrasts"):
        prediction, ie = _number(row.get("prediction")), _number(row.get("ie"))
        if prediction is not None and ie is not None:
            points.setdefault(str(row.get("experiment", "?")), []).append((prediction, ie))
    if not points:
        return FigureOutcome(filename, caption, None, "no contrast has both a prediction and an IE")
    coupling = (report.get("aggregates") or {}).get("ie_vs_prediction") or {}
    observed, expected = _number(coupling.get("r_observed")), _number(coupling.get("r_expected_additive"))
    note = "\n".join(
        (
            f"observed r = {format_number(observed)}" if observed is not None else "observed r: not reported",
            f"expected r under additivity = {format_number(expected)}"
            if expected is not None
            else "expected r under additivity: not reported",
        )
    )

    def draw(axes: Axes) -> None:
        for experiment in sorted(points):
            xs, ys = zip(*points[experiment], strict=True)
            axes.scatter(xs, ys, s=14, alpha=0.75, label=_label(experiment))
        axes.axhline(0.0, color="0.3", linewidth=0.8, label="IE = 0 (additive)")
        axes.axvline(
            CHANCE_EER, color="tab:red", linestyle="--", linewidth=0.9, label="chance (prediction 0.5)"
        )
        axes.text(
            0.02,
            0.03,
            note,
            transform=axes.transAxes,
            fontsize=8,
            va="bottom",
            bbox={"boxstyle": "round", "facecolor": "white", "alpha": 0.85},
        )
        axes.set_xlabel("additive prediction  EER(A) + EER(B) - EER(clean)")
        axes.set_ylabel("IE  EER(A+B) - prediction")
        axes.set_title(caption)
        axes.legend(fontsize=7, loc="upper right", ncols=2)

    return FigureOutcome(filename, caption, _draw_png(draw))


def gap_vs_snr(report: Mapping[str, Any]) -> FigureOutcome:
    """Mean gender gap against SNR, one line per noise type with SD bars; rows without an SNR (the clean
    reference) are drawn as horizontal dashed lines."""
    filename, caption = "gap_vs_snr.png", "Gender EER gap vs SNR"
    series: dict[str, list[tuple[float, float, float]]] = {}
    references: dict[str, float] = {}
    for row in _rows(report, "gap_vs_snr"):
        gap = _number(row.get("gap_mean"))
        if gap is None:
            continue
        name = str(row.get("noise", row.get("condition", "?")))
        snr = _number(row.get("snr_db"))
        if snr is None:
            references[name] = gap
        else:
            sd = _number(row.get("gap_sd"))
            series.setdefault(name, []).append((snr, gap, math.nan if sd is None else sd))
    if not series:
        return FigureOutcome(filename, caption, None, "no gender gap with an SNR in the report")

    def draw(axes: Axes) -> None:
        for name in sorted(series):
            snrs, gaps, sds = zip(*sorted(series[name]), strict=True)
            axes.errorbar(snrs, gaps, yerr=sds, marker="o", markersize=4, capsize=3, label=_label(name))
        for name in sorted(references):
            axes.axhline(
                references[name], color="0.4", linestyle=":", linewidth=1.0, label=f"{_label(name)} (no SNR)"
            )
        axes.set_xlabel("SNR (dB)")
        axes.set_ylabel("mean absolute gender EER gap (± SD)")
        axes.set_title(caption)
        axes.legend(fontsize=8)

    return FigureOutcome(filename, caption, _draw_png(draw))


FIGURES: Sequence[Callable[[Mapping[str, Any]], FigureOutcome]] = (ie_vs_prediction, gap_vs_snr)


def render_figures(report: Mapping[str, Any]) -> list[FigureOutcome]:
    """Every figure of the report, drawn or skipped, in a fixed order."""
    return [make(report) for make in FIGURES]
