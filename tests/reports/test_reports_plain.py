"""``reports.figures.plain``'s shapes drawn as PNG, checked against the geometry the SVG gives them: decoded with
Pillow, the ink of a text found where its anchor puts it."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from reports.figures.layout import DPI
from reports.figures.plain import Text, _font, _png


@pytest.mark.parametrize(("anchor", "start"), [("ls", 0.0), ("ms", 0.5), ("rs", 1.0)])
def test_an_upward_texts_anchor_is_where_its_start_middle_or_end_is_drawn(anchor: str, start: float) -> None:
    """A text turned to read upwards, anchored at the middle of a 4-inch square: its ink runs up from the anchor
    (start), centred on it (middle) or up to it (end), as the SVG's text-anchor start, middle and end rotated about
    the anchor put it; its baseline at the anchor's x, the ink left of it (the text's top is left)."""
    text = "FA share enrolment side"
    png = _png((4.0, 4.0), [Text(2.0, 2.0, text, 10, anchor, upward=True)])
    with Image.open(io.BytesIO(png)) as image:
        ink = np.asarray(image.convert("L")) < 128
    rows, columns = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    length = _font(10).getlength(text)  # pixels
    top, foot = 2.0 * DPI - (1.0 - start) * length, 2.0 * DPI + start * length  # its end is its top
    assert abs(rows.min() - top) <= 3 and abs(rows.max() - foot) <= 3, (rows.min(), rows.max(), top, foot)
    assert columns.max() < 2.0 * DPI <= columns.max() + 3  # the baseline at the anchor, the glyphs left of it
