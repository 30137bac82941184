"""Every figure of the report as plain shapes (grids of coloured cells, frames, lines, texts; polylines, filled
polygons, dots and markers) placed in inches from its top left and written without matplotlib's figures and artists:
the PNG drawn with Pillow (over what Agg's path renderer drew of the polylines, polygons and dots), the SVG written as
text; with the series' colours every figure shares (``_series_colours``) and the drawing modules imported ahead of a
fork (``import_drawing``).

matplotlib's artists, text layout and two full draws (Agg for the PNG, again for the SVG) were most of a figure's
cost; here each shape is written once per format. The bytes are deterministic (no metadata; the only ids, of clip
paths, are numbered in order); texts are DejaVu Sans, the font matplotlib drew the figures in
(``layout._font_file``), at no less than ``SMALL_PT``; frames and ticks are matplotlib's default 0.8 pt. matplotlib
and Pillow are imported inside the drawing functions, so that ``import reports`` stays light.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape

from reports.figures.layout import DPI, LABEL_PAD_PT, LINE_EM, SMALL_PT, TICK_INCHES, _font_file, _text_inches
from reports.figures.outcome import FigureOutcome
from reports.figures.png import png_bytes

if TYPE_CHECKING:
    import numpy as np
    from matplotlib.backend_bases import GraphicsContextBase
    from PIL import Image, ImageDraw, ImageFont

RGB = tuple[int, int, int]
Box = tuple[float, float, float, float]  # left, top, width, height, inches
BLACK, WHITE = (0, 0, 0), (255, 255, 255)
WHITE_RGBA = (1.0, 1.0, 1.0, 1.0)
LINE_PT = 0.8  # matplotlib's default line width: axes frames and tick marks
KEY_PT = 1.5  # matplotlib's default line width (lines.linewidth): a plotted line's and a legend key's
DASHES = {"--": (3.7, 1.6), ":": (1.0, 1.65), "-.": (6.4, 1.6, 1.0, 1.6)}  # matplotlib's, in line widths
HEX = tuple(f"{byte:02x}" for byte in range(256))  # a colour byte as two hex digits
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
    (start, middle, end) and a, m, s or d (the line's top, middle, baseline, bottom: ascender, halfway between
    ascender and descender, baseline, descender); ``upward``: rotated
    90 degrees about its anchor to read upwards (the anchor is then in the text's own frame: its top is left)."""

    x: float
    y: float
    text: str
    points: float
    anchor: str
    ink: RGB = BLACK
    upward: bool = False


@dataclass(frozen=True)
class Polyline:
    """A line through ``points`` (n x 2: x, y inches) in ``ink`` at opacity ``alpha``, ``width`` points wide, dashed
    by ``dashes`` (on and off lengths in points, solid when empty: its ends then square, as matplotlib's solid
    lines', else butt), its corners round; a point with a NaN is a gap (the pieces either side drawn apart); only
    what lies within ``clip`` drawn, where given. Anti-aliased, by Agg."""

    points: np.ndarray
    ink: RGB
    width: float
    dashes: tuple[float, ...] = ()
    clip: Box | None = None
    alpha: float = 1.0


@dataclass(frozen=True)
class Polygon:
    """The inside of ``points`` (n x 2: x, y inches), closed, filled with ``ink`` at opacity ``alpha``, without an
    outline; only what lies within ``clip`` drawn, where given. Anti-aliased, by Agg."""

    points: np.ndarray
    ink: RGB
    alpha: float = 1.0
    clip: Box | None = None


@dataclass(frozen=True)
class Dot:
    """A disc ``points`` across centred at (``x``, ``y``) inches in ``ink`` at opacity ``alpha``; only what lies within
    ``clip`` drawn, where given. Anti-aliased, by Agg."""

    x: float
    y: float
    points: float
    ink: RGB
    clip: Box | None = None
    alpha: float = 1.0


Shape = Cells | Frame | Line | Text | Polyline | Polygon | Dot
PATHS = (Polyline, Polygon, Dot)  # drawn by Agg, first, beneath the shapes Pillow draws


MARKER_EDGE_PT = 1.0  # matplotlib's marker edge (lines.markeredgewidth), drawn in the marker's colour
MARKER_SIZE = 6.0  # points: matplotlib's lines.markersize, a plotted line's markers and a legend key's
TRIANGLE_INRADIUS = 0.5 / (0.5 + 1.25**0.5)  # matplotlib's "^" (base and height its size): its incircle's radius


