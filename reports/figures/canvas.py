"""What every figure draws with: its series' colours, and the drawing modules imported ahead of a fork.

The figures are drawn as plain shapes (``plain``): curves, bands and markers by matplotlib's Agg path renderer used
directly, frames, ticks and texts by Pillow, the SVG written as text; no figure uses matplotlib's Figure, Axes or
artists. matplotlib is imported inside the drawing functions so that ``import reports`` stays light; a series keeps
one colour in every panel and figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


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
