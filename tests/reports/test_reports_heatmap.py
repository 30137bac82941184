"""The EER heatmap as ``reports.figures.plain`` writes it (Pillow's PNG, SVG as text), checked against oracles of its
own: the PNG decoded and its cells' colours against matplotlib's viridis, the SVG parsed as XML, the colour bar's
ticks against a matplotlib colour bar of the same height, the size against the layout's inches."""

from __future__ import annotations

import io
import math
import xml.etree.ElementTree as ET
from typing import Any

import matplotlib
import matplotlib.style
import numpy as np
import pytest
from PIL import Image, ImageFont

from reports.figures import DPI, FigureOutcome, eer_heatmap
from reports.figures.heatmap import COLORBAR_INCHES, HEATMAP_ROW_INCHES, _scale_ticks
from reports.figures.layout import (
    LINE_EM,
    MARGIN_INCHES,
    TEXT_PT,
    TICK_INCHES,
    TITLE_GAP_INCHES,
    _font_file,
    _text_inches,
)
from reports.format import format_number

SVG = "{http://www.w3.org/2000/svg}"
VIRIDIS = matplotlib.colormaps["viridis"]


def _rows(cells: dict[tuple[str, str], float]) -> dict[str, Any]:
    """A report of ``eer_by_model_condition`` rows, one per (model, condition) cell, all in experiment E14."""
    rows = [
        {"experiment": "E14", "condition": condition, "model": model, "eer_mean": eer, "n_records": 1}
        for (model, condition), eer in cells.items()
    ]
    return {"aggregates": {"eer_by_model_condition": rows}}


def _pixels(figure: FigureOutcome) -> np.ndarray:
    assert figure.png is not None
    with Image.open(io.BytesIO(figure.png)) as image:
        assert image.mode == "RGB"
        return np.asarray(image)


def _svg(figure: FigureOutcome) -> ET.Element:
    assert figure.svg is not None
    return ET.fromstring(figure.svg)


def _frames(root: ET.Element) -> list[tuple[float, float, float, float]]:
    """The outlined boxes of the SVG in pixels (left, top, width, height): the grid's, then the colour bar's."""
    return [
        tuple(float(rect.get(key, 0.0)) * DPI / 72 for key in ("x", "y", "width", "height"))  # type: ignore[misc]
        for rect in root.iter(f"{SVG}rect")
        if "fill: none" in rect.get("style", "")
    ]


def _texts(root: ET.Element) -> list[ET.Element]:
    return list(root.iter(f"{SVG}text"))


def _viridis(fraction: float) -> np.ndarray:
    return np.array(VIRIDIS(fraction)[:3]) * 255


MODELS = ("ecapa", "resnet", "wavlm")
CONDITIONS = ("clean", "noise snr=0", "noise snr=5", "reverb")
EERS = {(m, c): 0.02 + 0.05 * i + 0.11 * j for j, m in enumerate(MODELS) for i, c in enumerate(CONDITIONS)}
EERS.pop(("resnet", "reverb"))  # a missing cell: shown empty, as imshow shows NaN


@pytest.fixture(scope="module")
def small() -> FigureOutcome:
    (figure,) = eer_heatmap(_rows(EERS))
    return figure


def test_each_cells_centre_has_its_viridis_colour_and_the_missing_cell_the_background(small: FigureOutcome) -> None:
    """Every cell's centre pixel (the cell found from the SVG's grid frame) is viridis(EER / the highest EER) within
    rounding, the lowest (viridis 0) and highest (viridis 1) among them; the cell without an EER is white."""
    pixels = _pixels(small)
    (left, top, width, height), _ = _frames(_svg(small))
    top_eer = max(EERS.values())
    assert min(EERS.values()) == EERS[("ecapa", "clean")] and top_eer == EERS[("wavlm", "reverb")]
    for i, condition in enumerate(f"E14 {c}" for c in CONDITIONS):
        for j, model in enumerate(MODELS):
            x = round(left + (j + 0.5) * width / len(MODELS))
            y = round(top + (i + 0.5) * height / len(CONDITIONS)) - 9  # above the printed value
            eer = EERS.get((model, condition.removeprefix("E14 ")))
            expected = _viridis(eer / top_eer) if eer is not None else np.array([255, 255, 255])
            assert np.abs(pixels[y, x].astype(float) - expected).max() <= 1.0, (model, condition, pixels[y, x])