def _square(x: float, y: float, points: float) -> np.ndarray:
    """A square ``points`` across centred at (``x``, ``y``) inches."""
    import numpy as np

    half = points / 72 / 2
    return np.array([[x - half, y - half], [x + half, y - half], [x + half, y + half], [x - half, y + half]])


def _rounded(box: Box, radius: float) -> np.ndarray:
    """The outline of ``box`` (left, top, width, height, inches) with its corners rounded by ``radius``, closed."""
    import numpy as np

    left, top, wide, high = box
    quarter = np.linspace(0, math.pi / 2, 5)
    corners = [(left + wide - radius, top + radius, -math.pi / 2), (left + wide - radius, top + high - radius, 0.0),
               (left + radius, top + high - radius, math.pi / 2), (left + radius, top + radius, math.pi)]  # fmt: skip
    arcs = [np.column_stack([x + radius * np.cos(turn + quarter), y + radius * np.sin(turn + quarter)])
            for x, y, turn in corners]  # fmt: skip
    outline = np.concatenate(arcs)
    return np.concatenate([outline, outline[:1]])


def _marker(
    kind: str, x: float, y: float, points: float, ink: RGB, edge: float = MARKER_EDGE_PT, **drawn: Any
) -> Dot | Polygon:
    """matplotlib's marker ``kind`` (``o``, ``s`` or ``^``; another a square) of size ``points`` with its ``edge``
    (points wide, in its own colour) at (``x``, ``y``) inches, as one filled shape: the disc, square or triangle
    grown by half the edge all round (a triangle about its incircle's centre, as its mitred edge grows it).
    ``drawn``: the shape's ``alpha`` and ``clip``."""
    import numpy as np

    if kind == "o":
        return Dot(x, y, points + edge, ink, **drawn)
    if kind != "^":
        return Polygon(_square(x, y, points + edge), ink, **drawn)
    inradius = TRIANGLE_INRADIUS * points
    grown = (inradius + edge / 2) / inradius * points / 72
    centre = y + (0.5 - TRIANGLE_INRADIUS) * points / 72  # the incircle's centre: inradius above the base
    corners = np.array([[0.0, -1.0 + TRIANGLE_INRADIUS], [-0.5, TRIANGLE_INRADIUS], [0.5, TRIANGLE_INRADIUS]])
    return Polygon(np.column_stack([x + grown * corners[:, 0], centre + grown * corners[:, 1]]), ink, **drawn)


def _rgb(colour: Sequence[float]) -> RGB:
    red, green, blue = (round(255 * c) for c in colour[:3])
    return red, green, blue


def _dashes(style: str, width: float) -> tuple[float, ...]:
    """matplotlib's dash pattern of ``style`` for a line ``width`` points wide (scaled by its width), in points."""
    return tuple(width * length for length in DASHES.get(style, ()))


def _scale(box: Box, x: tuple[float, float], y: tuple[float, float]) -> Callable[[float, float], tuple[float, float]]:
    """The map from data (x, y) to inches from the figure's top left in a panel ``box`` (left, top, width, height,
    inches) whose linear axes run over ``x`` and ``y`` (the y one upwards)."""
    left, top, across, down = box
    (x_low, x_high), (y_low, y_high) = x, y

    def at(x: float, y: float) -> tuple[float, float]:
        return left + (x - x_low) / (x_high - x_low) * across, top + down - (y - y_low) / (y_high - y_low) * down

    return at


