"""What the figures read of the report: its aggregate rows and per-trial curves, numbers read leniently (absent, not
a number or not finite: None, so a figure skips a point rather than fails) and input text made plain figure text."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from reports.figures.layout import DPI, SMALL_PT, _advance, _text_inches
from reports.format import visible_text

LABEL_INCHES = 2.4  # a legend entry at most (``_label``): two to a figure's width (a title: its panel's width)


def _number(value: Any) -> float | None:
    """``value`` as a finite float, or None when it is absent, not a number or not finite."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _label(value: Any, inches: float | None = None, points: float = SMALL_PT) -> str:
    """An input string as one line of plain matplotlib figure text (``visible_text``): ``$`` would otherwise start
    mathtext. ``inches``: the widest it may be drawn at ``points`` (``_text_inches``), else it is cut, ``...`` last,
    so that a long name (a legend entry, a panel's title) stays on its figure and leaves the others there.

    >>> _label("m$1"), _label("encoder-" + "x" * 192, inches=1.0), _label("m1", inches=1.0)
    ('m\\\\$1', 'encoder-xxxx...', 'm1')
    """
    return _cut(value, inches, points).replace("$", r"\$")


def _cut(value: Any, inches: float | None = None, points: float = SMALL_PT) -> str:
    """An input string as one line of figure text (``visible_text``) cut as ``_label`` cuts it, ``$`` as itself: the
    text of a figure drawn without matplotlib's text machinery (``plain``), which has no mathtext.

    >>> _cut("m$1"), _cut("encoder-" + "x" * 192, inches=1.0)
    ('m$1', 'encoder-xxxx...')
    """
    text = visible_text(str(value))
    if inches is not None and _text_inches([text], points) > inches:
        room = inches * DPI - 2 - sum(_advance(".", points) + 0.5 for _ in range(3))  # _text_inches' sum, reversed
        for end, char in enumerate(text):
            room -= _advance(char, points) + 0.5
            if room < 0:
                return text[:end] + "..."
    return text


def _first_number(row: Mapping[str, Any], keys: Sequence[str]) -> float | None:
    """The first of ``keys`` that ``row`` holds, as a finite float (the audit writes ``gap_abs_mean`` where
    the report contract says ``gap_mean``; both are read)."""
    for key in keys:
        if key in row:
            return _number(row[key])
    return None


def _rows(report: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    aggregates = report.get("aggregates") or {}
    return [row for row in aggregates.get(key) or [] if isinstance(row, Mapping)]


def _curves(report: Mapping[str, Any], figure: str) -> list[Mapping[str, Any]]:
    """The report's per-trial curves that ``figure`` (det or scores) draws (both when a curve does not say)."""
    return [
        curve
        for curve in report.get("curves") or []
        if isinstance(curve, Mapping) and figure in (curve.get("figures") or ("det", "scores"))
    ]