def test_the_colour_bar_runs_from_viridis_0_at_the_bottom_to_viridis_1_at_the_top(small: FigureOutcome) -> None:
    """Down the middle of the colour bar, each pixel row (its frame's edges left out) has viridis at its height's
    fraction of the bar, within a pixel's worth of the colormap's 256 colours."""
    pixels = _pixels(small)
    _, (left, top, width, height) = _frames(_svg(small))
    x = round(left + width / 2)
    for y in range(round(top) + 2, round(top + height) - 1):
        expected = _viridis(1 - (y + 0.5 - top) / height)
        assert np.abs(pixels[y, x] - expected).max() <= 256 / height * 3, y


def test_the_svg_holds_every_label_and_value_with_the_ink_of_its_cells_luminance(small: FigureOutcome) -> None:
    """The SVG parses as XML and holds the title, each row label, encoder name and printed value (all fit here), the
    colour bar's tick labels and its label; a value's ink is black on a light cell, white on a dark one."""
    texts = _texts(_svg(small))
    shown = [text.text for text in texts]
    assert "EER per condition (rows) and encoder (columns)" in shown and "EER" in shown
    assert all(f"E14 {c}" in shown for c in CONDITIONS) and all(m in shown for m in MODELS)
    assert not [text for text in texts if text.text in MODELS and text.get("transform")]  # upright: they fit
    assert {"0.0", "0.1", "0.2", "0.3"} <= set(shown) and "0.4" not in shown  # the highest EER is 0.39
    values = [text for text in texts if text.get("style", "").startswith("font-size: 8px")]
    assert sorted(text.text or "" for text in values) == sorted(format_number(eer) for eer in EERS.values())
    top_eer = max(EERS.values())
    for text in values:
        red, green, blue, _ = VIRIDIS(float(text.text or "nan") / top_eer)
        ink = "#000000" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else "#ffffff"
        assert f"fill: {ink}" in text.get("style", ""), text.text
    assert {"fill: #000000", "fill: #ffffff"} <= {text.get("style", "").split("; ")[-1] for text in values}


def test_two_runs_give_the_same_bytes_and_the_size_is_the_layouts(small: FigureOutcome) -> None:
    """Identical PNG and SVG bytes from a second run; the PNG is the layout's inches at ``DPI`` (the row labels'
    width, the columns, the colour bar across; title, names, rows and margins down) and the SVG the same in points."""
    (again,) = eer_heatmap(_rows(EERS))
    assert (again.png, again.svg) == (small.png, small.svg)
    line = LINE_EM * TEXT_PT / 72
    width = _text_inches([f"E14 {c}" for c in CONDITIONS], TEXT_PT) + TICK_INCHES + MARGIN_INCHES
    width += len(MODELS) * 0.9 + COLORBAR_INCHES  # three columns at their widest
    height = 2 * line + TICK_INCHES + TITLE_GAP_INCHES + 2 * MARGIN_INCHES + len(CONDITIONS) * HEATMAP_ROW_INCHES
    assert _pixels(small).shape[:2] == (int(height * DPI), int(width * DPI))
    view = [float(n) for n in str(_svg(small).get("viewBox")).split()]
    assert view[:2] == [0.0, 0.0] and np.allclose(view[2:], [width * 72, height * 72], atol=0.006)


def test_names_too_wide_for_their_columns_are_rotated_and_values_too_wide_are_left_out() -> None:
    """Twelve encoders with long names: each name turned to read upwards (an SVG rotation, and in the PNG ink taller
    than a line above its column), no value printed (the caption says so), each cell one flat colour."""
    models = [f"encoder-with-a-long-name-{m:02d}" for m in range(12)]
    cells = {(m, f"c{c}"): 0.01 + 0.003 * (i + 12 * c) for i, m in enumerate(models) for c in range(3)}
    (figure,) = eer_heatmap(_rows(cells))
    assert figure.caption.endswith("the cells too narrow for their values: they are in the EER tables")
    texts = _texts(_svg(figure))
    turned = [text for text in texts if text.text in models]
    assert len(turned) == 12 and all(text.get("transform", "").startswith("rotate(-90 ") for text in turned)
    assert not [text for text in texts if text.get("style", "").startswith("font-size: 8px")]
    pixels = _pixels(figure)
    (left, top, width, height), _ = _frames(_svg(figure))
    column = width / 12
    below_title = round((MARGIN_INCHES + LINE_EM * TEXT_PT / 72 + TITLE_GAP_INCHES / 2) * DPI)
    for j in range(12):
        x = round(left + (j + 0.5) * column)
        strip = pixels[below_title : round(top) - 2, x - 4 : x + 5].min(axis=(1, 2))  # the darkest ink per pixel row
        inked = np.nonzero(strip < 128)[0]
        assert inked.size and inked.max() - inked.min() > 3 * LINE_EM * TEXT_PT / 72 * DPI, j
        first = round(left + j * column) + 2, round(left + (j + 1) * column) - 2  # the first row's cell, its edges off
        cell = pixels[round(top) + 2 : round(top + height / 3) - 2, first[0] : first[1]]
        assert (cell == cell[0, 0]).all(), j  # no value drawn in it


