"""The results schema (every failure by row and column, never an exception) and reading a table as text."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest

from audit.table.reading import read_results
from schemas.results import REQUIRED_COLUMNS, validate_results

HEADER = "record_id,experiment,model,corpus,condition,eer,n_target,n_nontarget"
GOOD = {
    "record_id": "r1",
    "experiment": "E14",
    "model": "m1",
    "corpus": "c1",
    "condition": "clean",
    "eer": "0.1",
    "n_target": "100",
    "n_nontarget": "1000",
}


def text_frame(*rows: dict[str, str]) -> pd.DataFrame:
    """An all-text frame as the reader makes it (an empty cell is missing)."""
    return pd.DataFrame([{k: v or None for k, v in row.items()} for row in rows], dtype=str)


def test_valid_rows_pass_with_parsed_types() -> None:
    result = validate_results(text_frame(GOOD, GOOD | {"record_id": "r2", "eer": "0.25"}))
    assert result.failures == []
    assert result.missing_required == []
    assert result.valid["eer"].tolist() == [0.1, 0.25]
    assert str(result.valid["n_target"].dtype) == "Int64"


@pytest.mark.parametrize(
    ("column", "value", "check"),
    [
        ("eer", "abc", "must be a number"),
        ("eer", "nan", "must not be empty or NaN"),
        ("eer", "inf", "must be finite"),
        ("eer", "-0.1", "must be >= 0"),
        ("eer", "", "must not be empty or NaN"),
        ("n_target", "0", "must be > 0"),
        ("n_target", "12.5", "must be an integer"),
        ("n_nontarget", "many", "must be an integer"),
        ("experiment", "", "must not be empty or NaN"),
        ("model", "", "must not be empty or NaN"),
        ("model_family", "cnn", "must be one of speaker, ssl, baseline"),
        ("eer_method", "brentq", "must be one of legacy, rocch, interp"),
        ("auc", "1.5", "must be <= 1"),
        ("min_dcf", "inf", "must be finite"),
        ("p_target", "0", "must be > 0"),
        ("seed", "x", "must be an integer"),
    ],
)
def test_each_bad_cell_is_one_failure_with_row_and_column(column: str, value: str, check: str) -> None:
    bad = GOOD | {"record_id": "r2", column: value}
    result = validate_results(text_frame(GOOD, bad))
    assert [(f.row, f.column, f.check) for f in result.failures] == [(2, column, check)]
    assert result.failures[0].record_id == "r2"
    assert result.valid["record_id"].tolist() == ["r1"]


def test_every_failure_is_reported_not_just_the_first() -> None:
    rows = [
        GOOD,
        GOOD | {"record_id": "r2", "eer": "x", "n_target": "-3"},
        GOOD | {"record_id": "r3", "corpus": ""},
    ]
    result = validate_results(text_frame(*rows))
    assert [(f.row, f.column) for f in result.failures] == [(2, "eer"), (2, "n_target"), (3, "corpus")]
    assert result.n_invalid_rows == 2


def test_duplicate_record_ids_fail_on_every_copy() -> None:
    result = validate_results(text_frame(GOOD, GOOD | {"eer": "0.2"}, GOOD | {"record_id": "r3"}))
    assert [(f.row, f.check, f.value) for f in result.failures] == [
        (1, "must be unique", "r1"),
        (2, "must be unique", "r1"),
    ]
    assert result.valid["record_id"].tolist() == ["r3"]


def test_missing_required_columns_leave_nothing_usable() -> None:
    frame = text_frame(GOOD).drop(columns=["eer", "n_target"])
    result = validate_results(frame)
    assert result.missing_required == ["eer", "n_target"]
    assert [(f.row, f.column, f.check) for f in result.failures] == [
        (None, "eer", "required column is missing"),
        (None, "n_target", "required column is missing"),
    ]
    assert result.valid.empty


def test_optional_columns_may_be_empty_and_extra_columns_are_kept() -> None:
    row = GOOD | {"model_family": "", "auc": "", "seed": "", "legacy_note": "anything"}
    result = validate_results(text_frame(row))
    assert result.failures == []
    assert result.valid["legacy_note"].tolist() == ["anything"]


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_labels_that_look_like_missing_values_stay_labels(tmp_path: Path) -> None:
    path = write(tmp_path / "r.csv", f"{HEADER},level_a\nr1,E14,NA,None,nan,0.1,100,1000,none\n")
    frame = read_results(path).frame
    assert [frame.at[0, c] for c in ("model", "corpus", "condition", "level_a")] == [
        "NA",
        "None",
        "nan",
        "none",
    ]


def test_html_in_labels_is_kept_verbatim(tmp_path: Path) -> None:
    label = "<script>alert(1)</script>"
    path = write(tmp_path / "r.csv", f'{HEADER}\nr1,E14,"{label}",c,clean,0.1,100,1000\n')
    frame = read_results(path).frame
    assert frame.loc[0, "model"] == label
    assert validate_results(frame).failures == []


def test_column_map_renames_and_the_file_is_untouched(tmp_path: Path) -> None:
    legacy = "id,Experiment,Model,Dataset,Condition,EER,targets,nontargets\nr1,E14,m,c,clean,0.1,100,1000\n"
    path = write(tmp_path / "legacy.csv", legacy)
    columns = ["record_id", "experiment", "model", "corpus", "condition", "eer", "n_target", "n_nontarget"]
    legacy_names = legacy.splitlines()[0].split(",")
    mapping = "[columns]\n" + "".join(f'"{old}" = "{new}"\n' for old, new in zip(legacy_names, columns, strict=True))
    column_map = write(tmp_path / "map.toml", mapping)
    before = path.read_bytes()
    source = read_results(path, column_map)
    assert list(source.frame.columns) == list(REQUIRED_COLUMNS)
    assert source.renamed["EER"] == "eer"
    assert source.digest.sha256 == hashlib.sha256(before).hexdigest()
    assert path.read_bytes() == before


@pytest.mark.parametrize("experiment", ["E22", "vox1_O", "D1", "e01"])
def test_experiment_ids_are_free(experiment: str) -> None:
    """Any id passes the schema; only E01..E21 rows are held to the paper's coverage matrix (test_flags)."""
    result = validate_results(text_frame(GOOD | {"experiment": experiment}))
    assert result.failures == []
