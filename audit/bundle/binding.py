"""Bindings: the signed results rows to the statement's records, and the audited table to the signed results.

The audited table may be a copy outside the bundle (the paper's table). Every one of its rows must equal the signed
row with the same ``record_id`` in every column both have: text exactly, numbers exactly or, where the table
prints fewer decimals, to its printed precision (said in the report). Signed rows the table leaves out are an
error unless the reviewer declares the subset the table covers (``--subset "experiment in [E13, E14]"``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import pandas as pd

from audit.bundle.verified import (
    DigestMismatchError,
    LoadedFiles,
    StatementError,
    Step,
    TableBinding,
    TableBindingError,
)
from provenance.digests import Digest
from provenance.statement import PredicateShapeError, RecordBinding, read_bindings, read_checkpoints
from schemas.bundle import TRIAL_LIST_ID_LENGTH, scores_name, trial_list_name
from schemas.errors import InputError
from schemas.results import FLOAT_COLUMNS, INT_COLUMNS, row_dicts

NUMERIC_COLUMNS = frozenset(FLOAT_COLUMNS + INT_COLUMNS)
_DECIMAL = re.compile(r"^[+-]?\d*\.(\d+)$")


@dataclass(frozen=True)
class RowStatus:
    """Which of a row's three bindings verified: checkpoint digest, trial list, scores."""

    checkpoint: bool
    trial_list: bool
    scores: bool


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return None
    return str(value) or None


def _row_problems(
    row: dict[str, Any],
    binding: RecordBinding | None,
    checkpoints: dict[str, str],
    bundle_checkpoints: dict[str, Any],
    verified: dict[str, Digest],
    run_id: Any,
) -> tuple[RowStatus, list[str]]:
    if binding is None:
        return RowStatus(False, False, False), ["record not in the statement"]
    problems = []
    trial_digest = verified.get(trial_list_name(str(row.get("trial_list_id"))))
    trial_ok = (
        row.get("trial_list_id") == binding.trial_list_id
        and binding.trial_list_path == trial_list_name(binding.trial_list_id)
        and trial_digest is not None
        and trial_digest.blake3 == binding.trial_list_blake3
        and trial_digest.blake3[:TRIAL_LIST_ID_LENGTH] == binding.trial_list_id
    )
    if not trial_ok:
        problems.append("trial list differs from the statement or does not verify")
    scores_digest = verified.get(scores_name(str(row.get("record_id"))))
    scores_ok = (
        row.get("scores_blake3") == binding.scores_blake3
        and scores_digest is not None
        and scores_digest.blake3 == binding.scores_blake3
    )
    if not scores_ok:
        problems.append("scores_blake3 differs from the statement or the scores file does not verify")
    model = str(row.get("model") or "")
    entry = bundle_checkpoints.get(model)
    checkpoint_ok = (
        row.get("checkpoint_blake3") == binding.checkpoint_blake3
        and checkpoints.get(model) == binding.checkpoint_blake3
        and isinstance(entry, dict)
        and entry.get("checkpoint_blake3") == binding.checkpoint_blake3
        and model == binding.model
    )
    if not checkpoint_ok:
        problems.append("checkpoint_blake3 differs from the statement or checkpoints.json")
    if row.get("run_id") != run_id:
        problems.append(f"run_id differs from the statement's invocation id {str(run_id)[:80]!r}")
    return RowStatus(checkpoint_ok, trial_ok, scores_ok), problems


def verify_rows(
    files: LoadedFiles, statement: dict[str, Any], verified: dict[str, Digest]
) -> tuple[dict[str, RowStatus], Step]:
    """Each signed results row against the predicate: its trial list, scores and checkpoint digests, and run id."""
    try:
        bindings = read_bindings(statement["predicate"])
        checkpoints = read_checkpoints(statement["predicate"])
        run_id = statement["predicate"]["runDetails"]["metadata"]["invocationId"]
    except (PredicateShapeError, KeyError, TypeError) as error:
        raise StatementError("predicate-shape", f"The predicate cannot be read: {error}", partial={}) from error
    if files.results is None:
        raise DigestMismatchError("row-binding", "No verified results.csv to bind to the statement.", partial={})
    rows = files.signed_rows
    statuses: dict[str, RowStatus] = {}
    failures = []
    for number, row in enumerate(rows, start=1):
        record_id = _text(row.get("record_id")) or f"row {number}"
        status, problems = _row_problems(
            {key: _text(value) for key, value in row.items()},
            bindings.get(record_id),
            checkpoints,
            files.checkpoints or {},
            verified,
            run_id,
        )
        statuses[record_id] = status
        failures += [{"row": number, "record_id": record_id, "problem": problem} for problem in problems]
    unlisted = sorted(set(bindings) - set(statuses))
    failures += [
        {"row": None, "record_id": record, "problem": "record of the statement not in results.csv"}
        for record in unlisted
    ]
    if failures:
        records = tuple(dict.fromkeys(str(f["record_id"]) for f in failures))
        raise DigestMismatchError(
            "row-binding",
            f"{len(records)} signed results row(s) or statement record(s) are not bound to verified files.",
            records=records,
            failures=failures,
            partial=statuses,
        )
    return statuses, Step([f"All {len(rows)} signed rows are bound to verified trial lists, scores and checkpoints."])


