"""Sensitivity to the seed: the spread of every EER and IE across runs that differ only in their seed (trial
sampling and degradation), from their results tables (``interbias run --seeds N`` writes one bundle per seed).

A record is identified across runs by what it measures (experiment, model, corpus, condition, subgroup,
enrolment and test conditions), not by its id; a contrast by its setting. A key missing from some runs is counted
(``n_seeds`` below the number of runs), never filled in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from audit.table.contrasts import derive_contrasts
from audit.table.reading import read_results
from schemas import InputError, validate_results, with_all_columns

RECORD_KEY = ("experiment", "model", "corpus", "condition", "subgroup", "enrol_condition", "test_condition")
CONTRAST_KEY = ("experiment", "model", "corpus", "subgroup", "factor_a", "level_a", "factor_b", "level_b")


def _spread(key: Mapping[str, Any], values: Mapping[int, float], n_runs: int) -> dict[str, Any]:
    array = np.array(list(values.values()), dtype=float)
    return {
        **key,
        "n_seeds": len(values),
        "missing_in": n_runs - len(values),
        "mean": float(array.mean()),
        "sd": float(array.std(ddof=1)) if array.size > 1 else None,
        "min": float(array.min()),
        "max": float(array.max()),
        "range": float(array.max() - array.min()),
        "by_seed": {str(seed): float(value) for seed, value in sorted(values.items())},
    }


def seed_spread(tables: Mapping[int, pd.DataFrame]) -> dict[str, Any]:
    """Per record and per contrast, the value in each seed's run and its mean, SD (ddof 1), min, max and range.

    ``tables``: seed -> validated results rows with every optional column present. Also the largest range of
    each, so a reader sees at once how much a single run's numbers depend on its seed.
    """
    records: dict[tuple[Any, ...], dict[int, float]] = defaultdict(dict)
    contrasts: dict[tuple[Any, ...], dict[int, float]] = defaultdict(dict)
    for seed, frame in tables.items():
        keyed = frame.reindex(columns=[*RECORD_KEY, "eer"])
        for row in keyed.itertuples(index=False):
            key = tuple(None if pd.isna(value) else str(value) for value in row[:-1])
            records[key][seed] = float(row[-1])
        for contrast in derive_contrasts(frame).contrasts:
            contrasts[tuple(getattr(contrast, name) for name in CONTRAST_KEY)][seed] = contrast.ie
    n_runs = len(tables)
    eer_rows = [
        _spread(dict(zip(RECORD_KEY, key, strict=True)), v, n_runs) for key, v in sorted(records.items(), key=str)
    ]
    ie_rows = [
        _spread(dict(zip(CONTRAST_KEY, key, strict=True)), v, n_runs) for key, v in sorted(contrasts.items(), key=str)
    ]
    return {
        "seeds": sorted(tables),
        "eer": eer_rows,
        "ie": ie_rows,
        "largest_eer_range": max((row["range"] for row in eer_rows), default=None),
        "largest_ie_range": max((row["range"] for row in ie_rows), default=None),
    }


def read_seed_tables(paths: list[Path]) -> dict[int, pd.DataFrame]:
    """Each results table's rows that pass the schema, keyed by the run seed its ``seed`` column records (one
    seed per table; two tables with one seed, or a table without one, is an InputError)."""
    tables: dict[int, pd.DataFrame] = {}
    for path in paths:
        frame = with_all_columns(validate_results(read_results(path).frame).valid)
        seeds: list[Any] = frame["seed"].dropna().unique().tolist() if "seed" in frame else []
        if len(seeds) != 1:
            raise InputError(str(path), f"expected one run seed in column 'seed', found {len(seeds)}")
        seed = int(seeds[0])
        if seed in tables:
            raise InputError(str(path), f"seed {seed} is already given by another table")
        tables[seed] = frame
    return tables
