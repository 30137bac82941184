"""The gender EER gap against SNR per noise type (paper Figure 4), from ``aggregates.gap_vs_snr``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reports.figures.data import LABEL_INCHES, _cut, _first_number, _number, _rows
from reports.figures.layout import FIGSIZE_INCHES, SMALL_PT, _text_inches
from reports.figures.legend import Glyph, Key
from reports.figures.outcome import FigureOutcome
from reports.figures.panel import At, _linear_panel
from reports.figures.plain import KEY_PT, RGB, Box, Dot, Frame, Polygon, Polyline, Shape, _dashes, _marker, _plain, _rgb
from reports.format import format_number

if TYPE_CHECKING:
    import numpy as np

NO_SNR = " (no SNR)"  # the legend entry of a noise type's clean reference, after its name
MARKER_PT, CAP_SIZE, CAP_PT = 4.0, 3.0, 1.0  # errorbar's markersize and capsize, its caps' edge (markeredgewidth)
REFERENCE = (102, 102, 102)  # matplotlib's grey 0.4: a clean reference's dotted line


GAP_KEYS = ("gap_abs_mean", "gap_mean")
GAP_SD_KEYS = ("gap_abs_sd", "gap_sd")


def gap_vs_snr(report: Mapping[str, Any]) -> FigureOutcome:
    """Mean absolute gender gap against SNR, one line per noise type with SD bars; the clean reference (a row
    without an SNR, or the rows' ``clean_gap_abs_mean``) is drawn as a horizontal dotted line. Drawn as plain shapes
    (``panel._linear_panel``) as matplotlib drew its errorbar plot (its layout, autoscaled limits, AutoLocator ticks,
    lines, markers, bars with caps and legend), without its artists, text layout and two draws: 0.07 s CPU of the
    4,068-row table's audit."""
    filename, caption = "gap_vs_snr.png", "Gender EER gap vs SNR"
    rows = _rows(report, "gap_vs_snr")
    several = len({(row.get("experiment"), row.get("corpus")) for row in rows}) > 1
    series: dict[str, list[tuple[float, float, float, float]]] = {}  # snr, gap, lower and upper bar
    references: dict[str, float] = {}
    for row in rows:
        prefix = f"{row.get('experiment', '')} " if several else ""
        gap = _first_number(row, GAP_KEYS)
        name = prefix + str(row.get("noise", row.get("condition", "?")))
        snr = _number(row.get("snr_db"))
        clean = _number(row.get("clean_gap_abs_mean"))
        if clean is not None:
            references[f"{prefix}clean"] = clean
        if gap is None:
            continue
        if snr is None:
            references[name] = gap
        else:
            sd = _first_number(row, GAP_SD_KEYS)
            upper = math.nan if sd is None else sd
            lower = min(upper, gap) if GAP_KEYS[0] in row else upper  # an absolute gap's bar stops at zero
            series.setdefault(name, []).append((snr, gap, lower, upper))
    if not series:
        return FigureOutcome(filename, caption, None, "no gender gap with an SNR in the report")

    names = sorted(series)
    inks = dict(zip(names, _cycle(len(names)), strict=True))
    room = LABEL_INCHES - _text_inches([NO_SNR], SMALL_PT)
    keys: list[Key] = [
        (f"{_cut(name, room)}{NO_SNR}", REFERENCE, 1.0, _dashes(":", 1.0), "") for name in sorted(references)
    ]
    keys += [(_cut(name, LABEL_INCHES), inks[name], KEY_PT, (), _errorbar_key(inks[name])) for name in names]

    def draw(box: Box, at: At) -> tuple[list[Shape], list[Polyline | Polygon | Dot | Frame]]:
        """As matplotlib layered them: each series' bars then caps, the references (all at zorder 2), then each
        series' line and markers (2.1)."""
        import numpy as np

        bars: list[Shape] = []
        lines: list[Shape] = []
        obstacles: list[Polyline | Polygon | Dot | Frame] = []
        for name in names:
            rows, ink = sorted(series[name]), inks[name]
            caps = [], []
            for snr, gap, lower, upper in rows:
                ends = [at(snr, gap - lower), at(snr, gap + upper)]  # NaN where the row has no SD
                for cap, (x, y) in zip(caps, ends, strict=True):
                    cap.append((x, y))
                if all(math.isfinite(value) for value in (lower, upper)):
                    bars += _bar(ends, ink, box)
            line = np.array([at(snr, gap) for snr, gap, _, _ in rows])
            lines.append(Polyline(line, ink, KEY_PT, (), box))
            lines += [_marker("o", x, y, MARKER_PT, ink, clip=box) for x, y in line.tolist()]
            obstacles += [lines[-1 - len(rows)], *(Polyline(np.array(cap), ink, 0.0) for cap in caps)]
        left, _, across, _ = box
        for name in sorted(references):
            _, y = at(0.0, references[name])
            reference = Polyline(np.array([[left, y], [left + across, y]]), REFERENCE, 1.0, _dashes(":", 1.0), box)
            bars.append(reference)
            obstacles.append(reference)
        return bars + lines, obstacles

    snrs = [snr for rows in series.values() for snr, _, _, _ in rows]
    gaps = [
        value for rows in series.values() for _, gap, lower, upper in rows for value in (gap - lower, gap, gap + upper)
    ]
    data = (
        (snrs, []),
        ([value for value in gaps if math.isfinite(value)], [references[name] for name in sorted(references)]),
    )
    labels = (caption, "SNR (dB)", "mean absolute gender EER gap (± SD)")
    alt = "Gender gap by SNR: " + "; ".join(
        f"{name}: "
        + ", ".join(f"{format_number(snr)} dB {format_number(gap)}" for snr, gap, _, _ in sorted(series[name]))
        for name in sorted(series)
    )
    return _plain(filename, caption, alt, FIGSIZE_INCHES, _linear_panel(FIGSIZE_INCHES, data, labels, keys, draw))


def _cycle(n: int) -> list[RGB]:
    """The colours of ``n`` lines in turn as matplotlib's default property cycle gives them: tab10's, repeated."""
    import matplotlib

    return [_rgb(matplotlib.colormaps["tab10"](i % 10)) for i in range(n)]


def _bar(ends: Sequence[tuple[float, float]], ink: RGB, clip: Box | None = None) -> list[Shape]:
    """An error bar between ``ends`` (x, y inches, one above the other) with its caps, as matplotlib's errorbar draws
    them: the bar ``KEY_PT`` wide with butt ends (a line collection's), each cap its ``_`` marker twice the cap size
    long and ``CAP_PT`` thick, as rectangles."""
    (x, top), (_, foot) = ends
    bar = _rectangle(x - KEY_PT / 144, min(top, foot), x + KEY_PT / 144, max(top, foot))
    caps = [_rectangle(x - CAP_SIZE / 72, y - CAP_PT / 144, x + CAP_SIZE / 72, y + CAP_PT / 144) for _, y in ends]
    return [Polygon(outline, ink, clip=clip) for outline in (bar, *caps)]


def _rectangle(left: float, top: float, right: float, bottom: float) -> np.ndarray:
    import numpy as np

    return np.array([[left, top], [right, top], [right, bottom], [left, bottom]])


def _errorbar_key(ink: RGB) -> Glyph:
    """A series' legend glyph as matplotlib's errorbar handler draws it: a bar half an em up and down from the key's
    middle with its caps, and the marker over it."""

    def glyph(x: float, y: float) -> list[Shape]:
        reach = 0.5 * SMALL_PT / 72
        return [*_bar([(x, y - reach), (x, y + reach)], ink), _marker("o", x, y, MARKER_PT, ink)]

    return glyph
