"""The table's figures of contrasts as ``reports.figures.plain`` writes them (lines and markers by Agg's path
renderer, frames, ticks and texts by Pillow, the SVG as text), checked against oracles of their own: each point
where matplotlib's own autoscaling of its panel (an Axes of the size the SVG frames) puts it, the PNG decoded and its
pixels against the series' colours, the tick labels matplotlib's AutoLocator and ScalarFormatter write for that
Axes, the SVG parsed as XML, the size against the figure's inches."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import numpy as np
import pytest

from reports.figures import FigureOutcome, coupling_lines, ie_vs_prediction, interaction_plots
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

# Two families of two contrasts each: their means (clean, A, B, A+B) E13 speaker 0.1, 0.3, 0.2, 0.25 (the lines
# cross: its legend where they leave room) and E14 ssl 0.30, 0.28, 0.12, 0.05.
TERMS = {("E13", "speaker"): [(0.1, 0.3, 0.2, 0.2), (0.1, 0.3, 0.2, 0.3)],
         ("E14", "ssl"): [(0.3, 0.28, 0.12, 0.05), (0.3, 0.28, 0.12, 0.05)]}  # fmt: skip
MEANS = {"E13 speaker": (0.1, 0.3, 0.2, 0.25), "E14 ssl": (0.3, 0.28, 0.12, 0.05)}


def _report(factor_a: str = "noise", factor_b: str = "codec") -> dict[str, Any]:
    contrasts = [
        {"experiment": experiment, "model_family": family, "factor_a": factor_a, "factor_b": factor_b,
         **dict(zip(("eer_clean", "eer_a", "eer_b", "eer_ab"), terms, strict=True))}
        for (experiment, family), rows in TERMS.items() for terms in rows
    ]  # fmt: skip
    return {"aggregates": {"contrasts": contrasts}}


@pytest.fixture(scope="module")
def plots() -> FigureOutcome:
    return interaction_plots(_report())


def _lines(means: tuple[float, ...]) -> Any:
    """The interaction plot's two lines of ``means`` (clean, A, B, A+B), for ``_matplotlib_scale``."""

    def draw(axes: Any) -> None:
        axes.plot([0, 1], means[:2], marker="o")
        axes.plot([0, 1], means[2:], marker="s")
        axes.set_xticks([0, 1])

    return draw


def test_each_mean_is_where_matplotlibs_scales_put_it(plots: FigureOutcome) -> None:
    """Each family's four means are tab:blue (without B: clean and A) and tab:orange (with B) markers at the pixel
    that the panel's frame (read from the SVG) and matplotlib's own limits of those points put them, and each line's
    middle is its colour."""
    pixels = _pixels(plots)
    frames = _frames(plots)
    assert len(frames) == 2
    for box, means in zip(frames, MEANS.values(), strict=True):
        (x0, x1), (y0, y1), *_ = _matplotlib_scale(box, (6.4, 4.4), _lines(means))

        def pixel(x: float, y: float, box: Any = box, limits: Any = (x0, x1, y0, y1)) -> np.ndarray:
            across, down = _to_pixels(box, limits, x, y)
            return pixels[round(down - 0.5), round(across - 0.5)]  # the pixel whose centre is nearest the point

        for (before, after), colour in zip((means[:2], means[2:]), TAB10, strict=False):
            for x, y in ((0.0, before), (1.0, after)):
                assert np.abs(pixel(x, y) - colour).max() <= 12, (box, x, y, pixel(x, y))
        before, after = means[2:]  # the line with B, at a quarter of its way (the lines cross in E13's middle)
        assert np.abs(pixel(0.25, before + (after - before) / 4) - TAB10[1]).max() <= 40


def _five() -> dict[str, Any]:
    """Five families (three rows of panels, each lower than a row of two's), of scales of their own; E0's from 0.1
    to 0.45, whose ticks are 0.1 apart for the room its panel has and 0.05 apart for a little more."""
    contrasts = [{"experiment": f"E{i}", "eer_clean": 0.1 + 0.03 * i, "eer_a": 0.45 if i == 0 else 0.2 - 0.02 * i,
                  "eer_b": 0.3 + i / 7, "eer_ab": 0.4 - 0.05 * i} for i in range(5)]  # fmt: skip
    return {"aggregates": {"contrasts": contrasts}}


@pytest.mark.parametrize("which", ["two", "five"])
def test_the_tick_marks_are_where_matplotlibs_scales_put_its_ticks(which: str, plots: FigureOutcome) -> None:
    """Below each panel a tick mark at x 0 and 1 and left of it one per y tick label matplotlib writes for the
    panel's scale (its labels read as numbers), at the pixel its limits put them (within a pixel): the scale and
    the AutoLocator's choice of ticks, against matplotlib's own."""
    figure = plots if which == "two" else interaction_plots(_five())
    report = _report() if which == "two" else _five()
    rows: dict[str, list[tuple[float, ...]]] = {}
    for row in report["aggregates"]["contrasts"]:
        name = f"{row['experiment']} {row.get('model_family') or ''}".strip()
        rows.setdefault(name, []).append(tuple(row[key] for key in ("eer_clean", "eer_a", "eer_b", "eer_ab")))
    means = [tuple(float(np.mean(column)) for column in zip(*terms, strict=True)) for _, terms in sorted(rows.items())]
    size = (6.4, 4.4) if which == "two" else (6.4, 7.8)
    frames = _frames(figure)
    assert len(frames) == len(means)
    for box, family in zip(frames, means, strict=True):
        _assert_tick_marks(_pixels(figure), box, _matplotlib_scale(box, size, _lines(family)))


