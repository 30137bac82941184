"""The score histograms and the Bayes error plot as ``reports.figures.plain`` writes them (histograms and curves by
Agg's path renderer, frames, ticks and texts by Pillow, the SVG as text), checked against oracles of their own
(``figure_oracle``): each bin's top and each curve's point where matplotlib's own autoscaling of ``stairs`` and
``plot`` over the same data (an Axes of the size the SVG frames) puts it, the tick marks at matplotlib's ticks, the
Bayes error plot's short legend where matplotlib's ``loc="best"`` puts it, the SVG parsed as XML, the size against the
figure's inches."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

import numpy as np
import pytest

from reports.figures import FigureOutcome, bayes_error_plot, score_distributions
from reports.figures.layout import SMALL_PT
from tests.reports.figure_oracle import (
    SVG,
    _assert_legend_where_matplotlibs_best_puts_it,
    _assert_same_bytes_at_size,
    _assert_tick_marks,
    _frames,
    _matplotlib_scale,
    _pixels,
    _to_pixels,
)
from tests.reports.figure_text import past_the_edge

BLUE, RED = (31, 119, 180), (214, 39, 40)  # tab:blue (targets), tab:red (non-targets)
EDGES = [0.0, 0.25, 0.5, 0.75, 1.0]
# Per encoder: its clean reference's counts and its condition's (targets, non-targets), over EDGES.
COUNTS = {
    "m1": (([0, 1, 4, 9], [8, 5, 1, 0]), ([1, 3, 5, 3], [5, 6, 2, 1])),
    "m2": (([0, 0, 3, 12], [10, 4, 1, 0]), ([2, 2, 6, 4], [4, 5, 4, 2])),
}


def _histogram_report(names: Any = ("m1", "m2")) -> dict[str, Any]:
    """A bundle's histograms as ``audit.bundle.curves`` writes them: per encoder its clean reference and the condition
    that moves its EER most."""
    curves = []
    for i, name in enumerate(names):
        counts = list(COUNTS.values())[i % len(COUNTS)]
        for (target, nontarget), series, role, eer in zip(counts, ("clean", "babble"), ("reference", "condition"),
                                                          (0.1, 0.3), strict=True):  # fmt: skip
            curves.append({"group": f"{name} E13 {series}", "panel": name, "series": series, "role": role,
                           "eer_interp": eer, "figures": ["scores"],
                           "histogram": {"edges": EDGES, "target": target, "nontarget": nontarget}})  # fmt: skip
    return {"curves": curves}


def _stairs(counts: Any) -> Any:
    def draw(axes: Any) -> None:
        """An encoder's histograms as matplotlib drew them (``stairs``, filled for the condition)."""
        for (target, nontarget), fill in zip(counts, (False, True), strict=True):
            axes.stairs(target, EDGES, fill=fill)
            axes.stairs(nontarget, EDGES, fill=fill)

    return draw


@pytest.fixture(scope="module")
def histograms() -> FigureOutcome:
    return score_distributions(_histogram_report())


def test_each_bin_is_where_matplotlibs_scales_put_it(histograms: FigureOutcome) -> None:
    """Per panel (frames read from the SVG, in order of the encoders): inside each filled bin, halfway up its count,
    the condition's colour at 0.45 over white (or the two blended where both fill it); at each clean bin's top (a
    count above the filled ones), the outline in its colour; the tick marks at matplotlib's ticks of ``stairs``
    autoscaled (its y axis from zero, the baseline's sticky edge)."""
    pixels = _pixels(histograms)
    frames = _frames(histograms)
    assert len(frames) == 2
    for box, counts in zip(frames, COUNTS.values(), strict=True):
        scale = _matplotlib_scale(box, (6.4, 4.4), _stairs(counts))
        assert scale[1][0] == 0.0
        limits = (*scale[0], *scale[1])
        (clean_target, clean_nontarget), (target, nontarget) = counts
        for i, (up, down) in enumerate(zip(target, nontarget, strict=True)):
            middle = (EDGES[i] + EDGES[i + 1]) / 2
            low = min(up, down)
            if low and min(abs(clean[i] - low / 2) for clean in (clean_target, clean_nontarget)) >= 0.5:
                x, y = _to_pixels(box, limits, middle, low / 2)
                seen = pixels[round(y), round(x)]
                blended = [255 - 0.45 * (255 - c) for c in BLUE]  # the targets' fill, then the non-targets' over it
                blended = [c + 0.45 * (r - c) for c, r in zip(blended, RED, strict=True)]
                assert np.abs(seen - blended).max() <= 4, (i, seen, blended)
            if clean_target[i] > max(up, down) + 1:  # the outline's top, clear of the filled bins
                x, y = _to_pixels(box, limits, middle, clean_target[i])
                near = pixels[round(y) - 2 : round(y) + 2, round(x)]  # a 1.1 pt line: two rows, three quarters on
                coverage = (255 - near) / (255 - np.array(BLUE))  # each channel's way from white to tab:blue
                assert ((coverage.min(axis=1) >= 0.6) & (coverage.max(axis=1) <= 1.05)).any(), (i, near)
        _assert_tick_marks(pixels, box, scale)


