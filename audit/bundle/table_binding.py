"""The audited table bound to the signed results table, column by column and row by row.

The audited table may be a copy outside the bundle (the paper's own table). Its rows bind to signed rows by
``record_id`` or, when it has none (as papers print them), by the natural key it has: experiment, model, the
condition columns, subgroup and corpus (a key that several signed rows share, or none, is named). Its columns:

- a column the signed table has is compared in every row: text exactly, numbers exactly or at the column's printed
  precision, the finest number of decimals any of its cells prints (a forger cannot print a chosen cell coarsely);
- a column whose name is a signed one's up to case, blanks, ``_``/``-``/``.`` or non-ASCII characters standing in
  for letters (``EER``, ``eer ``, ``e\u0435r`` with a Cyrillic ``\u0435``) is an error: a reader would take its
  values for the signed ones;
- any other column is not compared, and the verdict names it.

A value map of the mapping file (``--columns``) that sends a value of the signed table to another value of the same
column is an error: it could swap two encoders' rows and map them back. Signed rows the table leaves out are an
error unless the reviewer declares the subset the table covers (``--subset "experiment in [E13, E14]"``).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import pandas as pd

from audit.bundle.verified import LoadedFiles, Step, TableBinding, TableBindingError
from audit.table import looks_like, name_skeleton
from schemas import FLOAT_COLUMNS, INT_COLUMNS, InputError, cell_text, count, describe_case, row_dicts

NUMERIC_COLUMNS = frozenset(FLOAT_COLUMNS + INT_COLUMNS)
# The columns that name a record where a table has no record_id, in the order a key is shown.
NATURAL_KEY = (
    "experiment",
    "model",
    "corpus",
    "condition",
    "enrol_condition",
    "test_condition",
    "factor_a",
    "level_a",
    "factor_b",
    "level_b",
    "subgroup",
    "complement_of",
)
_DECIMAL = re.compile(r"^[+-]?\d*\.(\d+)$")
SHOWN_CASES = 5  # failing rows the terminal lists
FLOAT_NOISE_ULPS = 8  # a double's last-place noise a printed number may carry (see _same)


@dataclass(frozen=True)
class Subset:
    """A declared subset of the signed rows: clauses ``column in [values]`` / ``column = value``, joined by
    ``and``."""

    text: str
    clauses: tuple[tuple[str, bool, frozenset[str]], ...]  # (column, negated, values)

    def mask(self, frame: pd.DataFrame) -> pd.Series:
        keep = pd.Series(True, index=frame.index)
        for column, negated, values in self.clauses:
            if column not in frame.columns:
                raise InputError("--subset", f"the signed results table has no column {column!r}")
            inside = frame[column].astype(str).isin(values)
            keep &= ~inside if negated else inside
        return keep


_CLAUSE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(not in|in|!=|=|==)\s*(.+?)\s*$")


def parse_subset(text: str) -> Subset:
    """``experiment in [E13, E14] and model = CAM++``; anything else is an input error (exit 2)."""
    clauses = []
    for part in re.split(r"\s+and\s+", text.strip()):
        match = _CLAUSE.match(part)
        if not match:
            raise InputError(
                "--subset", f"cannot read {part!r}: expected COLUMN in [A, B] or COLUMN = A, joined by 'and'"
            )
        column, operator, value = match.groups()
        if operator.endswith("in"):
            if not (value.startswith("[") and value.endswith("]")):
                raise InputError("--subset", f"{part!r}: the values of 'in' go in square brackets")
            values = frozenset(v.strip().strip("'\"") for v in value[1:-1].split(",") if v.strip())
        else:
            values = frozenset([value.strip("'\"")])
        clauses.append((column, operator in ("not in", "!="), values))
    return Subset(text.strip(), tuple(clauses))


def _look_alike(name: str, signed: list[str]) -> str | None:
    """The signed column ``name`` passes for without being it, or None."""
    return next((column for column in signed if looks_like(name, column)), None)


def _decimals(text: str | None) -> int | None:
    """Decimals a plain decimal literal prints (``0.087`` -> 3); None for integers, exponent forms, empty cells."""
    match = _DECIMAL.match(text.strip()) if text else None
    return len(match.group(1)) if match else None


def _printed_precision(column: pd.Series) -> int | None:
    """The finest number of decimals the column's cells print, or None when none prints decimals (compared
    exactly): one precision per column, so a cell printed coarser than the rest is compared at the finest."""
    printed = [decimals for value in column if (decimals := _decimals(cell_text(value))) is not None]
    return max(printed) if printed else None


def _number(text: str) -> Decimal | None:
    """A cell's text as the exact decimal it prints, or None when it is not a finite number."""
    try:
        number = Decimal(text.strip())
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def _same(table_text: str | None, signed_text: str | None, decimals: int | None) -> tuple[bool, bool]:
    """(equal, by rounding): equal as text or as numbers, or the table prints the signed number at ``decimals``
    decimals: within half a unit of its last printed digit, whichever rule rounded it (half to even, as
    ``pandas.DataFrame.round`` does, or half up), give or take float noise (``FLOAT_NOISE_ULPS`` units in the last
    place of a double, as printing ``100 * eer`` and dividing by 100 leaves), and nothing wider."""
    if table_text == signed_text:
        return True, False
    if table_text is None or signed_text is None or decimals is None:
        return False, False
    table_value, signed_value = _number(table_text), _number(signed_text)
    if table_value is None or signed_value is None:
        return False, False
    if table_value == signed_value:
        return True, False
    noise = Decimal(FLOAT_NOISE_ULPS * math.ulp(float(max(abs(table_value), abs(signed_value)))))
    return abs(table_value - signed_value) <= Decimal(5).scaleb(-decimals - 1) + noise, True


