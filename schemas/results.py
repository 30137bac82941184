"""The results table (`results.csv`): one row per scored record, as a pandera ``DataFrameModel``.

Validation is lazy and never raises to the user: :func:`validate_results` returns every failure (row, column,
check, failing value) so the audit can list them all as ``schema`` findings and go on with the rows that pass.
Rows are numbered from 1 at the first data row below the header.

Numbers are parsed before pandera sees them: a cell that is not a number literal is reported once, as a type
failure, instead of making every later check of its column fail with a type error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.errors import SchemaErrors
from pandera.typing import Series

from schemas.eer_method import EER_METHODS

__all__ = [
    "CALIBRATED_COLUMNS",
    "DEFAULT_COSTS",
    "FLOAT_COLUMNS",
    "INT_COLUMNS",
    "KNOWN_COLUMNS",
    "MODEL_FAMILIES",
    "NORMALISED_COLUMNS",
    "PAPER_EXPERIMENT_PATTERN",
    "REQUIRED_COLUMNS",
    "SPOOFING_COLUMNS",
    "STRING_COLUMNS",
    "ResultsSchema",
    "SchemaFailure",
    "ValidatedResults",
    "cell_number",
    "cell_text",
    "describe_check",
    "parse_numbers",
    "row_costs",
    "row_dicts",
    "validate_results",
    "with_all_columns",
]

# Experiment ids are free (a legacy table may say vox1_O); E01..E21 name the paper's experiments, and only rows with
# those ids are held to the paper's experiment x model coverage (audit.table.flags.flag_coverage).
PAPER_EXPERIMENT_PATTERN = r"^E(0[1-9]|1[0-9]|2[01])$"
MODEL_FAMILIES = ("speaker", "ssl", "baseline")

REQUIRED_COLUMNS = (
    "record_id",
    "experiment",
    "model",
    "corpus",
    "condition",
    "eer",
    "n_target",
    "n_nontarget",
)
# Calibrated metrics of a run that declares [analysis] calibration (audit.metrics.record_calibration) and the
# spoofing-aware metrics of its spoof cells (audit.metrics.record_spoofing): optional, empty where not defined.
CALIBRATED_COLUMNS = ("cllr", "min_cllr", "act_dcf")
SPOOFING_COLUMNS = ("sv_eer", "spf_eer", "sasv_eer", "a_dcf", "cm_eer", "min_t_dcf", "t_eer")
# The EER (in the row's eer_method) and minDCF of AS-normalised scores, where a run declares
# [analysis] score_normalisation (audit.metrics.normalisation): optional, beside the raw metrics, never replacing them.
NORMALISED_COLUMNS = ("eer_as_norm", "min_dcf_as_norm")
FLOAT_COLUMNS = (
    "eer",
    "eer_legacy",
    "eer_rocch",
    "eer_interp",
    "min_dcf",
    "auc",
    "p_target",
    "c_miss",
    "c_fa",
    *CALIBRATED_COLUMNS,
    *SPOOFING_COLUMNS,
    *NORMALISED_COLUMNS,
)
# Speaker counts (schemas.trials.speaker_counts) are optional: a table not made from a bundle may lack them.
INT_COLUMNS = ("n_target", "n_nontarget", "n_unscored", "seed", "n_speakers", "n_enrol_speakers", "n_test_speakers")
STRING_COLUMNS = (
    "record_id",
    "experiment",
    "model",
    "corpus",
    "condition",
    "model_family",
    "factor_a",
    "level_a",
    "factor_b",
    "level_b",
    "enrol_condition",
    "test_condition",
    "subgroup",
    "complement_of",
    "eer_method",
    "checkpoint_blake3",
    "trial_list_id",
    "scores_blake3",
    "run_id",
)
KNOWN_COLUMNS = frozenset(STRING_COLUMNS + FLOAT_COLUMNS + INT_COLUMNS)

_NAN_LITERALS = frozenset({"nan", "+nan", "-nan"})


def _finite(series: pd.Series) -> pd.Series:
    return pd.Series(np.isfinite(series.to_numpy(dtype=float, na_value=np.nan)), index=series.index)


class ResultsSchema(pa.DataFrameModel):
    """Columns of `results.csv` (issue 2); optional columns may be absent, and empty where present."""

    record_id: Series[str] = pa.Field(unique=True)
    experiment: Series[str]
    model: Series[str]
    corpus: Series[str]
    condition: Series[str]
    eer: Series[float] = pa.Field(ge=0)
    n_target: Series[pd.Int64Dtype] = pa.Field(gt=0)
    n_nontarget: Series[pd.Int64Dtype] = pa.Field(gt=0)

    model_family: Series[str] | None = pa.Field(isin=list(MODEL_FAMILIES), nullable=True)
    factor_a: Series[str] | None = pa.Field(nullable=True)
    level_a: Series[str] | None = pa.Field(nullable=True)
    factor_b: Series[str] | None = pa.Field(nullable=True)
    level_b: Series[str] | None = pa.Field(nullable=True)
    enrol_condition: Series[str] | None = pa.Field(nullable=True)
    test_condition: Series[str] | None = pa.Field(nullable=True)
    subgroup: Series[str] | None = pa.Field(nullable=True)
    complement_of: Series[str] | None = pa.Field(nullable=True)  # the stratum whose complement this row measures
    eer_legacy: Series[float] | None = pa.Field(ge=0, nullable=True)
    eer_rocch: Series[float] | None = pa.Field(ge=0, nullable=True)
    eer_interp: Series[float] | None = pa.Field(ge=0, nullable=True)
    min_dcf: Series[float] | None = pa.Field(ge=0, nullable=True)
    auc: Series[float] | None = pa.Field(ge=0, le=1, nullable=True)
    eer_method: Series[str] | None = pa.Field(isin=[method.value for method in EER_METHODS], nullable=True)
    p_target: Series[float] | None = pa.Field(gt=0, lt=1, nullable=True)
    c_miss: Series[float] | None = pa.Field(gt=0, nullable=True)
    c_fa: Series[float] | None = pa.Field(gt=0, nullable=True)
    checkpoint_blake3: Series[str] | None = pa.Field(nullable=True)
    trial_list_id: Series[str] | None = pa.Field(nullable=True)
    scores_blake3: Series[str] | None = pa.Field(nullable=True)
    run_id: Series[str] | None = pa.Field(nullable=True)
    n_unscored: Series[pd.Int64Dtype] | None = pa.Field(ge=0, nullable=True)
    seed: Series[pd.Int64Dtype] | None = pa.Field(nullable=True)
    n_speakers: Series[pd.Int64Dtype] | None = pa.Field(gt=0, nullable=True)
    n_enrol_speakers: Series[pd.Int64Dtype] | None = pa.Field(gt=0, nullable=True)
    n_test_speakers: Series[pd.Int64Dtype] | None = pa.Field(gt=0, nullable=True)
    cllr: Series[float] | None = pa.Field(ge=0, nullable=True)
    min_cllr: Series[float] | None = pa.Field(ge=0, le=1, nullable=True)
    act_dcf: Series[float] | None = pa.Field(ge=0, nullable=True)
    sv_eer: Series[float] | None = pa.Field(ge=0, le=1, nullable=True)
    spf_eer: Series[float] | None = pa.Field(ge=0, le=1, nullable=True)
    sasv_eer: Series[float] | None = pa.Field(ge=0, le=1, nullable=True)
    a_dcf: Series[float] | None = pa.Field(ge=0, nullable=True)
    cm_eer: Series[float] | None = pa.Field(ge=0, le=1, nullable=True)
    min_t_dcf: Series[float] | None = pa.Field(ge=0, nullable=True)
    t_eer: Series[float] | None = pa.Field(ge=0, le=1, nullable=True)
    eer_as_norm: Series[float] | None = pa.Field(ge=0, le=1, nullable=True)
    min_dcf_as_norm: Series[float] | None = pa.Field(ge=0, nullable=True)

    @pa.check(*FLOAT_COLUMNS, name="finite")
    def finite(cls, series: pd.Series) -> pd.Series:
        """Infinity is not a measurement (NaN is a missing value: allowed in optional columns only)."""
        return _finite(series)

    class Config:
        strict = False  # extra columns are kept and ignored
        coerce = False  # numbers are parsed by parse_numbers, which reports unparsable cells once


@dataclass(frozen=True)
class SchemaFailure:
    """One failed cell or column: ``row`` is None for a column-level failure (e.g. a missing column)."""

    row: int | None
    column: str
    check: str
    value: Any
    record_id: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "row": self.row,
            "column": self.column,
            "check": self.check,
            "value": self.value,
            "record_id": self.record_id,
        }


@dataclass(frozen=True)
class ValidatedResults:
    """The rows that passed, every failure, and the absent required columns (then ``valid`` is empty)."""

    valid: pd.DataFrame
    failures: list[SchemaFailure]
    missing_required: list[str]

    @property
    def n_invalid_rows(self) -> int:
        return len({f.row for f in self.failures if f.row is not None})


def cell_text(value: Any) -> str | None:
    """A table cell as text, or None when it is empty (None, NaN, ``pd.NA`` or ``""``).

    >>> cell_text(0.25), cell_text(float("nan")), cell_text("")
    ('0.25', None, None)
    """
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return None
    return str(value) or None


DEFAULT_COSTS = {"p_target": 0.01, "c_miss": 1.0, "c_fa": 1.0}  # DESIGN.md section 4, used when a row has none


def cell_number(value: Any) -> float | None:
    """A cell as a float, None when empty or not a number.

    >>> cell_number("0.25"), cell_number(""), cell_number(float("nan"))
    (0.25, None, None)
    """
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def row_costs(row: Mapping[str, Any]) -> tuple[float, float, float]:
    """A row's ``p_target``, ``c_miss`` and ``c_fa``, each default of ``DEFAULT_COSTS`` where the row has none."""
    values = [cell_number(row.get(name)) for name in DEFAULT_COSTS]
    p_target, c_miss, c_fa = (
        default if value is None else value for value, default in zip(values, DEFAULT_COSTS.values(), strict=True)
    )
    return p_target, c_miss, c_fa