def test_the_svg_holds_the_titles_labels_legend_and_tick_labels(histograms: FigureOutcome) -> None:
    """Each panel's title on two lines (encoder and condition, then the EERs), the axis labels, the figure's legend of
    four keys, matplotlib's tick labels; no text below the floor."""
    assert histograms.svg is not None
    root = ET.fromstring(histograms.svg)
    shown = [text.text for text in root.iter(f"{SVG}text")]
    assert {"m1: babble", "m2: babble", "EER (interp) 0.1 clean, 0.3", "score", "trials"} <= set(shown)
    assert {f"{key}: {which}" for key in ("target", "nontarget") for which in ("the condition", "clean reference")} <= (
        set(shown)
    )
    for box, counts in zip(_frames(histograms), COUNTS.values(), strict=True):
        *_, x_labels, y_labels = _matplotlib_scale(box, (6.4, 4.4), _stairs(counts))
        assert set(x_labels) <= set(shown) and set(y_labels) <= set(shown), (x_labels, y_labels)
    sizes = [float(re.search(r"font-size: ([\d.]+)px", t.get("style", "")).group(1)) for t in root.iter(f"{SVG}text")]
    assert min(sizes) >= SMALL_PT


def test_the_same_histograms_give_the_same_bytes_at_the_figures_size(histograms: FigureOutcome) -> None:
    _assert_same_bytes_at_size(histograms, score_distributions(_histogram_report()), (6.4, 4.4))
    many = _histogram_report([f"encoder {i}" for i in range(6)])  # six panels: three rows of 2.6 inches
    drawn = score_distributions(many)
    _assert_same_bytes_at_size(drawn, score_distributions(many), (6.4, 7.8))
    assert len(_frames(drawn)) == 6


def test_hostile_encoder_names_are_escaped_and_cut() -> None:
    """Markup with a ``$`` and 200 characters as encoders: the SVG parses and holds the first as written and the second
    cut with ``...`` to its panel's width, nothing past the figure's edge."""
    drawn = score_distributions(_histogram_report(["<b>m$1</b>", "m" * 200]))
    assert drawn.svg is not None and b"<b>" not in drawn.svg
    shown = [text.text or "" for text in ET.fromstring(drawn.svg).iter(f"{SVG}text")]
    assert "<b>m$1</b>: babble" in shown
    assert any(text.startswith("mmm") and text.endswith("...") for text in shown)
    assert past_the_edge(drawn.svg) == []


PRIOR_LOG_ODDS = np.linspace(-4.0, 4.0, 9)
BAYES = {"m1": (np.full(9, 0.5), np.full(9, 0.3)), "m2": (np.linspace(0.2, 1.4, 9), np.linspace(0.1, 0.8, 9))}
TAB10 = (BLUE, (255, 127, 14))


def _bayes_report(curves: Any = BAYES) -> dict[str, Any]:
    return {"curves": [{"group": name, "series": name, "figure": "D01", "figures": ["bayes-error"], "n_target": 10,
                        "n_nontarget": 10, "prior_log_odds": PRIOR_LOG_ODDS.tolist(), "actual": actual.tolist(),
                        "minimum": minimum.tolist()}
                       for name, (actual, minimum) in curves.items()]}  # fmt: skip


