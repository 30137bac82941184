"""How counts and numbers are spelled in prose, so the audit's lines and the rendered report agree.

One pluraliser (:func:`count`) and one number formatter (:func:`format_number`): integers as they are, other
numbers with 4 significant digits (``0.1235``, ``-157.6``, ``5e-05``; the statistics' EER intervals with 3 fixed
decimals), the exact values staying in report.json. A magnitude below ``1e-12`` is floating-point residue of sums
and differences of EERs (an IE of ``9.81e-18``) and prints as ``0``; an absent value prints as ``n/a`` and NaN as
``NaN``, so the two stay distinguishable.
"""

from __future__ import annotations

import math

__all__ = [
    "MISSING",
    "RESIDUE",
    "SIGNIFICANT_DIGITS",
    "count",
    "format_number",
]

SIGNIFICANT_DIGITS = 4
RESIDUE = 1e-12  # smaller magnitudes are rounding residue, printed as 0
MISSING = "n/a"  # an absent value (None)


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 row``, ``2 rows``: a count with its noun in the right number.

    >>> count(1, "row"), count(3, "row"), count(2, "family", "families")
    ('1 row', '3 rows', '2 families')
    """
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def format_number(value: float | None, decimals: int | None = None) -> str:
    """A number with 4 significant digits, or with ``decimals`` fixed decimals (the statistics' EER intervals,
    which share one scale and stay narrow in a table); ``NaN``/``inf`` spelled out; None as ``n/a``; rounding
    residue as ``0`` with significant digits.

    >>> format_number(0.123456), format_number(9.81e-18), format_number(None), format_number(float("nan"))
    ('0.1235', '0', 'n/a', 'NaN')
    >>> format_number(0.007935, decimals=3), format_number(-0.28451, decimals=3)
    ('0.008', '-0.285')
    """
    if value is None:
        return MISSING
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if decimals is not None:
        return f"{value:.{decimals}f}"
    if abs(value) < RESIDUE:
        return "0"
    return f"{value:.{SIGNIFICANT_DIGITS}g}"