def row_dicts(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """``frame.to_dict("records")``, built column by column (a sixth of its time on a results table)."""
    columns = frame.columns.tolist()
    values = zip(*(frame.iloc[:, position].tolist() for position in range(len(columns))), strict=True)
    return [dict(zip(columns, row, strict=True)) for row in values]


def with_all_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every absent results column added, typed and missing, so readers need no presence tests.

    A frame without its required columns (empty after validation) becomes an empty, complete one.
    """
    dtypes = {column: "Int64" for column in INT_COLUMNS} | {column: "float64" for column in FLOAT_COLUMNS}
    missing = {
        column: pd.Series(None, index=frame.index, dtype=dtypes.get(column, "object"))
        for column in sorted(KNOWN_COLUMNS - set(frame.columns))
    }
    return frame.assign(**missing) if missing else frame


def _json_value(value: Any) -> Any:
    """A failing cell as JSON: NaN/inf as text, numpy scalars as Python values."""
    if isinstance(value, float | np.floating) and not np.isfinite(value):
        return str(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def parse_numbers(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[tuple[int, str, str, Any]]]:
    """Parse numeric columns of an all-text frame; return it and (index, column, check, value) type failures.

    ``nan``/``inf`` literals parse (the ``finite`` check reports them); anything else that is not a number,
    and any non-integer in a count column, is a type failure and becomes empty.
    """
    parsed = frame.copy()
    failures: list[tuple[int, str, str, Any]] = []
    for column in FLOAT_COLUMNS + INT_COLUMNS:
        if column not in frame.columns:
            continue
        text = frame[column]
        numbers = pd.to_numeric(text, errors="coerce")
        nan_literal = text.str.strip().str.lower().isin(_NAN_LITERALS)
        unparsable = text.notna() & numbers.isna() & ~nan_literal
        expected = "a number"
        if column in INT_COLUMNS:
            fractional = numbers.notna() & (~np.isfinite(numbers) | (numbers != np.round(numbers)))
            unparsable |= fractional | nan_literal
            numbers = numbers.where(~unparsable)
            expected = "an integer"
        failures.extend((int(i), column, f"must be {expected}", text[i]) for i in frame.index[unparsable])
        parsed[column] = numbers.astype("Int64") if column in INT_COLUMNS else numbers.astype(float)
    return parsed, failures


_CHECK_WORDS = (
    (r"^field_uniqueness$", "must be unique"),
    (r"^not_nullable$", "must not be empty or NaN"),
    (r"^column_in_dataframe$", "required column is missing"),
    (r"^isin\(\[(.*)\]\)$", r"must be one of \1"),
    (r"^greater_than_or_equal_to\((.*)\)$", r"must be >= \1"),
    (r"^less_than_or_equal_to\((.*)\)$", r"must be <= \1"),
    (r"^greater_than\((.*)\)$", r"must be > \1"),
    (r"^less_than\((.*)\)$", r"must be < \1"),
    (r"^finite$", "must be finite"),
    (r"^dtype\((.*)\)$", r"must have type \1"),
)


def describe_check(check: str) -> str:
    """A pandera check name in plain words, e.g. ``greater_than(0)`` -> ``must be > 0``."""
    for pattern, words in _CHECK_WORDS:
        if re.match(pattern, check):
            return re.sub(pattern, words, check).replace("'", "")
    return check


def validate_results(frame: pd.DataFrame) -> ValidatedResults:
    """Validate an all-text results frame lazily; failures carry 1-based data-row numbers and record ids.

    A cell is reported once, with the first check it breaks (a type failure first of all).
    """
    missing = [column for column in REQUIRED_COLUMNS if column not in frame.columns]
    parsed, type_failures = parse_numbers(frame)
    record_ids: list[Any] = frame["record_id"].tolist() if "record_id" in frame.columns else []

    def record_of(index: int | None) -> str | None:
        if index is None or not record_ids or pd.isna(record_ids[index]):
            return None
        return str(record_ids[index])

    cells: dict[tuple[int | None, str], SchemaFailure] = {}
    for row_index, column, check, value in type_failures:
        cells[(row_index, column)] = SchemaFailure(row_index + 1, column, check, value, record_of(row_index))
    try:
        ResultsSchema.validate(parsed, lazy=True)
    except SchemaErrors as errors:
        for case in errors.failure_cases.itertuples(index=False):
            index: int | None = None if pd.isna(case.index) else int(case.index)
            column = str(case.failure_case) if case.check == "column_in_dataframe" else str(case.column)
            key = (index, column)
            if key in cells and index is not None:
                continue  # this cell is already reported
            value = None if case.check == "column_in_dataframe" else _json_value(case.failure_case)
            if case.check == "not_nullable":
                text: Any = None if index is None else frame.at[index, column]
                value = None if pd.isna(text) else text
            cells[key] = SchemaFailure(
                None if index is None else index + 1,
                column,
                describe_check(str(case.check)),
                value,
                record_of(index),
            )
    failures = sorted(cells.values(), key=lambda f: (f.row is not None, f.row or 0, f.column))
    if missing:
        return ValidatedResults(parsed.iloc[0:0], failures, missing)
    bad_rows = [f.row - 1 for f in failures if f.row is not None]
    return ValidatedResults(parsed.drop(index=bad_rows), failures, missing)
