"""What the figures read of the report: its aggregate rows and per-trial curves, numbers read leniently (absent, not
a number or not finite: None, so a figure skips a point rather than fails) and input text made plain figure text."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any


def _number(value: Any) -> float | None:
    """``value`` as a finite float, or None when it is absent, not a number or not finite."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _figure_text(value: Any) -> str:
    """An input string as one line of figure text: a control character (a newline, a tab, U+0001) or a code point XML
    cannot hold (U+FFFE, U+FFFF) written as its escape, so a label is one line in every figure and its SVG stays XML.

    >>> _figure_text("noisy\\x01\\n"), _figure_text("a$b 中")
    ('noisy\\\\x01\\\\n', 'a$b 中')
    """
    text = str(value)
    if text.isprintable():
        return text
    return "".join(repr(char)[1:-1] if _escaped(char) else char for char in text)


def _escaped(char: str) -> bool:
    """Whether ``char`` is written as its escape in figure text (``_figure_text``)."""
    return unicodedata.category(char) == "Cc" or char in "\ufffe\uffff"


def _label(value: Any) -> str:
    """An input string as plain matplotlib figure text (``_figure_text``): ``$`` would otherwise start mathtext."""
    return _figure_text(value).replace("$", r"\$")


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
