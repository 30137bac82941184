"""The one JSON-safe walk: a copy of a value that strict JSON can hold (the report's rule, used by audit and reports);
and the keyed table, the report's shape for many rows of one kind (column names once, one list a row).

NaN, infinities and missing values (``pandas.NA``) become null (JSON has no such numbers); numpy scalars and arrays
become Python numbers and lists; tuples become lists; keys become strings. Anything else is refused (a TypeError
naming it), never guessed at.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from typing import Any

__all__ = ["json_safe", "keyed_rows", "keyed_table"]

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
    if _is_pandas_na(value):
        return None
    if hasattr(value, "tolist"):  # numpy scalar or array
        return json_safe(value.tolist())
    raise TypeError(f"value of type {type(value).__name__} cannot be written as JSON: {value!r}")


def _is_pandas_na(value: Any) -> bool:
    """``value`` is ``pandas.NA``: asked of pandas only where it is imported (nothing else can hold its NA), so that
    this walk imports no pandas for a caller that has none (the report's figure drawer)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and value is pandas.NA


def keyed_table(rows: Mapping[str, Mapping[str, Any]], key: str) -> dict[str, Any]:
    """Rows keyed by name as one table: ``columns`` once (``key``, then every field in first-seen order) and one list
    a row (null where a row lacks a field), instead of an object a row that repeats every field name (a paper-scale
    report holds tens of thousands of such rows).

    Example:
        >>> keyed_table({"s1": {"eer": 0.1}, "s2": {"eer": 0.2, "note": "x"}}, "speaker")
        {'columns': ['speaker', 'eer', 'note'], 'rows': [['s1', 0.1, None], ['s2', 0.2, 'x']]}
    """
    fields = list(dict.fromkeys(field for row in rows.values() for field in row))
    return {"columns": [key, *fields], "rows": [[name, *(row.get(f) for f in fields)] for name, row in rows.items()]}


def keyed_rows(table: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The rows of a ``keyed_table`` by their first cell, each an object of its other cells but the null ones (a
    null cell and an absent field read alike: the table does not tell them apart).

    Example:
        >>> keyed_rows({"columns": ["speaker", "eer", "note"], "rows": [["s1", 0.1, None], ["s2", 0.2, "x"]]})
        {'s1': {'eer': 0.1}, 's2': {'eer': 0.2, 'note': 'x'}}
    """
    fields = table["columns"][1:]
    return {
        row[0]: {field: value for field, value in zip(fields, row[1:], strict=True) if value is not None}
        for row in table["rows"]
    }
