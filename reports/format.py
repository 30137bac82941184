"""How every value of the report is printed, so Markdown, HTML and figure labels agree.

One rule for all numbers: integers as they are, other numbers with 4 significant digits (``0.1235``, ``-157.6``,
``5e-05``), the exact values staying in report.json. A magnitude below ``1e-12`` is floating-point residue of
sums and differences of EERs (an IE of ``9.81e-18``) and prints as ``0``. Objects print as ``key: value`` pairs,
never as raw JSON. Long lists are cut with a count of what was left out, so a flag over 4,000 records stays
readable.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

SIGNIFICANT_DIGITS = 4
RESIDUE = 1e-12  # smaller magnitudes are rounding residue, printed as 0
MAX_LISTED = 10  # record ids or list items printed before "... and N more"
MISSING = "n/a"  # an absent value (None); NaN prints as "NaN" so the two stay distinguishable


def format_number(value: float) -> str:
    """A float with 4 significant digits; ``NaN``/``inf`` spelled out; rounding residue as ``0``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if abs(value) < RESIDUE:
        return "0"
    return f"{value:.{SIGNIFICANT_DIGITS}g}"


def format_list(items: Sequence[Any], limit: int = MAX_LISTED) -> str:
    """The first ``limit`` items, comma-separated, then how many more there are; ``(none)`` when empty."""
    if not items:
        return "(none)"
    shown = ", ".join(format_value(item) for item in items[:limit])
    hidden = len(items) - limit
    return f"{shown}, ... and {hidden} more" if hidden > 0 else shown


def format_value(value: Any) -> str:
    """One cell or inline value as text (not yet escaped for Markdown or HTML)."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_number(value)
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "; ".join(f"{key}: {format_value(item)}" for key, item in value.items()) or "(none)"
    if isinstance(value, list | tuple):
        return format_list(value)
    if hasattr(value, "item"):  # numpy scalar: print it as the Python number it holds
        return format_value(value.item())
    return str(value)
