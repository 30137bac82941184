"""The DET figures as ``reports.figures.plain`` writes them (curves, bands and dots by Agg's path renderer, frames,
ticks and texts by Pillow, the SVG as text), checked against oracles of their own: the curves' points where
``scipy.stats.norm.ppf`` puts them in the panel the SVG frames, the PNG decoded and its pixels against the series'
colours (a band's blended at 0.18 over white by hand), the SVG parsed as XML, the size against the figure's inches."""

from __future__ import annotations

import io
import math
import re
import xml.etree.ElementTree as ET
from typing import Any

import numpy as np
import pytest
from PIL import Image
from scipy.stats import norm

from reports.figures import DPI, FigureOutcome, det_band_figures, det_curves
from reports.figures.data import LABEL_INCHES, _cut, _label
from reports.figures.det import DET_LIMITS, DET_TICK_LABELS
from tests.reports.figure_oracle import SVG, TAB10
from tests.reports.figure_text import past_the_edge

LOW, HIGH = (float(norm.ppf(limit)) for limit in DET_LIMITS)

# m1: a step curve, flat at a miss rate of 0.2 from 1% to 30% false alarms; m2: a gap (an absent miss rate) between
# its second and third points, so it is drawn in two pieces
M1 = {"p_fa": [0.0005, 0.01, 0.01, 0.3, 0.3, 0.6], "p_miss": [0.5, 0.5, 0.2, 0.2, 0.01, 0.01]}
M2 = {"p_fa": [0.001, 0.003, 0.006, 0.02, 0.1, 0.4], "p_miss": [0.4, 0.3, None, 0.05, 0.02, 0.001]}


def _entry(panel: str, series: str, det: dict[str, list[Any]], eer: float | None = None) -> dict[str, Any]:
    """A bundle's DET curve as the report holds it: in figure E13, panel ``panel``, colour of ``series``."""
    return {"figure": "E13", "panel": panel, "series": series, "record_id": f"{panel}-{series}", "det": det,
            "eer_interp": eer, "figures": ["det"]}  # fmt: skip


def _band(panel: str, series: str, p_fa: list[float], low: list[float], high: list[float]) -> dict[str, Any]:
    """A band of ``statistics.det_bands`` for the curve of ``panel`` and ``series``."""
    key = {"figure": "E13", "panel": panel, "series": series, "record_id": f"{panel}-{series}"}
    return {"key": key, "p_fa": p_fa, "p_miss": low, "low": low, "high": high, "level": 0.95}


def _report() -> dict[str, Any]:
    """Two panels: clean (m1 with its EER point, m2 with its gap) and noise (m2 alone); each curve with its band
    (``det_band_figures`` draws the banded ones), the clean ones' small, at the lower right, noise's m2's wide."""
    curves = [_entry("clean", "m1", M1, 0.2), _entry("clean", "m2", M2), _entry("noise", "m2", M2)]
    bands = [
        _band("clean", "m1", [0.4, 0.5], [0.005, 0.005], [0.02, 0.02]),
        _band("clean", "m2", [0.1, 0.4], [0.001, 0.0007], [0.03, 0.002]),
        _band("noise", "m2", [0.01, 0.02, 0.05, 0.1, 0.3], [0.001] * 5, [0.3] * 5),
    ]
    return {"curves": curves, "statistics": {"det_bands": bands}}


@pytest.fixture(scope="module")
def figure() -> FigureOutcome:
    (drawn,) = det_band_figures(_report())
    assert drawn.filename == "det_curves_E13.png"
    return drawn


def _svg(figure: FigureOutcome) -> ET.Element:
    assert figure.svg is not None
    return ET.fromstring(figure.svg)


def _pixels(figure: FigureOutcome) -> np.ndarray:
    assert figure.png is not None
    with Image.open(io.BytesIO(figure.png)) as image:
        assert image.mode == "RGB"
        return np.asarray(image).astype(float)


def _panels(root: ET.Element) -> list[tuple[float, float, float, float]]:
    """The panels' boxes (left, top, width, height, points): the black outlines of the SVG."""
    return [
        tuple(float(rect.get(key, 0.0)) for key in ("x", "y", "width", "height"))  # type: ignore[misc]
        for rect in root.iter(f"{SVG}rect")
        if "fill: none; stroke: #000000" in rect.get("style", "")
    ]