# --- the audited table against the signed one ------------------------------------------------------------------


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


def _decimals(text: str) -> int | None:
    """Decimals a plain decimal literal prints (``0.087`` -> 3); None for integers and exponent forms."""
    match = _DECIMAL.match(text.strip())
    return len(match.group(1)) if match else None


def _same(column: str, table_text: str | None, signed_text: str | None) -> tuple[bool, bool]:
    """(equal, by rounding): equal as text, as numbers, or as the signed number rounded to the table's decimals."""
    if table_text == signed_text:
        return True, False
    if table_text is None or signed_text is None or column not in NUMERIC_COLUMNS:
        return False, False
    try:
        table_value, signed_value = float(table_text), float(signed_text)
    except ValueError:
        return False, False
    if table_value == signed_value:
        return True, False
    decimals = _decimals(table_text)
    signed_decimals = _decimals(signed_text)
    if decimals is None or (signed_decimals is not None and signed_decimals <= decimals):
        return False, False
    return abs(round(signed_value, decimals) - table_value) < 0.5 * 10.0**-decimals * 1e-6, True


def verify_table_binding(table: pd.DataFrame, files: LoadedFiles, subset: Subset | None) -> tuple[TableBinding, Step]:
    """Every row of the audited table equals its signed row; signed rows missing from it are listed."""
    signed = files.results
    if signed is None:
        raise TableBindingError("no-signed-table", "No verified results.csv: the audited table cannot be bound.")
    if "record_id" not in table.columns:
        raise TableBindingError("no-record-id", "The audited table has no record_id column to bind its rows.")
    signed_rows = {str(row["record_id"]): row for row in files.signed_rows}
    in_subset = signed.index[subset.mask(signed)] if subset else signed.index
    expected = {str(signed.at[i, "record_id"]) for i in in_subset}
    columns = [c for c in table.columns if c in signed.columns and c != "record_id"]
    failures: list[dict[str, Any]] = []
    rounded: set[str] = set()
    seen: set[str] = set()
    for number, row in enumerate(row_dicts(table), start=1):
        record_id = _text(row.get("record_id"))
        if record_id is None or record_id not in signed_rows:
            failures.append({"row": number, "record_id": record_id, "problem": "not a record of the signed table"})
            continue
        if record_id in seen:
            failures.append({"row": number, "record_id": record_id, "problem": "record listed twice"})
            continue
        seen.add(record_id)
        if subset is not None and record_id not in expected:
            failures.append(
                {"row": number, "record_id": record_id, "problem": f"outside the declared subset {subset.text}"}
            )
        for column in columns:
            table_text, signed_text = _text(row.get(column)), _text(signed_rows[record_id].get(column))
            equal, by_rounding = _same(column, table_text, signed_text)
            if by_rounding:
                rounded.add(column)
            if not equal:
                failures.append(
                    {
                        "row": number,
                        "record_id": record_id,
                        "column": column,
                        "table": table_text,
                        "signed": signed_text,
                        "problem": "differs from the signed value",
                    }
                )
    missing = sorted(expected - seen)
    failures += [
        {"row": None, "record_id": record, "problem": "signed row missing from the table"} for record in missing
    ]
    binding = TableBinding(
        len(signed), len(table), subset.text if subset else None, len(expected), tuple(sorted(rounded))
    )
    if failures:
        records = tuple(dict.fromkeys(str(f["record_id"]) for f in failures))
        what = [f"{len(missing)} signed row(s) missing" if missing else ""]
        what.append(
            f"{sum('column' in f for f in failures)} value(s) differ" if any("column" in f for f in failures) else ""
        )
        unknown = sum(f["problem"] == "not a record of the signed table" for f in failures)
        what.append(f"{unknown} row(s) unknown to the bundle" if unknown else "")
        raise TableBindingError(
            "table-binding",
            f"The audited table is not the signed results table: {', '.join(w for w in what if w) or 'see the cases'}"
            + ("" if subset or not missing else " (declare a subset with --subset if the table covers only part)")
            + ".",
            records=records,
            failures=failures,
            partial=binding,
        )
    lines = [
        f"All {len(table)} rows of the audited table equal their signed rows in the {len(columns) + 1} columns both "
        "have" + (f" ({', '.join(sorted(rounded))} compared to the table's printed precision)" if rounded else "") + "."
    ]
    if subset:
        lines.append(f"Declared subset {subset.text!r}: {len(expected)} of {len(signed)} signed rows, all present.")
    return binding, Step(lines)