def test_the_svg_holds_every_title_tick_label_and_legend_label_as_text(plots: FigureOutcome) -> None:
    """The SVG parses as XML; its texts hold each panel's title with its count, its y label, its x tick labels
    (clean and factor A), its legend's two labels and the y tick labels matplotlib writes for its scale."""
    assert plots.svg is not None
    shown = [text.text for text in ET.fromstring(plots.svg).iter(f"{SVG}text")]
    assert {"E13 speaker (n=2)", "E14 ssl (n=2)"} <= set(shown)
    assert shown.count("mean EER") == shown.count("clean") == shown.count("noise") == 2
    assert shown.count("without codec") == shown.count("with codec") == 2
    for box, means in zip(_frames(plots), MEANS.values(), strict=True):
        *_, labels = _matplotlib_scale(box, (6.4, 4.4), _lines(means))
        assert labels and set(labels) <= set(shown), labels


def test_the_same_report_gives_the_same_bytes_at_the_figures_size(plots: FigureOutcome) -> None:
    _assert_same_bytes_at_size(plots, interaction_plots(_report()), (6.4, 4.4))  # a row of two panels
    _assert_same_bytes_at_size(interaction_plots(_five()), interaction_plots(_five()), (6.4, 7.8))  # three of 2.6 in


def test_hostile_names_are_escaped_cut_and_drawn_as_written() -> None:
    """Markup, a ``$`` (no mathtext: drawn as written) and 200 characters as factor names: the SVG parses, holds
    the names as text, cut with ``...`` to the figure."""
    figure = interaction_plots(_report("<b>a$1</b>&amp;", "x" * 200))
    assert figure.svg is not None and b"<b>" not in figure.svg
    shown = [text.text or "" for text in ET.fromstring(figure.svg).iter(f"{SVG}text")]
    assert "<b>a$1</b>&amp;" in shown or any(text.startswith("<b>a$1") and text.endswith("...") for text in shown)
    assert any(text.startswith("with xxx") and text.endswith("...") for text in shown)
    assert past_the_edge(figure.svg) == []


# Five contrasts apart from each other and from the IE = 0 and chance lines: three experiments (a colour each), two
# model families (a marker each), so that the legend of seven entries stands beside the panel.
CONTRASTS = [("E13", "speaker", 0.1, 0.3), ("E13", "speaker", 0.3, -0.2), ("E14", "ssl", 0.62, -0.4),
             ("E14", "ssl", 0.2, 0.5), ("E17", "speaker", 0.42, 0.12)]  # fmt: skip
COUPLING = {"n": 5, "r_observed": -0.85, "r_expected_additive": -0.05}


def _scatter_report(contrasts: Any = CONTRASTS) -> dict[str, Any]:
    rows = [{"experiment": e, "model_family": f, "prediction": x, "ie": y} for e, f, x, y in contrasts]
    return {"aggregates": {"contrasts": rows, "ie_vs_prediction": COUPLING}}


def _scatter(contrasts: Any = CONTRASTS) -> Any:
    """The IE figure's data as matplotlib plotted it, for ``_matplotlib_scale``."""

    def draw(axes: Any) -> None:
        axes.scatter([x for *_, x, _ in contrasts], [y for *_, y in contrasts], s=14)
        axes.axhline(0.0)
        axes.axvline(0.5)

    return draw


@pytest.fixture(scope="module")
def scatter() -> FigureOutcome:
    return ie_vs_prediction(_scatter_report())


# The same contrasts above IE = 0 and left of chance: the lines widen the limits matplotlib autoscales to.
SHIFTED = [(e, f, x / 2, abs(y) + 0.2) for e, f, x, y in CONTRASTS]


@pytest.mark.parametrize("contrasts", [CONTRASTS, SHIFTED], ids=["around", "shifted"])
def test_each_contrast_is_where_matplotlibs_scales_put_it(contrasts: Any) -> None:
    """Each contrast is a marker in its experiment's colour (tab10 in order of the names, at 0.75 over white) at the
    pixel that the panel's frame (read from the SVG) and matplotlib's own autoscaled limits of the points and lines
    put it; the IE = 0 line is grey there, away from the points; the ticks are matplotlib's."""
    scatter = ie_vs_prediction(_scatter_report(contrasts))
    pixels = _pixels(scatter)
    (box,) = _frames(scatter)
    scale = _matplotlib_scale(box, (6.4, 4.4), _scatter(contrasts))
    limits = (*scale[0], *scale[1])
    colours = {name: TAB10[i] for i, name in enumerate(["E13", "E14", "E17"])}
    for experiment, _, x, y in contrasts:
        across, down = _to_pixels(box, limits, x, y)
        seen = pixels[round(down - 0.5), round(across - 0.5)]
        blended = 0.75 * np.array(colours[experiment]) + 0.25 * 255
        assert np.abs(seen - blended).max() <= 12, (experiment, x, y, seen)
    across, down = _to_pixels(box, limits, 0.15, 0.0)
    darkest = pixels[round(down) - 2 : round(down) + 2, round(across)].max(axis=1).min()  # grey 0.3, 0.8 pt wide
    assert darkest <= 140 and pixels[round(down) + 6, round(across)].min() == 255, darkest
    _assert_tick_marks(pixels, box, scale)