def _mapped(box: tuple[float, float, float, float], p_fa: Any, p_miss: Any) -> np.ndarray:
    """Rates as points of the SVG (x right, y down, points): their normal deviates between the axes' limits
    (``norm.ppf``) scaled to the panel's box, the miss rate upwards."""
    left, top, width, height = box
    x = (norm.ppf(np.clip(np.asarray(p_fa, dtype=float), *DET_LIMITS)) - LOW) / (HIGH - LOW)
    y = (norm.ppf(np.clip(np.asarray(p_miss, dtype=float), *DET_LIMITS)) - LOW) / (HIGH - LOW)
    return np.column_stack([left + x * width, top + height - y * height])


def _strokes(root: ET.Element, colour: tuple[int, ...], width: str = "1.2") -> list[list[np.ndarray]]:
    """The paths stroked in ``colour`` at ``width`` points within a panel (clipped to it: not a legend's key), each as
    its subpaths' points."""
    ink = "#{:02x}{:02x}{:02x}".format(*colour)
    found = []
    for path in root.iter(f"{SVG}path"):
        style = path.get("style", "")
        if f"stroke: {ink}" in style and f"stroke-width: {width};" in style and path.get("clip-path"):
            found.append([np.array(re.findall(r"(-?[\d.]+) (-?[\d.]+)", piece), dtype=float)
                          for piece in str(path.get("d")).split("M ")[1:]])  # fmt: skip
    return found


def test_each_curve_is_its_rates_normal_deviates_in_its_panel_and_a_gap_splits_it(figure: FigureOutcome) -> None:
    """m1's path in the first panel and m2's in both are their rates through ``norm.ppf`` mapped into the panels'
    boxes (to the SVG's hundredth of a point); m2's absent miss rate leaves two pieces, of two and three points."""
    root = _svg(figure)
    clean, noise = _panels(root)
    ((m1,),) = _strokes(root, TAB10[0])
    np.testing.assert_allclose(m1, _mapped(clean, M1["p_fa"], M1["p_miss"]), atol=0.006)
    m2 = _strokes(root, TAB10[1])
    assert [len(piece) for pieces in m2 for piece in pieces] == [2, 3, 2, 3]
    for pieces, box in zip(m2, (clean, noise), strict=True):
        np.testing.assert_allclose(pieces[0], _mapped(box, M2["p_fa"][:2], M2["p_miss"][:2]), atol=0.006)
        np.testing.assert_allclose(pieces[1], _mapped(box, M2["p_fa"][3:], M2["p_miss"][3:]), atol=0.006)


def test_the_png_shows_the_curve_the_diagonal_and_the_band_where_the_svg_puts_them(figure: FigureOutcome) -> None:
    """In the PNG: along m1's flat stretch (a miss rate of 0.2 from 1% to 30% false alarms) the pixel nearest the
    line is its tab10 blue; a slanted stretch of m2 has its orange and blends of it with white beside (anti-aliased);
    the diagonal's dots are grey (no hue) and cover part of it; inside m2's band, clear of
    lines, the colour is tab10 orange at 0.18 over white, to a unit of rounding."""
    pixels = _pixels(figure)
    clean, noise = (tuple(v * DPI / 72 for v in box) for box in _panels(_svg(figure)))
    for p_fa in (0.02, 0.04, 0.1, 0.15):
        ((x, y),) = _mapped(clean, [p_fa], [0.2])
        column = pixels[round(y) - 1 : round(y) + 2, math.floor(x)]
        assert np.abs(column - TAB10[0]).max(axis=1).min() <= 40, (p_fa, column)
    inked = 0
    for rate in np.geomspace(0.0007, 0.004, 40):  # the diagonal, below the curves
        ((x, y),) = _mapped(noise, [rate], [rate])
        pixel = pixels[math.floor(y), math.floor(x)]
        assert np.ptp(pixel) <= 2, (rate, pixel)  # grey
        inked += pixel.max() < 250
    assert 8 <= inked <= 36
    x, y = _mapped(clean, [0.02, 0.1], [0.05, 0.02]).mean(axis=0)  # m2's slanted segment's middle: anti-aliased
    window = pixels[math.floor(y) - 3 : math.floor(y) + 4, math.floor(x) - 3 : math.floor(x) + 4].reshape(-1, 3)
    orange, white = (np.abs(window - ink).max(axis=1) for ink in (TAB10[1], (255, 255, 255)))
    assert orange.min() <= 30 and ((orange > 40) & (white > 40)).any()
    ((x, y),) = _mapped(noise, [0.03], [0.007])  # inside the band, between grid lines, away from the curve
    expected = 255 * (1 - 0.18) + 0.18 * np.array(TAB10[1])
    assert np.abs(pixels[math.floor(y), math.floor(x)] - expected).max() <= 1.0


