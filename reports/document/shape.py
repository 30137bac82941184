"""The report dict's documented shape, read leniently where a key is absent and strictly where it holds the wrong
kind of value: a ``ReportShapeError`` names where (a bug in the report's producer, not bad user input)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from schemas import Error


class ReportShapeError(Error, ValueError):
    """The report dict does not have the documented shape (a bug in its producer, not bad user input)."""


def _entries(value: Any, where: str) -> list[Mapping[str, Any]]:
    """``value`` as a list of objects; anything else is a shape error naming where it was found."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ReportShapeError(f"report {where}: expected a list of objects, got {type(value).__name__}")
    for index, entry in enumerate(value):
        if not isinstance(entry, Mapping):
            raise ReportShapeError(f"report {where}[{index}]: expected an object, got {type(entry).__name__}")
    return list(value)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ReportShapeError(f"report {where}: expected an object, got {type(value).__name__}")
    return value


def as_rows(value: Any) -> list[Mapping[str, Any]] | None:
    """``value`` as table rows when it is one: a non-empty list of objects, or a non-empty object of objects
    (``{"run_id": {"present": 3, "total": 4}}`` becomes a row ``{"name": "run_id", "present": 3, ...}``)."""
    if isinstance(value, Mapping):
        if value and all(isinstance(item, Mapping) for item in value.values()):
            return [{"name": str(key), **item} for key, item in value.items()]
        return None
    is_list = isinstance(value, Sequence) and not isinstance(value, str)
    if is_list and value and all(isinstance(row, Mapping) for row in value):
        return list(value)
    return None