def _bayes_lines(axes: Any) -> None:
    """The curves as matplotlib plotted them, its y axis from 0 to 1.2; the legend's style keys as lines of no
    points, the line at 1 last, as the figure lists them."""
    for name, (actual, minimum) in BAYES.items():
        axes.plot(PRIOR_LOG_ODDS, actual, label=name)
        axes.plot(PRIOR_LOG_ODDS, minimum, linestyle="--", linewidth=1)
    axes.plot([], [], color="black", label="calibrated (actual)")
    axes.plot([], [], color="black", linestyle="--", label="PAV (minimum)")
    axes.axhline(1.0, color="grey", linestyle=":", linewidth=1, label="no decision (1)")
    axes.set_ylim(0, 1.2)


@pytest.fixture(scope="module")
def bayes() -> FigureOutcome:
    return bayes_error_plot(_bayes_report())


def test_each_curve_point_is_where_matplotlibs_scales_put_it(bayes: FigureOutcome) -> None:
    """Each encoder's calibrated curve in its colour (tab10, in order) at the pixels that the frame (read from the SVG)
    and matplotlib's limits of the same plot put its points (m1's at -2, under m2's, aside), what runs past 1.2
    clipped away; the tick marks are matplotlib's."""
    pixels = _pixels(bayes)
    (box,) = _frames(bayes)
    scale = _matplotlib_scale(box, (6.4, 4.4), _bayes_lines)
    assert scale[1] == (0.0, 1.2)
    limits = (*scale[0], *scale[1])
    for colour, (name, (actual, _)) in zip(TAB10, BAYES.items(), strict=True):
        for x, y in zip(PRIOR_LOG_ODDS.tolist(), actual.tolist(), strict=True):
            if y > 1.2 or (name, x) == ("m1", -2.0):
                continue
            across, down = _to_pixels(box, limits, x, y)
            near = pixels[round(down) - 1 : round(down) + 1, round(across) - 1 : round(across) + 1].reshape(-1, 3)
            assert np.abs(near - colour).max(axis=1).min() <= 40, (name, x, y, near)
    left, top, width, _ = (round(inches * 100) for inches in box)
    assert pixels[top - 3, left : left + width].min() == 255  # nothing above the panel
    _assert_tick_marks(pixels, box, scale)


def test_a_short_legend_is_where_matplotlibs_best_puts_it(bayes: FigureOutcome) -> None:
    """Two encoders and three style keys: five entries, inside the panel where ``loc="best"`` puts them."""
    _assert_legend_where_matplotlibs_best_puts_it(bayes, (6.4, 4.4), _bayes_lines, "no decision (1)")


def test_a_long_legend_is_beside_the_panel_and_hostile_names_are_escaped_and_cut() -> None:
    """Four encoders (seven entries, one named in markup with a ``$``, one of 200 characters): the legend right of the
    panel, every entry in it as written or cut with ``...``, nothing past the figure's edge."""
    hostile = {"<b>m$1</b>": BAYES["m1"], "m" * 200: BAYES["m2"], "m3": BAYES["m1"], "m4": BAYES["m2"]}
    drawn = bayes_error_plot(_bayes_report(hostile))
    assert drawn.svg is not None and b"<b>" not in drawn.svg
    (box,) = _frames(drawn)
    texts = {text.text or "": float(text.get("x", "nan")) / 72 for text in ET.fromstring(drawn.svg).iter(f"{SVG}text")}
    cut = [text for text in texts if text.startswith("mmm")]
    assert len(cut) == 1 and cut[0].endswith("...")
    assert all(texts[name] > box[0] + box[2] for name in ("<b>m$1</b>", cut[0], "m3", "m4", "no decision (1)"))
    assert past_the_edge(drawn.svg) == []
    assert bayes_error_plot({"curves": []}).skipped_because == "no declared calibration"


def test_the_same_curves_give_the_same_bytes_at_the_figures_size(bayes: FigureOutcome) -> None:
    _assert_same_bytes_at_size(bayes, bayes_error_plot(_bayes_report()), (6.4, 4.4))