def test_the_ie_svg_holds_every_label_legend_entry_and_note_line(scatter: FigureOutcome) -> None:
    """The SVG parses as XML; its texts hold the title, both axis labels, the seven legend labels, the coupling note's
    lines (``coupling_lines``) and matplotlib's tick labels; the long legend stands right of the panel, a short one
    (three entries) inside it."""
    assert scatter.svg is not None
    texts = list(ET.fromstring(scatter.svg).iter(f"{SVG}text"))
    shown = [text.text for text in texts]
    assert {"Interaction effect vs additive prediction", "additive prediction  EER(A) + EER(B) - EER(clean)",
            "IE  EER(A+B) - prediction"} <= set(shown)  # fmt: skip
    legend = ["IE = 0 (additive)", "chance (0.5)", "E13", "E14", "E17", "speaker", "ssl"]
    assert set(legend) <= set(shown) and set(coupling_lines(COUPLING)) <= set(shown)
    (box,) = _frames(scatter)
    *_, x_labels, y_labels = _matplotlib_scale(box, (6.4, 4.4), _scatter())
    assert set(x_labels) <= set(shown) and set(y_labels) <= set(shown), (x_labels, y_labels)
    right = (box[0] + box[2]) * 72
    assert all(float(text.get("x", "0")) > right for text in texts if text.text in legend)
    short = [("E13", "", 0.1, 0.3), ("E13", "", 0.3, -0.2)]
    inside = ie_vs_prediction(_scatter_report(short))
    assert inside.svg is not None
    (frame,) = _frames(inside)
    xs = [float(t.get("x", "0")) for t in ET.fromstring(inside.svg).iter(f"{SVG}text") if t.text in legend]
    assert len(xs) == 3 and all(frame[0] * 72 < x < (frame[0] + frame[2]) * 72 for x in xs)


def test_the_ie_figure_is_the_same_bytes_twice_at_its_size(scatter: FigureOutcome) -> None:
    _assert_same_bytes_at_size(scatter, ie_vs_prediction(_scatter_report()), (6.4, 4.4))


def test_the_ie_figures_hostile_names_are_escaped_and_cut() -> None:
    """Markup and a ``$`` as an experiment, 200 characters as a model family: the SVG parses, holds the experiment
    as written and the family cut with ``...``, nothing past the figure's edge."""
    hostile = [("<i>E$1</i>&amp;", "f" * 200, 0.1, 0.3), ("E2", "ssl", 0.3, -0.2)]
    figure = ie_vs_prediction(_scatter_report(hostile))
    assert figure.svg is not None and b"<i>" not in figure.svg
    shown = [text.text or "" for text in ET.fromstring(figure.svg).iter(f"{SVG}text")]
    assert "<i>E$1</i>&amp;" in shown
    assert any(text.startswith("fff") and text.endswith("...") for text in shown)
    assert past_the_edge(figure.svg) == []


def test_a_short_legend_is_where_matplotlibs_best_puts_it() -> None:
    """A legend of three entries goes where matplotlib's ``loc="best"`` put it among the same points, IE = 0 and
    chance lines and boxed note (an Axes of the frame's size, its legend placed by matplotlib): not the upper right,
    which the IE = 0 line crosses, nor the lower left, which the note covers, but the centre right."""
    cluster = [(0.07 + 0.04 * i, 0.02 - 0.005 * (i % 5)) for i in range(10)] + [(0.65, -0.28), (0.7, -0.3)]
    contrasts = [("E1", "", x, y) for x, y in cluster]
    figure = ie_vs_prediction(_scatter_report(contrasts))

    def draw(axes: Any) -> None:
        axes.scatter([x for x, _ in cluster], [y for _, y in cluster], s=14)
        axes.axhline(0.0, label="IE = 0 (additive)")
        axes.axvline(0.5, linestyle="--", label="chance (0.5)")
        axes.plot([], [], marker="o", linestyle="", label="E1")
        note = "\n".join(coupling_lines(COUPLING))
        axes.text(0.02, 0.03, note, transform=axes.transAxes, fontsize=8, va="bottom", bbox={"boxstyle": "round"})

    _assert_legend_where_matplotlibs_best_puts_it(figure, (6.4, 4.4), draw, "IE = 0 (additive)")
