"""Drawing a figure into deterministic PNG and SVG bytes.

matplotlib is imported inside the drawing functions so that ``import reports`` stays light. Figures are drawn on an
Agg canvas with matplotlib's default style (a user's matplotlibrc cannot change the bytes) and saved as PNG and as
SVG without the ``Software``/``Creator``/``Date`` metadata and with a fixed SVG id salt, so the same report gives the
same bytes on every run; a series keeps one colour in every panel and figure.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from reports.figures.layout import DPI, FIGSIZE_INCHES, SMALL_PT, TEXT_PT
from reports.figures.outcome import FigureOutcome
from reports.figures.png import png_bytes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


SVG_SALT = "interbias-sv"  # SVG element ids derive from it, not from a random salt


def _drawn(
    filename: str,
    caption: str,
    alt: str,
    draw: Callable[[Figure, Axes], None],
    figsize: tuple[float, float] = FIGSIZE_INCHES,
) -> FigureOutcome:
    """Run ``draw`` on a fresh figure and keep it as PNG and SVG bytes, identical for identical input; no text
    smaller than ``SMALL_PT``.

    The figure is laid out and rendered once on its Agg canvas, whose pixels are the PNG (``savefig`` would lay it
    out in a pass of its own, then render it again); the SVG is drawn from the same layout. The drawing places its
    axes itself (``_place``, ``_lay_out``, ``_heatmap_part``: a fixed layout in inches from measured text, not
    matplotlib's constrained layout, which measures every tick label again and again). Titles stay where
    ``axes.titley`` puts them (just above the axes): matplotlib would otherwise measure every y tick label per title
    per draw to see whether something above the axes pushes the title up.
    """
    import matplotlib
    import matplotlib.style
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.text import Text

    rc = {"svg.hashsalt": SVG_SALT, "svg.fonttype": "none", "font.size": TEXT_PT, "axes.titley": 1.0}
    with matplotlib.style.context("default"), matplotlib.rc_context(rc), warnings.catch_warnings():
        # A name in a script DejaVu Sans lacks (CN-Celeb's Chinese) is drawn as the missing glyph's box in the PNG and
        # as its text in the SVG: not a warning per glyph and figure on the reviewer's terminal.
        warnings.filterwarnings("ignore", r"Glyph \d+ .* missing from font", UserWarning)
        figure = Figure(figsize=figsize, dpi=DPI)
        canvas = FigureCanvasAgg(figure)
        draw(figure, figure.add_subplot())
        for text in figure.findobj(Text):  # the floor, whatever size a drawing asked for
            if text.get_fontsize() < SMALL_PT:
                text.set_fontsize(SMALL_PT)
        canvas.draw()  # the pixels, in the layout the drawing fixed
        svg = io.BytesIO()
        png = png_bytes(np.asarray(canvas.buffer_rgba()), DPI)  # opaque: RGB is lossless
        figure.savefig(svg, format="svg", metadata={"Creator": None, "Date": None})
    return FigureOutcome(filename, caption, png, alt=alt, svg=svg.getvalue())


def import_drawing() -> None:
    """Import the drawing modules (matplotlib's, Pillow's) now: a process that draws some figures in a fork of itself
    and the others in itself (``audit verify --bundle --out``) then imports them once, before the fork, not in both."""
    import matplotlib.backends.backend_agg
    import matplotlib.figure
    import matplotlib.style  # noqa: F401
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