@dataclass(frozen=True)
class _Columns:
    """The audited table's columns sorted by what the binding does with them."""

    compared: tuple[str, ...]
    look_alikes: dict[str, str]  # table column -> the signed column it passes for
    not_compared: tuple[str, ...]
    precision: dict[str, int | None]  # compared column -> decimals it is compared at (None: exactly)


def _sort_columns(table: pd.DataFrame, signed: pd.DataFrame, key: tuple[str, ...]) -> _Columns:
    signed_names = [str(column) for column in signed.columns]
    compared, look_alikes, not_compared = [], {}, []
    for column in map(str, table.columns):
        if column in key:
            continue
        if column in signed_names:
            compared.append(column)
        elif (passes_for := _look_alike(column, signed_names)) is not None:
            look_alikes[column] = passes_for
        else:
            not_compared.append(column)
    precision = {
        column: _printed_precision(table[column]) if column in NUMERIC_COLUMNS else None for column in compared
    }
    return _Columns(tuple(compared), look_alikes, tuple(not_compared), precision)


def _key_columns(table: pd.DataFrame, signed: pd.DataFrame) -> tuple[str, ...]:
    """``("record_id",)``, or the natural key columns both tables have (experiment and model at least)."""
    if "record_id" in table.columns:
        return ("record_id",)
    key = tuple(column for column in NATURAL_KEY if column in table.columns and column in signed.columns)
    if not {"experiment", "model"} <= set(key):
        raise TableBindingError(
            "no-key",
            "The audited table has neither record_id nor the experiment and model columns to bind its rows by.",
        )
    return key


def _signed_by_key(signed_rows: list[dict[str, Any]], key: tuple[str, ...]) -> dict[tuple, list[str]]:
    """Each key value -> the record ids of the signed rows that have it."""
    records: dict[tuple, list[str]] = defaultdict(list)
    for row in signed_rows:
        records[tuple(cell_text(row.get(column)) for column in key)].append(str(row["record_id"]))
    return records


def _read_as(label: str, values: list[str]) -> list[str]:
    """The signed ``values`` a reader takes ``label`` for (``name_skeleton``); none for a label without one ASCII
    letter or digit, which no ASCII value passes for."""
    skeleton = name_skeleton(label)
    if not any(char.isalnum() for char in skeleton):
        return []
    return [value for value in values if _look_alike(label, [value]) is not None]


