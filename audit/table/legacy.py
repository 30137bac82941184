"""A legacy table's mapping file (``--columns MAP.toml``): column renames, value spellings and the EER scale.

Beyond ``[columns]`` (``"legacy name" = "results.csv name"``), a mapping may say::

    eer_scale = "percent"                 # or "fraction"; required when the EERs do not decide it
    [experiments]                         # legacy experiment id -> id in the audit (any string)
    "Exp. 13" = "E13"
    [values.subgroup]                     # per column: legacy spelling -> the audit's spelling
    "female" = "gender=F"
    [conditions."neutral→fearful"]       # a condition label -> the columns it implies, in every experiment
    enrol_condition = "neutral"
    test_condition = "fearful"
    [conditions.E13.clean]                # ... or in one experiment (its id after [experiments]); this wins
    factor_a = "age"
    level_a = "none"
    [snr]                                 # SNR in a condition label: named groups noise and snr
    pattern = '^(?P<noise>[a-z]+) (?P<snr>-?\\d+) dB$'

The SNR pattern is compiled by RE2 (``google-re2``), a linear-time engine: a pattern from a mapping file cannot
backtrack without bound, and what RE2 does not take (back-references, look-around) is an input error.

The scale: EERs above 1 can only be percent; all at or below 0.5 read as fractions; a largest EER in (0.5, 1] is
either a fraction above chance or a percent below 1 %, so ``eer_scale`` must be declared (exit 2 otherwise). Percent
EERs (``eer``, ``eer_legacy``, ``eer_rocch``, ``eer_interp``) are divided by 100 in decimal (``0.86`` becomes
``0.0086`` exactly) before validation; a percent that is not a finite number is left for the schema to report.
Everything applied is counted in ``notes``, which the report prints under the source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import re2

from schemas import KNOWN_COLUMNS, InputError

EER_SCALES = ("fraction", "percent")
PERCENT_COLUMNS = ("eer", "eer_legacy", "eer_rocch", "eer_interp")
CONDITION_COLUMNS = ("factor_a", "level_a", "factor_b", "level_b", "enrol_condition", "test_condition", "subgroup")
FRACTION_BELOW = 0.5  # a largest EER at or below this reads as a fraction
KNOWN_KEYS = {"columns", "eer_scale", "experiments", "values", "conditions", "snr"}


def _strings(source: str, where: str, table: Any) -> dict[str, str]:
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise InputError(source, f'[{where}] must be a table of "legacy" = "audit" strings')
    return dict(table)


@dataclass(frozen=True)
class LegacyMapping:
    """The value-level part of a mapping file (the column renames are read by ``audit.table.reading``)."""

    source: str
    eer_scale: str | None = None
    experiments: dict[str, str] = field(default_factory=dict)
    values: dict[str, dict[str, str]] = field(default_factory=dict)
    conditions: dict[tuple[str | None, str], dict[str, str]] = field(default_factory=dict)  # (experiment, label)
    snr_pattern: re2._Regexp | None = None

    @classmethod
    def of(cls, source: str, document: dict[str, Any]) -> LegacyMapping:
        """Check the document's tables; a key or table the mapping does not know is an InputError."""
        unknown = sorted(set(document) - KNOWN_KEYS)
        if unknown:
            raise InputError(source, f"unknown keys {', '.join(unknown)} (expected {', '.join(sorted(KNOWN_KEYS))})")
        scale = document.get("eer_scale")
        if scale is not None and scale not in EER_SCALES:
            raise InputError(source, f'eer_scale must be "fraction" or "percent", got {scale!r}')
        values = {}
        for column, table in (document.get("values") or {}).items():
            if column not in KNOWN_COLUMNS:
                raise InputError(source, f"[values.{column}]: {column!r} is not a results.csv column")
            values[column] = _strings(source, f"values.{column}", table)
        conditions = {}
        for key, table in (document.get("conditions") or {}).items():
            nested = isinstance(table, dict) and table and all(isinstance(v, dict) for v in table.values())
            entries = (
                [((key, label), implied) for label, implied in table.items()] if nested else [((None, key), table)]
            )
            for (experiment, label), implied in entries:
                where = f"conditions.{experiment + '.' if experiment else ''}{label!r}"
                checked = _strings(source, where, implied)
                wrong = sorted(set(checked) - set(CONDITION_COLUMNS))
                if wrong:
                    raise InputError(
                        source, f"[{where}] sets {', '.join(wrong)}; expected {', '.join(CONDITION_COLUMNS)}"
                    )
                conditions[(experiment, label)] = checked
        return cls(
            source,
            scale,
            _strings(source, "experiments", document.get("experiments") or {}),
            values,
            conditions,
            _snr_pattern(source, document.get("snr")),
        )

    @property
    def value_maps(self) -> dict[str, dict[str, str]]:
        """Each column's value map (experiment ids included): what a binding checks for swapped signed values."""
        return ({"experiment": dict(self.experiments)} if self.experiments else {}) | self.values

    def apply(self, frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
        """``frame`` (all text, canonical column names) with the mapping applied, and what was done."""
        frame = frame.copy()
        notes: dict[str, Any] = {}
        if self.experiments and "experiment" in frame:
            notes["experiment ids mapped"] = int(frame["experiment"].isin(self.experiments).sum())
            frame["experiment"] = frame["experiment"].replace(self.experiments)
        for column, spellings in self.values.items():
            if column in frame:
                notes[f"{column} values respelled"] = int(frame[column].isin(spellings).sum())
                frame[column] = frame[column].replace(spellings)
        if "condition" in frame:
            frame, notes = self._conditions(frame, notes)
        return self._scale(frame, notes)

    def _conditions(self, frame: pd.DataFrame, notes: dict[str, Any]) -> tuple[pd.DataFrame, dict[str, Any]]:
        if self.conditions:
            matched = pd.Series(False, index=frame.index)
            experiments = frame["experiment"] if "experiment" in frame else pd.Series(None, index=frame.index)
            # Labels for every experiment first, then per-experiment ones, which win.
            for (experiment, label), implied in sorted(
                self.conditions.items(), key=lambda item: item[0][0] is not None
            ):
                rows = (frame["condition"] == label) & (experiment is None or experiments == experiment)
                matched |= rows
                for column, value in implied.items():
                    if column not in frame:
                        frame[column] = None
                    frame.loc[rows, column] = value
            notes["condition labels mapped to factors"] = int(matched.sum())
        if self.snr_pattern is not None:
            labels = {}
            for label in frame["condition"].dropna().unique():
                match = self.snr_pattern.search(label)
                if match is not None and None not in (match.group("noise"), match.group("snr")):
                    labels[label] = f"{match.group('noise')}_{match.group('snr')}dB"
            found = frame["condition"].isin(labels)
            frame.loc[found, "condition"] = frame.loc[found, "condition"].map(labels)
            notes["SNR labels parsed"] = int(found.sum())
        return frame, notes

    def _scale(self, frame: pd.DataFrame, notes: dict[str, Any]) -> tuple[pd.DataFrame, dict[str, Any]]:
        eers = pd.to_numeric(frame["eer"], errors="coerce") if "eer" in frame else pd.Series(dtype=float)
        largest = float(eers.max()) if eers.notna().any() else 0.0
        scale = self.eer_scale
        if scale is not None:
            notes["eer_scale"] = f"{scale} (declared)"
        elif largest > 1:
            scale, notes["eer_scale"] = "percent", f"percent (inferred: the largest EER, {largest:g}, is above 1)"
        elif largest <= FRACTION_BELOW:
            scale, notes["eer_scale"] = "fraction", f"fraction (inferred: every EER is at most {FRACTION_BELOW})"
        else:
            raise InputError(
                self.source,
                f"eer_scale is needed: the largest EER, {largest:g}, reads as a fraction above chance or a "
                'percent below 1 %; declare eer_scale = "fraction" or "percent"',
            )
        if scale == "percent":
            for column in PERCENT_COLUMNS:
                if column in frame:
                    numbers = pd.to_numeric(frame[column], errors="coerce")
                    # Only finite numbers are scaled (1e999999999 would overflow the decimal context): the schema
                    # reports the rest.
                    finite = np.isfinite(numbers.to_numpy(dtype=float, na_value=np.nan))
                    exact = frame[column][finite].map(partial(self._fraction, column))
                    frame[column] = frame[column].where(~finite, exact)  # decimal: 0.7 % is 0.007 exactly
        return frame, notes

    def _fraction(self, column: str, text: str) -> str:
        """A percent cell as the exact decimal fraction it stands for."""
        try:
            return str(Decimal(text.strip()) / 100)
        except ArithmeticError:  # decimal's InvalidOperation and the rest
            raise InputError(self.source, f"{column} {text[:40]!r} is not a decimal number to divide by 100") from None


def _snr_pattern(source: str, table: Any) -> re2._Regexp | None:
    if table is None:
        return None
    pattern = table.get("pattern") if isinstance(table, dict) else None
    if not isinstance(pattern, str):
        raise InputError(source, "[snr] needs pattern = '<regex with named groups noise and snr>'")
    options = re2.Options()
    options.log_errors = False  # the one line below says it
    try:
        compiled = re2.compile(pattern, options)
    except re2.error as error:
        problem = error.args[0].decode() if error.args and isinstance(error.args[0], bytes) else str(error)
        raise InputError(source, f"[snr] pattern is not a regular expression RE2 accepts: {problem}") from None
    if not {"noise", "snr"} <= set(compiled.groupindex):
        raise InputError(source, "[snr] pattern needs the named groups (?P<noise>...) and (?P<snr>...)")
    return compiled
