"""The one JSON-safe walk: a copy of a value that strict JSON can hold (the report's rule, used by audit and reports).

NaN, infinities and missing values (``pandas.NA``) become null (JSON has no such numbers); numpy scalars and arrays
become Python numbers and lists; tuples become lists; keys become strings. Anything else is refused (a TypeError
naming it), never guessed at.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

__all__ = ["json_safe"]

_PLAIN = (str, int, bool, type(None))


def json_safe(value: Any) -> Any:
    """``value`` as strict JSON can hold it.

    Exact type tests come first: a report holds tens of thousands of plain values and this runs on each.

    Example:
        >>> import numpy as np
        >>> json_safe({"eer": float("nan"), "n": np.int64(3), "v": np.array([0.5, np.inf]), 1: ("x",)})
        {'eer': None, 'n': 3, 'v': [0.5, None], '1': ['x']}
    """
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is dict:
        return {str(k): json_safe(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [json_safe(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str | int):
        return value
    if value is pd.NA:
        return None
    if hasattr(value, "tolist"):  # numpy scalar or array
        return json_safe(value.tolist())
    raise TypeError(f"value of type {type(value).__name__} cannot be written as JSON: {value!r}")