def test_the_svg_holds_every_label_once_where_it_belongs(figure: FigureOutcome) -> None:
    """The SVG parses as XML; its texts: the two panels' titles, the tick labels under both panels (one row) and
    left of the first only, an axis label under each and one left, the legend's series; a polygon at 0.18 per band."""
    root = _svg(figure)
    shown = [text.text for text in root.iter(f"{SVG}text")]
    assert {"clean", "noise", "m1", "m2"} <= set(shown)
    assert shown.count("false-alarm probability (%)") == 2 and shown.count("miss probability (%)") == 1
    for label in DET_TICK_LABELS:
        assert shown.count(label) == 3, label  # under both panels, left of the first
    fills = [p.get("style", "") for p in root.iter(f"{SVG}path") if "fill-opacity: 0.18" in p.get("style", "")]
    inks = (TAB10[0], TAB10[1], TAB10[1])  # m1's and m2's in the first panel, m2's in the second
    assert fills == [f"fill: #{red:02x}{green:02x}{blue:02x}; fill-opacity: 0.18" for red, green, blue in inks]
    assert len(list(root.iter(f"{SVG}circle"))) == 1  # m1's EER point


def test_two_runs_give_the_same_bytes_and_the_size_is_the_figures_inches(figure: FigureOutcome) -> None:
    """Identical PNG and SVG bytes from a second run; one row of panels is 6.4 x 4.4 inches, three panels (two rows)
    6.4 x 7.8, at ``DPI`` in the PNG and in points in the SVG; of three panels, the second (none below it) and third
    have tick labels below, the first and third left."""
    (again,) = det_band_figures(_report())
    assert (again.png, again.svg) == (figure.png, figure.svg)
    assert _pixels(figure).shape[:2] == (440, 640)
    three = [_entry(panel, "m1", M1) for panel in ("a", "b", "c")]
    (tall,) = det_curves({"curves": three})
    assert _pixels(tall).shape[:2] == (780, 640)
    assert _svg(tall).get("viewBox") == "0 0 460.8 561.6"
    shown = [text.text for text in _svg(tall).iter(f"{SVG}text")]
    assert all(shown.count(label) == 4 for label in DET_TICK_LABELS)  # under b and c (none below b), left of a and c
    assert shown.count("false-alarm probability (%)") == 2 and shown.count("miss probability (%)") == 2


def test_hostile_names_are_escaped_in_the_svg_and_cut_as_label_cuts_them() -> None:
    """A 200-character encoder, a CJK one and one of markup: the legend's entries cut to ``LABEL_INCHES`` as
    ``_label`` cuts them (``$`` drawn as itself), the markup escaped in the SVG's bytes and read back as written;
    a long panel title cut to its panel's width; nothing past the figure's edges; the PNG decodes."""
    long, markup = "encoder-" + "x" * 192 + "$", "m<script>&amp;</script>"
    title = "noise: " + "babble-" * 30
    curves = [_entry(title, series, M1) for series in (long, "话者一", markup)]
    (drawn,) = det_curves({"curves": curves})
    assert drawn.svg is not None and drawn.png is not None
    assert b"m&lt;script&gt;&amp;amp;&lt;/script&gt;" in drawn.svg and b"<script" not in drawn.svg
    root = _svg(drawn)
    shown = [text.text for text in root.iter(f"{SVG}text")]
    cut = _label(long, LABEL_INCHES)
    assert cut.endswith("...") and len(cut) < 60 and cut in shown
    assert "话者一" in shown and markup in shown
    ((_, _, width, _),) = _panels(root)
    assert _label(title, width / 72) in shown and _label(title, width / 72).endswith("...")
    assert past_the_edge(drawn.svg) == []
    with Image.open(io.BytesIO(drawn.png)) as image:
        image.verify()


def test_a_single_panels_long_title_is_cut_to_the_panel() -> None:
    """A named figure of one panel takes its caption as its title: a long one is cut to the panel's width, ``...``
    last, and nothing runs past the figure's edges (before, the whole caption ran past both)."""
    caption = "DET curves of E13 per condition family, one colour per encoder; " + "shaded: a band " * 12
    curves = [{**_entry("", series, M1), "panel": None} for series in ("m1", "m2")]
    (drawn,) = det_curves({"curves": curves}, None)
    assert drawn.svg is not None and past_the_edge(drawn.svg) == []
    from reports.figures.det import _det_figure

    colours = {"m1": (0.1, 0.2, 0.3), "m2": (0.4, 0.5, 0.6)}
    named = _det_figure("E13", curves, colours, caption)
    assert named.svg is not None and past_the_edge(named.svg) == []
    root = _svg(named)
    ((_, _, width, _),) = _panels(root)
    (title,) = [text.text for text in root.iter(f"{SVG}text") if "font-size: 10.8px" in text.get("style", "")]
    assert title == _cut(caption, width / 72, 10.8) and str(title).endswith("...")