def _axes_shapes(
    box: Box,
    xs: Sequence[tuple[float, str]],
    ys: Sequence[tuple[float, str]],
    points: float = SMALL_PT,
    x_label: str = "",
    y_label: str = "",
    label_pt: float = SMALL_PT,
    y_label_pt: float | None = None,
    tick_labels: tuple[bool, bool] = (True, True),
) -> list[Shape]:
    """A panel's frame ``box`` with ticks as matplotlib's default ones: marks 3.5 pt out at
    ``xs`` along its foot and ``ys`` along its left side (each a position in inches from the figure's top left and
    its label), their labels at ``points`` 3.5 pt beyond them (an x label's top there, a y label's middle level
    with its tick), then ``x_label`` and ``y_label`` at ``label_pt`` (the y one at ``y_label_pt`` where given)
    ``LABEL_PAD_PT`` beyond those (the y one reading upwards, its foot towards the panel); ``tick_labels``: whether
    the x and the y ticks are labelled (a panel sharing its scale with the one below or left of it is not). Texts
    placed by their baselines, as matplotlib places them (``_lp_em``)."""
    left, top, across, down = box
    foot = top + down
    ascent, descent = (em / 72 for em in _lp_em())
    shapes: list[Shape] = [Frame(box)]
    shapes += [Line((x, foot), (x, foot + TICK_INCHES / 2)) for x, _ in xs]
    shapes += [Line((left - TICK_INCHES / 2, y), (left, y)) for y, _ in ys]
    shapes += [Text(x, foot + TICK_INCHES + ascent * points, label, points, "ms") for x, label in xs if tick_labels[0]]
    shapes += [
        Text(left - TICK_INCHES, y + ascent * points / 2, label, points, "rs") for y, label in ys if tick_labels[1]
    ]
    if x_label:
        below = (TICK_INCHES * 72 + LINE_EM * points + LABEL_PAD_PT) / 72 + ascent * label_pt
        shapes.append(Text(left + across / 2, foot + below, x_label, label_pt, "ms"))
    if y_label:
        y_pt = label_pt if y_label_pt is None else y_label_pt
        widest = _text_inches([label for _, label in ys], points) * 72 if ys else 0.0
        beside = TICK_INCHES + (widest + LABEL_PAD_PT) / 72 + descent * y_pt
        shapes.append(Text(left - beside, top + down / 2, y_label, y_pt, "ms", upward=True))
    return shapes


def _plain(filename: str, caption: str, alt: str, size: tuple[float, float], shapes: Sequence[Shape]) -> FigureOutcome:
    """``shapes`` on a white figure of ``size`` inches, as PNG and SVG bytes (a figure's outcome)."""
    return FigureOutcome(filename, caption, _png(size, shapes), alt=alt, svg=_svg(size, shapes))


def import_drawing() -> None:
    """Import the drawing modules (matplotlib's Agg renderer, paths and fonts, Pillow's) now: a process that draws
    some figures in a fork of itself and the others in itself (``audit verify --bundle --out``) then imports them
    once, before the fork, not in both."""
    import matplotlib.backends.backend_agg
    import matplotlib.font_manager
    import matplotlib.path  # noqa: F401
    import PIL.Image
    import PIL.ImageDraw
    import PIL.ImageFont  # noqa: F401


def _series_colours(names: Sequence[str]) -> dict[str, Any]:
    """One colour per series name, the same in every panel and figure (tab10, tab20 beyond ten); none, and matplotlib
    not imported, for no series (a table's report has no DET bands to colour)."""
    if not names:
        return {}
    import matplotlib

    colormap = matplotlib.colormaps["tab10" if len(names) <= 10 else "tab20"]
    return {name: colormap(index % colormap.N) for index, name in enumerate(names)}


def _png(size: tuple[float, float], shapes: Sequence[Shape]) -> bytes:
    """The shapes drawn at ``DPI`` on an opaque RGB image ``size`` x ``DPI`` pixels (truncated, as Agg's canvas is),
    saved by ``png.png_bytes``: the polylines, polygons and dots first, in order, by matplotlib's Agg
    path renderer (its anti-aliased lines, without its artists, layout or text), then the others in order by Pillow
    over them (a figure's frames, ticks and texts lie over its curves, as matplotlib draws them)."""
    import numpy as np
    from PIL import Image, ImageDraw

    pixels = (int(size[0] * DPI), int(size[1] * DPI))
    paths = [shape for shape in shapes if isinstance(shape, PATHS)]
    image = Image.fromarray(_agg(pixels, paths)) if paths else Image.new("RGB", pixels, WHITE)
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


