"""The figures' fixed layout: their sizes and text sizes, text widths measured from the font's glyph advances, and
panels, ticks and legends placed in inches from those widths, where matplotlib placed its axes, chose its ticks and
put its legends when it drew the figures (they are drawn as plain shapes now, ``plain``).

Figures are at most ``FIGSIZE_INCHES`` wide, in at most two columns of panels, with no text below ``SMALL_PT``, so
that scaled down to a phone's width their text stays legible.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from functools import cache

FIGSIZE_INCHES = (6.4, 4.4)  # narrow enough that text at SMALL_PT stays legible scaled down to a phone's width
DPI = 100
SMALL_PT, TEXT_PT = 8, 9  # the smallest text of any figure (ticks, legends, cell values), and the rest of its text
CHAR_INCHES = 0.62 * TEXT_PT / 72  # the mean width of a character at TEXT_PT (DejaVu Sans: about 0.6 em)
LEGEND_INSIDE_MAX = 6
LEGEND_COLUMN_ROWS = 16
MAX_PANELS = 9
TICK_INCHES = 7 / 72  # a tick (3.5 pt) and the pad between it and its label (3.5 pt)
LINE_EM = 1.17  # a line of DejaVu Sans (its ascent and descent), in em
TITLE_GAP_INCHES, MARGIN_INCHES = 0.08, 0.06
LABEL_PAD_PT = 4.0  # between tick labels and an axis label (matplotlib's axes.labelpad)
TITLE_PAD_PT = 6.0  # between an axes and its title (axes.titlepad)


def _text_inches(texts: Sequence[str], points: float) -> float:
    """The width of the widest of ``texts`` at ``points`` in inches, from the font's glyph advances (``_advance``)
    plus half a pixel per character (the most that Agg's hinting rounds an advance up by) and two (a last glyph's
    ink past its advance): at least the width Agg draws, without laying each text out (matplotlib's layout of a
    text costs about a millisecond)."""
    return max(sum(_advance(char, points) + 0.5 for char in str(text)) + 2 for text in texts) / DPI


@cache
def _advance(char: str, points: float) -> float:
    """The advance of ``char`` at ``points`` in the figures' font, in pixels at ``DPI`` (kerning left out: it only
    narrows a text); a character the font lacks (a CJK one in DejaVu Sans) has its missing glyph's, the box that Agg
    and Pillow draw for it."""
    from matplotlib.font_manager import get_font

    font = get_font(_font_file())
    font.set_size(points, DPI)
    return font.load_glyph(font.get_char_index(ord(char))).linearHoriAdvance / 65536


def _text_block(lines: Sequence[str], points: float) -> tuple[list[float], float, float]:
    """Where matplotlib's text layout (``Text._get_layout``, its "normal" line spacing) puts the baselines of
    ``lines`` (one text of several lines) at ``points``, in inches down from the block's top, and the block's height
    and width:
    each line's ascent and descent as Agg measures its ink (hinted, ``RendererAgg.get_text_width_height_descent``),
    no less than the font's typographic ascender and descender, each grown by half its line gap where there are
    several lines; measured without laying out a text artist."""
    from matplotlib.backends.backend_agg import get_hinting_flag
    from matplotlib.font_manager import get_font

    font = get_font(_font_file())
    font.set_size(points, DPI)
    table = font.get_sfnt_table("OS/2")
    scale = points / 72 / font.get_sfnt_table("head")["unitsPerEm"]  # font units to inches
    least = (table["sTypoAscender"] * scale, -table["sTypoDescender"] * scale)
    gap = table["sTypoLineGap"] * scale if len(lines) > 1 else 0.0
    baselines, y, width = [], 0.0, 0.0
    for line in lines:
        font.set_text(line, 0.0, flags=get_hinting_flag())
        wide, high = (size / 64 / DPI for size in font.get_width_height()) if line else (0.0, 0.0)
        low = font.get_descent() / 64 / DPI if line else 0.0
        y += max(high - low, least[0]) + gap / 2
        baselines.append(y)
        y += max(low, least[1]) + gap / 2
        width = max(width, wide)
    return baselines, y, width


def _font_file() -> str:
    """The figures' font: DejaVu Sans as matplotlib ships it, the font of its default style whatever a user's
    matplotlibrc says, and the one ``plain`` draws with."""
    import matplotlib

    return os.path.join(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSans.ttf")


def _columns(n: int) -> int:
    return min(2, n)


def _panel_size(n: int, row_inches: float = 2.6) -> tuple[float, float]:
    return (FIGSIZE_INCHES[0], max(FIGSIZE_INCHES[1], row_inches * math.ceil(n / _columns(n))))


def _boxes(
    n: int,
    size: tuple[float, float],
    margins: tuple[float, float, float, float],
    gaps: tuple[float, float],
) -> list[tuple[float, float, float, float]]:
    """``n`` panels in rows of ``_columns(n)``, for a figure drawn as plain shapes (``plain``): each panel's box in
    inches (left, top, width, height) from the figure's top left, inside ``margins`` (left, right, top and bottom of
    the grid) with ``gaps`` (between columns and between rows)."""
    left, right, top, bottom = margins
    columns = _columns(n)
    rows = math.ceil(n / columns)
    across = (size[0] - left - right - (columns - 1) * gaps[0]) / columns
    down = (size[1] - top - bottom - (rows - 1) * gaps[1]) / rows
    return [
        (left + column * (across + gaps[0]), top + row * (down + gaps[1]), across, down)
        for row, column in (divmod(i, columns) for i in range(n))
    ]


def _frame_inches(labels: Sequence[str], points: float) -> float:
    """The room left of a panel that ``plain._axes_shapes`` labels: the axis label's line, its pad, the tick labels,
    the tick."""
    return (LINE_EM * points + LABEL_PAD_PT + TICK_INCHES * 72) / 72 + (_text_inches(labels, points) if labels else 0)


def _grid_margins(
    ys: Sequence[Sequence[str]],
    xs: Sequence[Sequence[str]],
    columns: int,
    ticks_pt: float = SMALL_PT,
    label_pt: float = SMALL_PT,
    title_lines: float = 1.0,
    legend_inches: float = 0.0,
    right: float = 0.1,
) -> tuple[tuple[float, float, float, float], tuple[float, float]]:
    """The margins (left, right, top, bottom) and gaps (between columns, between rows) in inches of a grid of panels
    in rows of ``columns`` whose y tick labels are ``ys`` and x tick labels ``xs`` (a list a panel) at ``ticks_pt``:
    room for them, for axis labels at ``label_pt``, titles of ``title_lines`` lines at ``label_pt``, a figure legend
    of ``legend_inches`` below and ``right`` inches right (text that may run past a panel's edge). The layout
    matplotlib's axes had, for a plain figure's panels (``_boxes``)."""
    below = (TICK_INCHES * 72 + LINE_EM * ticks_pt + LABEL_PAD_PT + LINE_EM * label_pt) / 72
    above = (LINE_EM * label_pt * title_lines + TITLE_PAD_PT) / 72
    lefts = [_frame_inches(shown, ticks_pt) + LINE_EM * (label_pt - ticks_pt) / 72 for shown in ys]
    overhangs = [_text_inches(shown, ticks_pt) / 2 if shown else 0.0 for shown in xs]  # a last x label's half
    ends = [max(right, overhang) for i, overhang in enumerate(overhangs) if i % columns == columns - 1]
    margins = (max(lefts[::columns]) + MARGIN_INCHES, max(ends, default=right) + MARGIN_INCHES,
               above + MARGIN_INCHES, below + legend_inches + 0.1)  # fmt: skip
    inner = [left + overhangs[i - 1] for i, left in enumerate(lefts) if i % columns]
    return margins, (max(inner, default=0.0) + 0.2, below + above + 0.1)


def _autoscaled(values: Sequence[float], margin: float = 0.05) -> tuple[float, float]:
    """The view limits matplotlib's autoscaling gives an axis whose data span ``values``: their range widened by
    ``margin`` of it each side (axes.xmargin, axes.ymargin); a single value widened by a twentieth of itself first
    (0.05 either side of 0), no value at all the range -0.05 to 0.05 (its locator's ``nonsingular``).

    >>> [tuple(round(limit, 3) for limit in _autoscaled(values)) for values in ([0.0, 0.2], [0.0], [2.0], [])]
    [(-0.01, 0.21), (-0.055, 0.055), (1.89, 2.11), (-0.055, 0.055)]
    """
    low, high = (min(values), max(values)) if values else (0.0, 0.0)
    if high - low <= max(abs(low), abs(high)) * 1e-15:
        low, high = (-0.05, 0.05) if low == high == 0 else (low - 0.05 * abs(low), high + 0.05 * abs(high))
    delta = (high - low) * margin
    return low - delta, high + delta


def _autoscaled_past(values: Sequence[float], lines: Sequence[float]) -> tuple[float, float]:
    """The view limits of an axis autoscaled to ``values`` after ``axhline``/``axvline`` at ``lines`` in turn: a line
    within the limits so far leaves them (matplotlib asks for no new autoscaling), one outside them has them
    autoscaled again over the values and all the lines so far (each line's value joins the data limits).

    >>> [tuple(round(limit, 4) for limit in _autoscaled_past([0.06, 0.36], [line])) for line in (0.05, 0.04)]
    [(0.045, 0.375), (0.024, 0.376)]
    """
    seen = list(values)
    limits = _autoscaled(seen)
    for line in lines:
        seen.append(line)
        if not limits[0] <= line <= limits[1]:
            limits = _autoscaled(seen)
    return limits


def _tick_bins(inches: float, points: float, per: float) -> int:
    """The most intervals between ticks matplotlib's AutoLocator puts on an axis ``inches`` long whose tick labels
    are at ``points``: one per ``per`` label sizes (3 along an x axis, 2 along a y axis), one to nine."""
    return max(1, min(9, math.floor(inches * 72 / (per * points))))


def _nice_ticks(low: float, high: float, bins: int) -> tuple[list[float], list[str]]:
    """The ticks from ``low`` to ``high`` that matplotlib's AutoLocator chooses for at most ``bins`` intervals (a step
    of 1, 2, 2.5 or 5 times a power of ten, the smallest that fits, or a smaller one where it would leave a single
    tick), and their labels with the decimals the ticks need, a minus sign for a negative one (as its ScalarFormatter
    writes them, without its offset or exponent: the figures' scales need neither). Ticks of a million or more, or of
    less than 1e-5, are written with an exponent, as many digits as tell them apart (a hostile score file's 1e300
    would otherwise be a label of 300 digits, wider than its figure); a range of one value, or one past the largest
    float, gets its ends.

    >>> _nice_ticks(0.0, 0.21, 8)
    ([0.0, 0.05, 0.1, 0.15000000000000002, 0.2], ['0.00', '0.05', '0.10', '0.15', '0.20'])
    >>> [label.replace(chr(0x2212), "minus ") for label in _nice_ticks(-0.3, 0.2, 5)[1]]
    ['minus 0.3', 'minus 0.2', 'minus 0.1', '0.0', '0.1', '0.2']
    >>> _nice_ticks(0.0, 1e300, 2)[1], _nice_ticks(0.25, 0.25, 4)[1], _nice_ticks(-1.7e308, 1.7e308, 4)[1][1]
    (['0', '5e+299', '1e+300'], ['0.25'], '1.7e+308')
    >>> _nice_ticks(-2e-301, 2e-301, 4)[1]
    ['\u22122e-301', '\u22121e-301', '0', '1e-301', '2e-301']
    """
    span = high - low
    if not (math.isfinite(span) and span > 0):
        ends = sorted({low, high})
        return ends, [_exponent_label(tick, 3) for tick in ends]
    raw = span / bins
    scale = 10.0 ** math.floor(math.log10(raw))
    steps = [multiple * scale for multiple in (0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10, 20)]
    fits = next(i for i, step in enumerate(steps) if step >= raw)
    for step in steps[fits::-1]:
        base = (low // step) * step
        first, rest = divmod(low - base, step)
        first += abs(rest / step - 1) < 1e-10  # matplotlib's _Edge_integer.le
        last, rest = divmod(high - base, step)
        last += abs(rest / step) >= 1e-10  # and .ge
        ticks = [k * step + base for k in range(int(first), int(last) + 1)]
        if sum(low <= tick <= high for tick in ticks) >= 2:
            break
    slack = 1e-10 * span
    ticks = [tick for tick in ticks if low - slack <= tick <= high + slack]
    ticks = [0.0 if abs(tick) < 1e-8 * step else tick for tick in ticks]  # as its formatter writes a rounding error
    spread = (max(ticks) - min(ticks)) or max(abs(tick) for tick in ticks) or 1.0
    magnitude = math.floor(math.log10(spread))
    decimals = max(0, 3 - magnitude)
    while decimals >= 0 and max(abs(tick - round(tick, decimals)) for tick in ticks) < 1e-3 * 10.0**magnitude:
        decimals -= 1
    largest = max(abs(tick) for tick in ticks)
    if largest >= 1e6 or 0 < largest < 1e-5:
        digits = min(17, max(1, math.floor(math.log10(largest)) - math.floor(math.log10(step)) + 1))
        return ticks, [_exponent_label(tick, digits) for tick in ticks]
    return ticks, [f"{tick:.{decimals + 1}f}".replace("-", "\u2212") for tick in ticks]


def _exponent_label(tick: float, digits: int) -> str:
    """A tick written in ``digits`` significant digits, with an exponent where it needs one, a minus sign for a
    negative one."""
    return f"{tick:.{digits}g}".replace("-", "\u2212").replace("e\u2212", "e-")


def _legend_beside(labels: Sequence[str]) -> tuple[int, float]:
    """A legend of ``labels`` beside the axes: its columns (of at most 16 entries) and the inches it takes right of
    them, its keys, pads and a gap included."""
    columns = math.ceil(len(labels) / LEGEND_COLUMN_ROWS)
    column = _text_inches(labels, SMALL_PT) + (2.0 + 0.8) * SMALL_PT / 72
    return columns, columns * column + ((columns - 1) * 2.0 + 2 * 0.4 + 0.5 + 1.0) * SMALL_PT / 72


def _legend_columns(labels: Sequence[str]) -> int:
    """As many legend columns for ``labels`` as fit across ``FIGSIZE_INCHES``'s width, each as wide as the longest
    label at ``SMALL_PT`` beside its key."""
    longest = max(len(label) for label in labels)
    return max(1, min(len(labels), int(FIGSIZE_INCHES[0] // (CHAR_INCHES * SMALL_PT / TEXT_PT * longest + 0.6))))


def _legend_inches(rows: int, points: float = SMALL_PT) -> float:
    """The height of a legend of ``rows`` rows of text at ``points`` with matplotlib's default paddings (0.4 em
    border, 0.5 em between rows, 0.5 em from the figure's edge), in inches."""
    return points * (rows * LINE_EM + (rows - 1) * 0.5 + 2 * 0.4 + 0.5) / 72