@pytest.mark.parametrize(
    ("top", "rows"),
    [(0.52, 26), (0.48, 16), (0.3, 2), (0.3, 1), (0.05, 3), (1.0, 36), (0.0123, 7), (0.52, 1), (0.09, 1)],
)
def test_the_colour_bars_ticks_are_those_matplotlib_would_draw(top: float, rows: int) -> None:
    """The ticks and tick labels of a matplotlib colour bar of the same height and scale (its own locator and
    formatter, drawn)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure

    down = rows * HEATMAP_ROW_INCHES
    with matplotlib.style.context("default"), matplotlib.rc_context({"font.size": TEXT_PT}):
        figure = Figure(figsize=(2.0, down + 1.0), dpi=DPI)
        axes = figure.add_axes((0.2, 0.5 / (down + 1.0), 0.1, down / (down + 1.0)))  # the heatmap's bar, its height
        bar = figure.colorbar(ScalarMappable(Normalize(0.0, top), "viridis"), cax=axes)
        FigureCanvasAgg(figure).draw()
        drawn = zip(bar.ax.yaxis.get_ticklocs(), bar.ax.yaxis.get_ticklabels(), strict=True)
        ticks, labels = zip(*((float(t), label.get_text()) for t, label in drawn if 0.0 <= t <= top), strict=True)
    ours, our_labels = _scale_ticks(top, down)
    assert np.allclose(ours, ticks, rtol=0, atol=1e-12 * top) and our_labels == list(labels)
    assert math.isclose(ours[0], 0.0) and len(ours) >= 2


def test_labels_are_drawn_as_written() -> None:
    """No mathtext and no markup: a ``$``, ``&`` or ``<`` in a condition or an encoder's name is shown as it is, and
    the SVG still parses."""
    (figure,) = eer_heatmap(_rows({("m<1>", "a$b & c"): 0.1, ("m&2", "a$b & c"): 0.2}))
    shown = {text.text for text in _texts(_svg(figure))}
    assert {"E14 a$b & c", "m<1>", "m&2"} <= shown


def test_control_characters_are_escaped_and_glyphs_the_font_lacks_are_measured() -> None:
    """A tab, a newline or U+0001 in a name is drawn as its escape (one line; the SVG stays XML); a character DejaVu
    Sans lacks (Chinese, as CN-Celeb's conditions are named) is measured as the missing glyph's box Pillow draws
    (its length with Pillow's basic layout, the oracle), never an error."""
    (figure,) = eer_heatmap(_rows({("中文\t", "no\x01isy\n"): 0.1, ("m2", "no\x01isy\n"): 0.2}))
    shown = {text.text for text in _texts(_svg(figure))}
    assert {"E14 no\\x01isy\\n", "中文\\t"} <= shown
    font = ImageFont.truetype(_font_file(), TEXT_PT * DPI / 72, layout_engine=ImageFont.Layout.BASIC)
    for text in ("中文", "清晰 noise", "\uffff"):
        assert _text_inches([text], TEXT_PT) * DPI >= font.getlength(text)


def test_the_colour_bars_label_is_centred_on_the_bar_in_the_png_as_in_the_svg(small: FigureOutcome) -> None:
    """ "EER", turned to read upwards beside the colour bar, has its ink centred on the bar's height in the PNG (within
    two pixels), where the SVG centres it (``text-anchor: middle`` about the bar's middle)."""
    root = _svg(small)
    _, (_, top, _, height) = _frames(root)
    (label,) = [text for text in _texts(root) if text.text == "EER"]
    assert "text-anchor: middle" in label.get("style", "") and label.get("transform", "").startswith("rotate(-90 ")
    x = float(label.get("x", 0.0)) * DPI / 72
    strip = _pixels(small)[round(top) : round(top + height), round(x) : round(x) + 14].min(axis=(1, 2))
    inked = np.nonzero(strip < 128)[0]
    assert inked.size and abs((inked.min() + inked.max()) / 2 - height / 2) <= 2