def _agg(pixels: tuple[int, int], shapes: Sequence[Polyline | Polygon | Dot]) -> np.ndarray:
    """``shapes`` drawn in order on a white canvas of ``pixels`` by matplotlib's Agg renderer, as RGB: its paths in
    pixels from the bottom left (Agg's display space), widths and dashes in points."""
    import numpy as np
    from matplotlib.backend_bases import GraphicsContextBase
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.path import Path
    from matplotlib.transforms import IdentityTransform

    renderer = RendererAgg(pixels[0], pixels[1], DPI)
    height = pixels[1]
    identity = IdentityTransform()

    def shown(points: np.ndarray) -> np.ndarray:
        return np.column_stack([points[:, 0] * DPI, height - points[:, 1] * DPI])

    whole = GraphicsContextBase()
    whole.set_linewidth(0)
    renderer.draw_path(whole, Path([[0, 0], [pixels[0], 0], [pixels[0], height], [0, height]]), identity, WHITE_RGBA)
    for shape in shapes:
        gc = GraphicsContextBase()
        gc.set_foreground(tuple(c / 255 for c in shape.ink))
        gc.set_joinstyle("round")
        if shape.clip is not None:
            _clip(gc, shape.clip, height)
        match shape:
            case Polyline(points, _, width, dashes, _, alpha):
                gc.set_linewidth(width)
                gc.set_capstyle("butt" if dashes else "projecting")
                if dashes:
                    gc.set_dashes(0, list(dashes))
                if alpha < 1:
                    gc.set_alpha(alpha)
                renderer.draw_path(gc, Path(shown(points)), identity, None)  # NaN: a gap, as matplotlib's lines
            case Polygon(points, _, alpha):
                gc.set_linewidth(0)
                gc.set_alpha(alpha)
                renderer.draw_path(gc, Path(shown(points), closed=False), identity, (*gc.get_rgb()[:3], alpha))
            case Dot(x, y, points, _, _, alpha):
                gc.set_linewidth(0)
                gc.set_alpha(alpha)
                disc = Path.circle((x * DPI, height - y * DPI), points * DPI / 72 / 2)
                renderer.draw_path(gc, disc, identity, (*gc.get_rgb()[:3], alpha))
    return np.ascontiguousarray(np.asarray(renderer.buffer_rgba())[..., :3])


def _clip(gc: GraphicsContextBase, box: Box, height: int) -> None:
    """Clip ``gc``'s drawing to ``box`` (inches from the top left) in Agg's display space."""
    from matplotlib.transforms import Bbox

    left, top, across, down = box
    bounds = [[left * DPI, height - (top + down) * DPI], [(left + across) * DPI, height - top * DPI]]
    gc.set_clip_rectangle(Bbox(bounds))


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
    turned = mask.transpose(Image.Transpose.ROTATE_90)  # (u, v) -> (v, width - 1 - u): the anchor (-left, -top)
    # to (-top, width - 1 + left), pasted so that it lands on (x, y)
    image.paste(text.ink, (round(x + top), round(y - (right - left) + 1 - left)), turned)


def _drawn_inches(texts: Sequence[str], points: float) -> float:
    """The width of the widest of ``texts`` as Pillow draws it at ``points`` (``_font``), in inches: for a layout of
    texts that ``plain`` draws (a legend's columns), tighter than ``layout._text_inches``'s bound on Agg's width."""
    font = _font(max(points, SMALL_PT))
    return max(font.getlength(text) for text in texts) / DPI


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


@cache
def _lp_em() -> tuple[float, float]:
    """The ascent of "l" and the descent of "p" in em: a line's top and bottom in matplotlib's text layout (its
    least line, "lp"), from which a figure drawn here places a text where matplotlib put it (its baseline that far
    below a top-aligned text's top, or above a bottom-aligned text's bottom)."""
    from PIL import ImageFont

    _, top, _, bottom = ImageFont.truetype(_font_file(), FONT_UNITS).getbbox("lp", anchor="ls")
    return -top / FONT_UNITS, bottom / FONT_UNITS


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
    clips: dict[Box, str] = {}
    for shape in shapes:
        match shape:
            case Polyline() | Polygon() | Dot():
                lines += _svg_path(shape, clips)
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