def _swapping_maps(value_maps: dict[str, dict[str, str]], signed: pd.DataFrame) -> list[dict[str, Any]]:
    """Each value map entry that sends a value of the signed table, or a label a reader takes for one (the same up
    to case, blanks, ``_``/``-``/``.`` and non-ASCII stand-ins: ``name_skeleton``), to another value of the same
    column: the table would print one condition or encoder and be bound to another's row."""
    failures = []
    for column, spellings in sorted(value_maps.items()):
        if column not in signed.columns:
            continue
        values = sorted(set(signed[column].dropna().astype(str)))
        for source, target in sorted(spellings.items()):
            if source in values and source != target:
                respelled = f"the mapping file respells the signed value {source!r} as {target!r}"
                failures.append(_case(None, None, respelled, column=column))
            elif source not in values and (reads_as := _read_as(source, values)) and target not in reads_as:
                respelled = (
                    f"the mapping file respells {source!r}, which reads as the signed value {reads_as[0]!r}, as "
                    f"{target!r}"
                )
                failures.append(_case(None, None, respelled, column=column))
    return failures


def _case(row: int | None, record_id: str | None, problem: str, **more: Any) -> dict[str, Any]:
    """One failing case of the binding: the table row (from 1), the record, what is wrong, and any column and values."""
    return {"row": row, "record_id": record_id, **more, "problem": problem}


def _bind_rows(
    table: pd.DataFrame, files: LoadedFiles, key: tuple[str, ...]
) -> tuple[list[str | None], list[dict[str, Any]]]:
    """Each table row's record id (None when unbound) and the rows that do not bind."""
    by_key = _signed_by_key(files.signed_rows, key)
    bound: list[str | None] = []
    failures: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for number, row in enumerate(row_dicts(table), start=1):
        value = tuple(cell_text(row.get(column)) for column in key)
        named = (
            value[0] if key == ("record_id",) else ", ".join(f"{c}={v}" for c, v in zip(key, value, strict=True) if v)
        )
        records = by_key.get(value, [])
        if not records:
            failures.append(_case(number, named, "not a record of the signed table"))
        elif len(records) > 1:
            shared = f"{count(len(records), 'signed row')} share this key: {', '.join(records[:5])}"
            failures.append(_case(number, named, shared))
        elif records[0] in seen:
            failures.append(_case(number, records[0], f"record listed twice (also row {seen[records[0]]})"))
        else:
            seen[records[0]] = number
            bound.append(records[0])
            continue
        bound.append(None)
    return bound, failures


