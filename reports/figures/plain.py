"""A figure of plain shapes (grids of coloured cells, frames, lines, texts) placed in inches from its top left and
written without matplotlib's drawing machinery: the PNG drawn with Pillow, the SVG written as text.

For a figure whose layout is fixed and whose content is boxes and texts (the EER heatmap), matplotlib's artists, text
layout and two full draws (Agg for the PNG, again for the SVG) were most of its cost; here each shape is written once
per format. The bytes are deterministic (no metadata, no ids); texts are DejaVu Sans, the font matplotlib draws the
other figures in (``layout._font_file``), at no less than ``SMALL_PT``; lines are matplotlib's default 0.8 pt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape

from reports.figures.layout import DPI, SMALL_PT, _font_file
from reports.figures.outcome import FigureOutcome
from reports.figures.png import png_bytes

if TYPE_CHECKING:
    import numpy as np
    from PIL import Image, ImageDraw, ImageFont

RGB = tuple[int, int, int]
BLACK, WHITE = (0, 0, 0), (255, 255, 255)
LINE_PT = 0.8  # matplotlib's default line width: axes frames and tick marks
FONT_UNITS = 2048  # DejaVu Sans's units per em: its metrics read at this size are exact


@dataclass(frozen=True)
class Cells:
    """``colours`` (rows x columns x RGBA bytes) filling ``box`` (left, top, width, height, inches), a cell per
    colour; a cell of alpha 0 is left empty (the background shows, as matplotlib shows a NaN)."""

    box: tuple[float, float, float, float]
    colours: np.ndarray


@dataclass(frozen=True)
class Frame:
    """A black outline of ``box`` (left, top, width, height, inches), ``LINE_PT`` wide."""

    box: tuple[float, float, float, float]


@dataclass(frozen=True)
class Line:
    """A black line ``LINE_PT`` wide from ``start`` to ``end`` (x, y, inches)."""

    start: tuple[float, float]
    end: tuple[float, float]


@dataclass(frozen=True)
class Text:
    """``text`` at ``points`` anchored at (``x``, ``y``) inches by ``anchor``, Pillow's two letters: l, m or r
    (start, middle, end) and a, m or d (the line's top, middle, bottom: ascender and descender); ``upward``: rotated
    90 degrees about its anchor to read upwards (the anchor is then in the text's own frame: its top is left)."""

    x: float
    y: float
    text: str
    points: float
    anchor: str
    ink: RGB = BLACK
    upward: bool = False


Shape = Cells | Frame | Line | Text


def _plain(filename: str, caption: str, alt: str, size: tuple[float, float], shapes: Sequence[Shape]) -> FigureOutcome:
    """``shapes`` on a white figure of ``size`` inches, as PNG and SVG bytes (``_drawn``'s outcome, without
    matplotlib)."""
    return FigureOutcome(filename, caption, _png(size, shapes), alt=alt, svg=_svg(size, shapes))


def _png(size: tuple[float, float], shapes: Sequence[Shape]) -> bytes:
    """The shapes drawn in order at ``DPI`` on an opaque RGB image ``size`` x ``DPI`` pixels (truncated, as Agg's
    canvas is), saved as ``canvas._drawn`` saves its PNG."""
    import numpy as np
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (int(size[0] * DPI), int(size[1] * DPI)), WHITE)
    draw = ImageDraw.Draw(image)
    width = max(1, round(LINE_PT * DPI / 72))
    for shape in shapes:
        match shape:
            case Cells(box, colours):
                left, top, right, bottom = _pixels(box)
                grid = Image.fromarray(np.ascontiguousarray(colours, dtype=np.uint8), "RGBA")
                grid = grid.resize((right - left, bottom - top), Image.Resampling.NEAREST)
                image.paste(grid, (left, top), grid)
            case Frame(box):
                draw.rectangle(_pixels(box), outline=BLACK, width=width)
            case Line(start, end):
                draw.line([(x * DPI, y * DPI) for x, y in (start, end)], fill=BLACK, width=width)
            case Text():
                _png_text(image, draw, shape)
    return png_bytes(np.asarray(image), DPI)


def _pixels(box: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
    """A box in inches (left, top, width, height) as whole pixels (left, top, right, bottom)."""
    left, top, width, height = box
    return round(left * DPI), round(top * DPI), round((left + width) * DPI), round((top + height) * DPI)


def _png_text(image: Image.Image, draw: ImageDraw.ImageDraw, text: Text) -> None:
    """``text`` drawn by Pillow with the figures' font; an upward text drawn on an image of its own, turned a
    quarter anticlockwise and pasted in its ink with that image as the mask."""
    from PIL import Image, ImageDraw

    font, x, y = _font(_points(text)), text.x * DPI, text.y * DPI
    if not text.upward:
        draw.text((x, y), text.text, fill=text.ink, font=font, anchor=text.anchor)
        return
    box = font.getbbox(text.text, anchor=text.anchor)  # around the anchor, in the text's frame: whole pixels
    left, top, right, bottom = (round(edge) for edge in box)
    mask = Image.new("L", (right - left, bottom - top), 0)
    ImageDraw.Draw(mask).text((-left, -top), text.text, fill=255, font=font, anchor=text.anchor)
    turned = mask.transpose(Image.Transpose.ROTATE_90)  # (u, v) -> (v, width - 1 - u): the anchor to (-top, ...)
    image.paste(text.ink, (round(x + top), round(y - (right - left) + 1 + left)), turned)


def _points(text: Text) -> float:
    return max(text.points, SMALL_PT)  # the floor, whatever size a figure asked for


@cache
def _font(points: float) -> ImageFont.FreeTypeFont:
    """The figures' font at ``points`` and ``DPI``, laid out glyph by glyph (Pillow's basic layout: the same bytes
    whether or not libraqm is installed)."""
    from PIL import ImageFont

    return ImageFont.truetype(_font_file(), points * DPI / 72, layout_engine=ImageFont.Layout.BASIC)


@cache
def _line_em() -> tuple[float, float]:
    """The font's ascender and descender in em: where Pillow's a, m and d anchors put a line's top, middle and
    bottom, which the SVG's baselines are placed from."""
    from PIL import ImageFont

    ascent, descent = ImageFont.truetype(_font_file(), FONT_UNITS).getmetrics()
    return ascent / FONT_UNITS, descent / FONT_UNITS


def _svg(size: tuple[float, float], shapes: Sequence[Shape]) -> bytes:
    """The shapes as SVG in points (72 per inch, as matplotlib writes its SVG): cells as rectangles without seams
    between them, texts as text in DejaVu Sans."""
    width, height = (_pt(inches) for inches in size)
    lines = [
        '<?xml version="1.0" encoding="utf-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{width}pt" height="{height}pt" '
        f'viewBox="0 0 {width} {height}">',
        f'<rect width="{width}" height="{height}" style="fill: #ffffff"/>',
    ]
    for shape in shapes:
        match shape:
            case Cells(box, colours):
                lines += _svg_cells(box, colours)
            case Frame((left, top, across, down)):
                lines.append(f'<rect x="{_pt(left)}" y="{_pt(top)}" width="{_pt(across)}" height="{_pt(down)}" '
                             f'style="fill: none; stroke: #000000; stroke-width: {LINE_PT}"/>')  # fmt: skip
            case Line((x0, y0), (x1, y1)):
                lines.append(f'<path d="M {_pt(x0)} {_pt(y0)} L {_pt(x1)} {_pt(y1)}" '
                             f'style="stroke: #000000; stroke-width: {LINE_PT}"/>')  # fmt: skip
            case Text():
                lines.append(_svg_text(shape))
    lines.append("</svg>\n")
    return "\n".join(lines).encode()


def _svg_cells(box: tuple[float, float, float, float], colours: np.ndarray) -> list[str]:
    left, top, across, down = box
    rows, columns = colours.shape[:2]
    high, wide = down / rows, across / columns
    return [
        '<g style="shape-rendering: crispEdges">',
        *(
            f'<rect x="{_pt(left + j * wide)}" y="{_pt(top + i * high)}" width="{_pt(wide)}" height="{_pt(high)}" '
            f'style="fill: {_hex(colours[i, j])}"/>'
            for i in range(rows)
            for j in range(columns)
            if colours[i, j, 3]
        ),
        "</g>",
    ]


def _svg_text(text: Text) -> str:
    """A text element whose baseline is where Pillow's anchor puts it: the anchor's line (top, middle or bottom)
    moved to the baseline by the font's ascender and descender; an upward text rotated about its anchor."""
    points = _points(text)
    ascent, descent = _line_em()
    below = {"a": ascent, "m": (ascent - descent) / 2, "d": -descent}[text.anchor[1]] * points
    x, y = _pt(text.x), _pt(text.y)
    turn = f' transform="rotate(-90 {x} {y})"' if text.upward else ""
    side = {"l": "start", "m": "middle", "r": "end"}[text.anchor[0]]
    return (
        f"<text style=\"font-size: {points:g}px; font-family: 'DejaVu Sans', sans-serif; text-anchor: {side}; "
        f'fill: {_hex(text.ink)}" x="{x}" y="{_pt(text.y + below / 72)}"{turn}>{escape(text.text)}</text>'
    )


def _pt(inches: float) -> str:
    """Inches as points for the SVG, to a hundredth."""
    return f"{inches * 72:.2f}".rstrip("0").rstrip(".")


def _hex(colour: Sequence[int] | np.ndarray) -> str:
    return "#{:02x}{:02x}{:02x}".format(*(int(c) for c in colour[:3]))
