"""Any JSON value of the report as blocks: rows as a table of whatever columns they have (cut after
``MAX_TABLE_ROWS``, folded beyond ``FOLD_ROWS``, stacked when wide and short), a mapping as a key/value table, a
list as bullets; values with their intervals as ``value [low, high]``."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from reports.blocks import Block, BulletList, Details, Paragraph, Table
from reports.document.shape import as_rows
from reports.format import format_list, format_value
from schemas import count

MAX_TABLE_ROWS = 1000  # longer tables are cut, with a line saying how many rows are only in report.json
FOLD_ROWS = 8  # a longer table outside the headline is folded under a line saying what it holds
STACKED_ROWS, STACKED_COLUMNS = 3, 10  # a table of at most 3 rows and more than 10 columns is shown stacked


def _is_numeric(values: Sequence[Any]) -> bool:
    present = [value for value in values if value is not None]
    return bool(present) and all(isinstance(value, numbers.Number) and not isinstance(value, bool) for value in present)


def table_blocks(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    limit: int = MAX_TABLE_ROWS,
    fold: bool = True,
    n_rows: int | None = None,
) -> list[Block]:
    """A table of raw values (formatted here), cut after ``limit`` rows with a line counting the rest; a wide table
    of few rows is stacked (one line per column), so that no column is cut on a screen; with ``fold`` (everywhere
    but the headline) a table of more than ``FOLD_ROWS`` rows is folded under a line giving its rows and columns.
    ``n_rows``: the table's rows when ``rows`` holds only its first (report.json has the others' values elsewhere)."""
    n_rows = len(rows) if n_rows is None else n_rows
    folded = fold and n_rows > FOLD_ROWS
    if 0 < len(rows) == n_rows <= STACKED_ROWS and len(columns) > STACKED_COLUMNS:
        named = [str(row[0]) if row else "" for row in rows]
        labels = named if len(set(named)) == len(named) else [f"row {n}" for n in range(1, len(rows) + 1)]
        columns, rows = (
            ("column", *labels),
            [[c, *(r[i] if i < len(r) else None for r in rows)] for i, c in enumerate(columns)],
        )
    shown = rows[:limit]
    numeric = tuple(_is_numeric([row[i] for row in shown if i < len(row)]) for i in range(len(columns)))
    cells = tuple(tuple(format_value(row[i]) if i < len(row) else "" for i in range(len(columns))) for row in shown)
    blocks: list[Block] = [Table(tuple(str(column) for column in columns), cells, numeric)]
    if n_rows > len(shown):
        blocks.append(Paragraph(f"... and {n_rows - len(shown)} more rows (all {n_rows} are in report.json)."))
    if folded:
        named = f"{count(len(columns), 'column')}: {format_list([str(column) for column in columns], 6)}"
        return [Details(f"Table of {count(n_rows, 'row')}, {named}", tuple(blocks))]
    return blocks


def rows_blocks(rows: Sequence[Mapping[str, Any]], limit: int = MAX_TABLE_ROWS, fold: bool = True) -> list[Block]:
    """Dict rows as one table whose columns are every key seen, in first-seen order (``fold``: ``table_blocks``)."""
    columns = list(dict.fromkeys(str(key) for row in rows for key in row))
    return table_blocks(columns, [[row.get(column) for column in columns] for row in rows], limit, fold)


def value_blocks(value: Any) -> list[Block]:
    """Any JSON value as blocks: rows as a table, a mapping as a key/value table, a list as bullets."""
    if value is None or value == [] or value == {}:
        return [Paragraph("(none)")]
    rows = as_rows(value)
    if rows is not None:
        return rows_blocks(rows)
    if isinstance(value, Mapping):
        nested = {str(key): found for key, item in value.items() if (found := as_rows(item)) is not None}
        scalars = [(str(key), item) for key, item in value.items() if str(key) not in nested]
        blocks = table_blocks(("key", "value"), scalars) if scalars else []
        for key, found in nested.items():
            blocks += [Paragraph(f"{key} ({len(found)} rows):"), *rows_blocks(found)]
        return blocks
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [BulletList(tuple(format_value(item) for item in value))]
    return [Paragraph(format_value(value))]


def interval(value: Any, low: Any, high: Any) -> str:
    """``0.1457 [0.118, 0.1802]``; ``[low, high]`` alone when there is no point value."""
    bounds = f"[{format_value(low)}, {format_value(high)}]"
    return bounds if value is None else f"{format_value(value)} {bounds}"


def with_intervals(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows with each value that has ``<name>_low`` and ``<name>_high`` beside it shown as ``value [low, high]``, and
    a ``<name>_undefined_draws`` column left out when it counts none in every row (the headline's columns)."""
    names = list(dict.fromkeys(str(key) for row in rows for key in row))
    paired = {name for name in names if f"{name}_low" in names and f"{name}_high" in names}
    dropped = {f"{name}_{end}" for name in paired for end in ("low", "high")}
    dropped |= {name for name in names if name.endswith("_undefined_draws") and not any(row.get(name) for row in rows)}

    def cell(row: Mapping[str, Any], name: str) -> Any:
        if name not in paired or row.get(f"{name}_low") is None:
            return row.get(name)
        return interval(row.get(name), row[f"{name}_low"], row.get(f"{name}_high"))

    return [{name: cell(row, name) for name in names if name not in dropped} for row in rows]
