"""The gender gap against SNR as ``reports.figures.plain`` writes it (lines, markers and error bars by Agg's path
renderer, frames, ticks and texts by Pillow, the SVG as text), checked against oracles of their own
(``figure_oracle``): each mean and bar end where matplotlib's own autoscaling of an errorbar plot of the same rows
(an Axes of the size the SVG frames) puts it, its tick marks at matplotlib's ticks, its legend where matplotlib's
``loc="best"`` puts it, the SVG parsed as XML, the size against the figure's inches."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from typing import Any

import numpy as np
import pytest

from reports.figures import FigureOutcome, gap_vs_snr
from tests.reports.figure_oracle import (
    SVG,
    TAB10,
    _assert_legend_where_matplotlibs_best_puts_it,
    _assert_same_bytes_at_size,
    _assert_tick_marks,
    _frames,
    _matplotlib_scale,
    _pixels,
    _to_pixels,
)
from tests.reports.figure_text import past_the_edge

# Two noise types at SNRs of their own (their bars apart), babble's 5 dB row without an SD (no bar), a clean
# reference of 0.05 beside them (the dotted line).
ROWS = {
    "babble": [(0.0, 0.2, 0.05), (5.0, 0.15, None), (10.0, 0.1, 0.04)],
    "music": [(2.5, 0.3, 0.06), (7.5, 0.25, 0.02)],
}
CLEAN = 0.05


def _report(rows: Any = ROWS) -> dict[str, Any]:
    listed = [{"noise": noise, "snr_db": snr, "gap_abs_mean": gap, "gap_abs_sd": sd, "clean_gap_abs_mean": CLEAN}
              for noise, points in rows.items() for snr, gap, sd in points]  # fmt: skip
    return {"aggregates": {"gap_vs_snr": listed}}


def _errorbars(axes: Any, rows: Any = ROWS) -> list[Any]:
    """The rows as matplotlib plotted them (an absolute gap's bar stops at zero), the clean line last."""
    drawn = []
    for noise, points in rows.items():
        snrs, gaps, sds = zip(*points, strict=True)
        upper = [math.nan if sd is None else sd for sd in sds]
        lower = [min(u, g) for u, g in zip(upper, gaps, strict=True)]
        drawn.append(axes.errorbar(snrs, gaps, yerr=[lower, upper], marker="o", markersize=4, capsize=3, label=noise))
    axes.axhline(CLEAN, linestyle=":", label="clean (no SNR)")
    return drawn


@pytest.fixture(scope="module")
def figure() -> FigureOutcome:
    return gap_vs_snr(_report())


def test_each_mean_and_bar_end_is_where_matplotlibs_scales_put_it(figure: FigureOutcome) -> None:
    """Each mean is a marker in its noise type's colour (tab10, in order of the names) at the pixel that the frame
    (read from the SVG) and matplotlib's own limits of the errorbar plot put it; each bar's middle and its caps'
    ends are that colour, a row without an SD has no bar; the clean line is grey at its level; the tick marks are
    matplotlib's."""
    pixels = _pixels(figure)
    (box,) = _frames(figure)
    scale = _matplotlib_scale(box, (6.4, 4.4), _errorbars)
    limits = (*scale[0], *scale[1])

    def seen(x: float, y: float) -> np.ndarray:
        across, down = _to_pixels(box, limits, x, y)
        return pixels[round(down - 0.5), round(across - 0.5)]

    for colour, points in zip(TAB10, ROWS.values(), strict=False):
        for snr, gap, sd in points:
            assert np.abs(seen(snr, gap) - colour).max() <= 12, (snr, gap, seen(snr, gap))
            middle = seen(snr, gap + 0.1 if sd is None else gap + sd / 2)
            if sd is None:
                assert middle.min() == 255, middle
                continue
            assert np.abs(middle - colour).max() <= 12, (snr, middle)
            for end in (gap - sd, gap + sd):  # a cap 6 pt across, 1 pt thick: 3 pixels either side, its colour
                across, down = _to_pixels(box, limits, snr, end)
                for x in (round(across - 3.5), round(across + 2.5)):
                    near = pixels[round(down) - 2 : round(down) + 1, x]  # the rows about its level
                    assert np.abs(near - colour).max(axis=1).min() <= 60, (snr, end, near)
    across, down = _to_pixels(box, limits, 1.25, CLEAN)  # grey 0.4, dotted: a dot within 4 pixels
    assert pixels[round(down) - 2 : round(down) + 1, round(across) - 4 : round(across) + 4].min() <= 180
    _assert_tick_marks(pixels, box, scale)


def test_the_svg_holds_every_label_legend_entry_and_tick_label(figure: FigureOutcome) -> None:
    assert figure.svg is not None
    shown = [text.text for text in ET.fromstring(figure.svg).iter(f"{SVG}text")]
    assert {"Gender EER gap vs SNR", "SNR (dB)", "mean absolute gender EER gap (± SD)"} <= set(shown)
    assert {"babble", "music", "clean (no SNR)"} <= set(shown)
    (box,) = _frames(figure)
    *_, x_labels, y_labels = _matplotlib_scale(box, (6.4, 4.4), _errorbars)
    assert set(x_labels) <= set(shown) and set(y_labels) <= set(shown), (x_labels, y_labels)


def test_the_legend_is_where_matplotlibs_best_puts_it(figure: FigureOutcome) -> None:
    """The legend's first entry (the clean line's, before the errorbars' as matplotlib lists them) starts where
    matplotlib's ``loc="best"`` put it over the same errorbar plot."""
    _assert_legend_where_matplotlibs_best_puts_it(figure, (6.4, 4.4), _errorbars, "clean (no SNR)")


def test_the_same_rows_give_the_same_bytes_at_the_figures_size(figure: FigureOutcome) -> None:
    _assert_same_bytes_at_size(figure, gap_vs_snr(_report()), (6.4, 4.4))


def test_hostile_noise_names_are_escaped_and_cut() -> None:
    """Markup with a ``$`` and 200 characters as noise types: the SVG parses and holds the first as written and the
    second cut with ``...``, its clean reference's entry ending " (no SNR)", nothing past the figure's edge."""
    rows = {"<b>n$1</b>": ROWS["babble"], "n" * 200: ROWS["music"]}
    hostile = _report(rows)
    hostile["aggregates"]["gap_vs_snr"].append({"noise": "r" * 200, "gap_abs_mean": 0.1})  # a reference, no SNR
    drawn = gap_vs_snr(hostile)
    assert drawn.svg is not None and b"<b>" not in drawn.svg
    shown = [text.text or "" for text in ET.fromstring(drawn.svg).iter(f"{SVG}text")]
    assert "<b>n$1</b>" in shown
    assert any(text.startswith("nnn") and text.endswith("...") for text in shown)
    assert any(text.startswith("rrr") and text.endswith("... (no SNR)") for text in shown)
    assert past_the_edge(drawn.svg) == []
