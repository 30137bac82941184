"""Canonical JSON: one byte string per value, so that a digest or a signature over it is reproducible.

Rules: object keys sorted (by code point), no insignificant whitespace, UTF-8 without escaping non-ASCII text.
Only str, int, bool, None, lists/tuples and dicts with str keys are written as themselves.

Floats are the one choice to make. Their decimal text differs between writers (``1e-05`` vs ``0.00001``,
``1.0`` vs ``1``), so a reader that re-serialises a parsed float may not reproduce the signed bytes. We
therefore write every finite float as a JSON *string* holding Python's shortest round-trip ``repr`` (``0.01``
-> ``"0.01"``): ``float(text)`` gives back the identical float, and re-serialising the parsed document gives
identical bytes. NaN and infinities are refused. Anything else (sets, bytes, objects) is refused too, rather
than guessed at.
"""

from __future__ import annotations

import json
import math
import numbers
from typing import Any

from schemas import Error

__all__ = [
    "CanonicalJSONError",
    "canonical_json",
]


class CanonicalJSONError(Error, ValueError):
    """A value that has no canonical JSON form (NaN, a non-str key, an unsupported type)."""


def _canonical_value(value: Any, where: str) -> Any:
    """Return ``value`` with floats turned into strings, checking every node on the way."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        number = float(value)
        if not math.isfinite(number):
            raise CanonicalJSONError(f"{where}: {number!r} has no canonical JSON form")
        return repr(number)
    if isinstance(value, dict):
        result = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalJSONError(f"{where}: object key {key!r} is not a string")
            result[key] = _canonical_value(item, f"{where}.{key}")
        return result
    if isinstance(value, list | tuple):
        return [_canonical_value(item, f"{where}[{index}]") for index, item in enumerate(value)]
    raise CanonicalJSONError(f"{where}: {type(value).__name__} has no canonical JSON form")


def canonical_json(value: Any) -> bytes:
    """The canonical UTF-8 JSON bytes of ``value`` (rules in the module docstring)."""
    return json.dumps(
        _canonical_value(value, "$"),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    ).encode("utf-8")