def verify_table_binding(
    table: pd.DataFrame,
    files: LoadedFiles,
    subset: Subset | None,
    value_maps: dict[str, dict[str, str]] | None = None,
) -> tuple[TableBinding, Step]:
    """Every row of the audited table binds to one signed row and equals it in every compared column; look-alike
    columns, value maps that swap signed values and signed rows missing from the table are named."""
    signed = files.results
    if signed is None:
        raise TableBindingError("no-signed-table", "No verified results.csv: the audited table cannot be bound.")
    key = _key_columns(table, signed)
    columns = _sort_columns(table, signed, key)
    signed_rows = {str(row["record_id"]): row for row in files.signed_rows}
    in_subset = signed.index[subset.mask(signed)] if subset else signed.index
    expected = {str(signed.at[i, "record_id"]) for i in in_subset}
    bound, failures = _bind_rows(table, files, key)
    failures += [
        _case(None, None, f"looks like the signed column {passes_for!r} but is not it: its values are not compared",
              column=column)
        for column, passes_for in columns.look_alikes.items()
    ]  # fmt: skip
    failures += _swapping_maps(value_maps or {}, signed)
    rounded: set[str] = set()
    for number, (row, record_id) in enumerate(zip(row_dicts(table), bound, strict=True), start=1):
        if record_id is None:
            continue
        if subset is not None and record_id not in expected:
            failures.append(_case(number, record_id, f"outside the declared subset {subset.text}"))
        for column in columns.compared:
            table_text, signed_text = cell_text(row.get(column)), cell_text(signed_rows[record_id].get(column))
            equal, by_rounding = _same(table_text, signed_text, columns.precision[column])
            if by_rounding:
                rounded.add(column)
            if not equal:
                failures.append(
                    _case(number, record_id, "differs from the signed value", column=column, table=table_text,
                          signed=signed_text)
                )  # fmt: skip
    missing = sorted(expected - {record_id for record_id in bound if record_id is not None})
    failures += [_case(None, record, "signed row missing from the table") for record in missing]
    binding = TableBinding(
        n_signed=len(signed),
        n_table=len(table),
        subset=subset.text if subset else None,
        n_in_subset=len(expected),
        key=key,
        record_ids=tuple(bound),
        compared=columns.compared,
        not_compared=columns.not_compared,
        precision={
            column: decimals for column in sorted(rounded) if (decimals := columns.precision[column]) is not None
        },
        from_bundle=tuple(str(column) for column in signed.columns if column not in table.columns),
        bound=not failures,
    )
    if failures:
        raise TableBindingError(
            "table-binding",
            _failure_message(failures, missing, subset),
            records=tuple(dict.fromkeys(str(f["record_id"]) for f in failures if f.get("record_id") is not None)),
            failures=failures,
            partial=binding,
        )
    return binding, Step(_binding_lines(binding, len(table)))


def _differ(n: int) -> str:
    return f"{count(n, 'value')} {'differs' if n == 1 else 'differ'}"


def _failure_message(failures: list[dict[str, Any]], missing: list[str], subset: Subset | None) -> str:
    """One sentence: what kinds of difference, with counts, and the first case of the first kind."""
    kinds = [
        (count(len(missing), "signed row") + " missing", len(missing)),
        (_differ(sum("table" in f for f in failures)), sum("table" in f for f in failures)),
        (
            count(sum(f["problem"] == "not a record of the signed table" for f in failures), "row")
            + " unknown to the bundle",
            sum(f["problem"] == "not a record of the signed table" for f in failures),
        ),
        (
            count(sum(f["problem"].startswith("looks like") for f in failures), "look-alike column"),
            sum(f["problem"].startswith("looks like") for f in failures),
        ),
        (
            count(sum(f["problem"].startswith("the mapping file") for f in failures), "value map")
            + " respelling signed values",
            sum(f["problem"].startswith("the mapping file") for f in failures),
        ),
    ]
    other = len(failures) - sum(n for _, n in kinds)
    said = [text for text, n in kinds if n] + ([count(other, "other case")] if other > 0 else [])
    return (
        f"The audited table is not the signed results table: {', '.join(said)}"
        + ("" if subset or not missing else " (declare a subset with --subset if the table covers only part)")
        + f"; first: {describe_case(failures[0])}."
    )


def _binding_lines(binding: TableBinding, n_rows: int) -> list[str]:
    by_key = "record_id" if binding.key == ("record_id",) else f"the key {', '.join(binding.key)}"
    lines = [
        f"All {n_rows} rows of the audited table bind by {by_key} to their signed rows and equal them in the "
        f"{count(len(binding.compared), 'column')} both have"
        + (
            " (compared at their printed precision, the finest each column prints: "
            + ", ".join(f"{column} {count(decimals, 'decimal')}" for column, decimals in binding.precision.items())
            + ")"
            if binding.precision
            else ""
        )
        + "."
    ]
    if binding.from_bundle:
        lines.append(
            f"Taken from the bound signed rows (the table does not print them): {', '.join(binding.from_bundle)}."
        )
    if binding.not_compared:
        lines.append(f"Not compared (the signed table has no such column): {', '.join(binding.not_compared)}.")
    if binding.subset:
        lines.append(
            f"Declared subset {binding.subset!r}: {binding.n_in_subset} of {binding.n_signed} signed rows, all present."
        )
    return lines