def _svg_path(shape: Polyline | Polygon | Dot, clips: dict[Box, str]) -> list[str]:
    """A polyline or polygon as a path (a polyline's pieces between its gaps each a subpath of its own), a dot as a
    circle, clipped by a clip path of ``clips`` (numbered in order of first use, defined there)."""
    import numpy as np

    lines, clipped = [], ""
    if shape.clip is not None:
        if shape.clip not in clips:
            clips[shape.clip] = f"clip{len(clips)}"
            left, top, across, down = (_pt(inches) for inches in shape.clip)
            lines.append(f'<clipPath id="{clips[shape.clip]}"><rect x="{left}" y="{top}" width="{across}" '
                         f'height="{down}"/></clipPath>')  # fmt: skip
        clipped = f' clip-path="url(#{clips[shape.clip]})"'
    ink = _hex(shape.ink)
    match shape:
        case Dot(x, y, points, _, _, alpha):
            lines.append(f'<circle cx="{_pt(x)}" cy="{_pt(y)}" r="{_pt(points / 72 / 2)}" style="fill: {ink}'
                         f'{_opacity(alpha)}"{clipped}/>')  # fmt: skip
            return lines
        case Polygon(points, _, alpha):
            style = f"fill: {ink}{_opacity(alpha)}"
            pieces, close = [points], " z"
        case Polyline(points, _, width, dashes, _, alpha):
            style = f"fill: none; stroke: {ink}; stroke-width: {width:g}; stroke-linejoin: round; stroke-linecap: "
            style += "butt; stroke-dasharray: " + ",".join(f"{d:g}" for d in dashes) if dashes else "square"
            style += f"; stroke-opacity: {alpha:g}" if alpha < 1 else ""
            breaks = np.flatnonzero(np.diff(np.isfinite(points).all(axis=1))) + 1  # where a gap starts or ends
            pieces = [piece for piece in np.split(points, breaks) if len(piece) and np.isfinite(piece[0]).all()]
            close = ""  # no piece for a line of no points
    d = " ".join(
        "M " + " L ".join(f"{_pt(x)} {_pt(y)}" for x, y in piece.tolist()) + close for piece in pieces if len(piece)
    )
    lines.append(f'<path d="{d}" style="{style}"{clipped}/>')
    return lines


def _svg_cells(box: tuple[float, float, float, float], colours: np.ndarray) -> list[str]:
    """A rectangle per cell of alpha above 0: each column's x, each row's y and the cells' size written once, each
    cell's ink from its bytes (a 4,068-row table's 16 heatmaps write about 8,000 cells)."""
    left, top, across, down = box
    rows, columns = colours.shape[:2]
    high, wide = down / rows, across / columns
    xs, ys = [_pt(left + j * wide) for j in range(columns)], [_pt(top + i * high) for i in range(rows)]
    size = f'width="{_pt(wide)}" height="{_pt(high)}"'
    return [
        '<g style="shape-rendering: crispEdges">',
        *(
            f'<rect x="{xs[j]}" y="{ys[i]}" {size} style="fill: #{HEX[red]}{HEX[green]}{HEX[blue]}"/>'
            for i, row in enumerate(colours.tolist())
            for j, (red, green, blue, alpha) in enumerate(row)
            if alpha
        ),
        "</g>",
    ]


def _svg_text(text: Text) -> str:
    """A text element whose baseline is where Pillow's anchor puts it: the anchor's line (top, middle or bottom)
    moved to the baseline by the font's ascender and descender; an upward text rotated about its anchor."""
    points = _points(text)
    ascent, descent = _line_em()
    below = {"a": ascent, "m": (ascent - descent) / 2, "s": 0.0, "d": -descent}[text.anchor[1]] * points
    x, y = _pt(text.x), _pt(text.y)
    turn = f' transform="rotate(-90 {x} {y})"' if text.upward else ""
    side = {"l": "start", "m": "middle", "r": "end"}[text.anchor[0]]
    return (
        f"<text style=\"font-size: {points:g}px; font-family: 'DejaVu Sans', sans-serif; text-anchor: {side}; "
        f'fill: {_hex(text.ink)}" x="{x}" y="{_pt(text.y + below / 72)}"{turn}>{escape(text.text)}</text>'
    )


def _opacity(alpha: float) -> str:
    """A fill's opacity as an SVG style's last declaration: none where opaque."""
    return f"; fill-opacity: {alpha:g}" if alpha < 1 else ""


def _pt(inches: float) -> str:
    """Inches as points for the SVG, to a hundredth."""
    return f"{inches * 72:.2f}".rstrip("0").rstrip(".")


def _hex(colour: Sequence[int] | np.ndarray) -> str:
    return "#" + "".join(HEX[int(c)] for c in colour[:3])
