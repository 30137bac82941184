"""audit.table.seeds: the spread of EERs and IEs across seeds, worked by hand; bad inputs are one line."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from audit.table.seeds import read_seed_tables, seed_spread
from schemas.errors import InputError
from schemas.results import validate_results, with_all_columns

LEVELS = (("none", "none"), ("x", "none"), ("none", "y"), ("x", "y"))


def _rows(seed: int, eers: tuple[float, float, float, float], extra: float | None = None) -> list[dict[str, str]]:
    rows = [
        {
            "record_id": f"s{seed}-{a}-{b}",
            "experiment": "E14",
            "model": "m1",
            "corpus": "c1",
            "condition": f"{a}/{b}",
            "eer": str(eer),
            "n_target": "100",
            "n_nontarget": "100",
            "factor_a": "fa",
            "level_a": a,
            "factor_b": "fb",
            "level_b": b,
            "seed": str(seed),
        }
        for (a, b), eer in zip(LEVELS, eers, strict=True)
    ]
    if extra is not None:
        rows.append({**rows[0], "record_id": f"s{seed}-extra", "condition": "extra", "factor_a": "", "level_a": "",
                     "factor_b": "", "level_b": "", "eer": str(extra)})  # fmt: skip
    return rows


def _table(rows: list[dict[str, str]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, dtype=str).replace("", None)
    validated = validate_results(frame)
    assert validated.failures == []
    return with_all_columns(validated.valid)


def test_spread_by_hand() -> None:
    # IE: 0.32 - (0.2 + 0.2 - 0.1) = 0.02 with seed 1, 0.36 - (0.25 + 0.2 - 0.1) = 0.01 with seed 2.
    tables = {1: _table(_rows(1, (0.1, 0.2, 0.2, 0.32), extra=0.4)), 2: _table(_rows(2, (0.1, 0.25, 0.2, 0.36)))}
    spread = seed_spread(tables)
    assert spread["seeds"] == [1, 2]
    (ie,) = spread["ie"]
    assert ie["by_seed"] == {"1": pytest.approx(0.02), "2": pytest.approx(0.01)}
    assert ie["sd"] == pytest.approx(0.01 / math.sqrt(2)) and ie["range"] == pytest.approx(0.01)
    by_condition = {row["condition"]: row for row in spread["eer"]}
    assert by_condition["x/none"]["mean"] == pytest.approx(0.225) and by_condition["x/none"]["range"] == pytest.approx(
        0.05
    )
    assert by_condition["extra"]["n_seeds"] == 1 and by_condition["extra"]["missing_in"] == 1
    assert by_condition["extra"]["sd"] is None
    assert spread["largest_eer_range"] == pytest.approx(0.05) and spread["largest_ie_range"] == pytest.approx(0.01)


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_tables_are_keyed_by_their_recorded_seed(tmp_path: Path) -> None:
    first = _write(tmp_path / "a.csv", _rows(3, (0.1, 0.2, 0.2, 0.3)))
    second = _write(tmp_path / "b.csv", _rows(4, (0.1, 0.2, 0.2, 0.3)))
    assert sorted(read_seed_tables([first, second])) == [3, 4]
    with pytest.raises(InputError, match="seed 3 is already given"):
        read_seed_tables([first, first])
    no_seed = _write(
        tmp_path / "c.csv", [{k: v for k, v in row.items() if k != "seed"} for row in _rows(5, (0.1,) * 4)]
    )
    with pytest.raises(InputError, match="one run seed"):
        read_seed_tables([no_seed])