def test_a_dollar_is_drawn_as_itself() -> None:
    """matplotlib's mathtext escape (``_label``'s ``\\$``) is not drawn: the figure shows the name as written."""
    (drawn,) = det_curves({"curves": [_entry("p$1", "m$1", M1)]})
    shown = [text.text for text in _svg(drawn).iter(f"{SVG}text")]
    assert "m$1" in shown and "p$1" in shown and not any("\\$" in (text or "") for text in shown)


def _legend_box(root: ET.Element) -> tuple[float, float, float, float]:
    """The legend's frame (left, top, right, bottom, points): the SVG's white path at 0.8 opacity."""
    (frame,) = [p for p in root.iter(f"{SVG}path") if p.get("style") == "fill: #ffffff; fill-opacity: 0.8"]
    points = np.array(re.findall(r"(-?[\d.]+) (-?[\d.]+)", str(frame.get("d"))), dtype=float)
    return points[:, 0].min(), points[:, 1].min(), points[:, 0].max(), points[:, 1].max()


def test_a_groups_legend_lies_inside_where_no_curve_runs_or_beside_when_long() -> None:
    """``audit scores``' groups in one panel: three curves at the upper right put their legend at the upper left,
    inside the panel, clear of every curve's points (matplotlib's ``best``); seven put it right of the panel."""
    upper_right = {"p_fa": [0.1, 0.2, 0.3, 0.5, 0.6], "p_miss": [0.6, 0.5, 0.3, 0.2, 0.1]}
    groups = [{"group": f"group {i}", "det": upper_right, "eer_interp": 0.3} for i in range(3)]
    (drawn,) = det_curves({"curves": groups})
    root = _svg(drawn)
    ((left, top, width, height),) = _panels(root)
    legend = _legend_box(root)
    assert left < legend[0] < legend[2] < left + width / 2 and top < legend[1] < legend[3] < top + height / 2
    curve = _mapped((left, top, width, height), upper_right["p_fa"], upper_right["p_miss"])
    assert not ((curve[:, 0] > legend[0]) & (curve[:, 0] < legend[2]) & (curve[:, 1] < legend[3])).any()
    (long,) = det_curves({"curves": [{**groups[0], "group": f"group {i}"} for i in range(7)]})
    ((left, _, width, _),) = _panels(_svg(long))
    assert _legend_box(_svg(long))[0] > left + width
    assert long.svg is not None and past_the_edge(long.svg) == []


def test_the_y_axis_label_is_centred_on_its_panel_in_the_png(figure: FigureOutcome) -> None:
    """ "miss probability (%)", turned to read upwards left of the first panel's tick labels, has its ink centred on
    the panel's height (within two pixels), as the SVG centres it."""
    root = _svg(figure)
    (label,) = [text for text in root.iter(f"{SVG}text") if text.text == "miss probability (%)"]
    assert "text-anchor: middle" in label.get("style", "") and label.get("transform", "").startswith("rotate(-90 ")
    (_, top, _, height), _ = (tuple(v * DPI / 72 for v in box) for box in _panels(root))
    x = float(label.get("x", 0.0)) * DPI / 72  # its baseline: the ink left of it, its descenders a little right
    strip = _pixels(figure)[round(top) : round(top + height), round(x) - 12 : round(x) + 2].min(axis=(1, 2))
    inked = np.nonzero(strip < 128)[0]
    assert inked.size and abs((inked.min() + inked.max()) / 2 - height / 2) <= 2


def test_a_curve_of_no_rates_or_none_known_is_drawn_as_nothing() -> None:
    """A curve without points, or whose points all lack a rate, draws no line (an empty path), its EER aside: the
    figure is still drawn, its other curve with it."""
    empty = {"group": "none", "det": {"p_fa": [], "p_miss": []}, "eer_interp": None}
    unknown = {"group": "unknown", "det": {"p_fa": [None, 0.1], "p_miss": [0.2, None]}, "eer_interp": math.nan}
    (drawn,) = det_curves({"curves": [empty, unknown, {"group": "m1", "det": M1, "eer_interp": 0.2}]})
    assert drawn.png is not None and drawn.svg is not None
    root = _svg(drawn)
    assert [len(pieces) for pieces in _strokes(root, TAB10[0])] == [0]
    assert [len(pieces) for pieces in _strokes(root, TAB10[2])] == [1]
    assert len(list(root.iter(f"{SVG}circle"))) == 1
