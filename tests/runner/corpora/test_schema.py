"""The utterance-table contract: schema checks, CSV round trip, named errors, the adapter registry."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from runner.corpora import ADAPTERS, CorpusError, CorpusTable, Problem, load_corpus, read_utterances
from runner.corpora.base import PROBLEMS_FILE, UTTERANCES_FILE, validate_utterances
from schemas.utterances import UTTERANCE_COLUMNS, UtteranceSchema

DIGEST = "0" * 64


def row(utt_id: str, **fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        "utt_id": utt_id,
        "speaker": "spk",
        "path": f"audio/{utt_id}.wav",
        "duration_s": 1.5,
        "sample_rate": 16000,
        "blake3": DIGEST,
    }
    return {**base, **fields}


def test_minimal_table_validates_and_optional_columns_may_be_absent() -> None:
    frame = UtteranceSchema.validate(pd.DataFrame([row("a"), row("b", gender="F", age=31)]))
    assert list(frame["utt_id"]) == ["a", "b"]


@pytest.mark.parametrize(
    ("bad", "column"),
    [
        ({"duration_s": 0.0}, "duration_s"),
        ({"gender": "female"}, "gender"),
        ({"path": "/abs/a.wav"}, "path"),
        ({"path": "../outside.wav"}, "path"),
        ({"path": "audio\\a.wav"}, "path"),
        ({"blake3": "xyz"}, "blake3"),
        ({"sample_rate": -8000}, "sample_rate"),
    ],
)
def test_each_broken_field_is_named(bad: dict[str, object], column: str) -> None:
    with pytest.raises(CorpusError) as caught:
        validate_utterances(pd.DataFrame([row("a"), row("b", **bad)]), "table.csv")
    assert caught.value.column == column
    assert caught.value.row == 2
    assert caught.value.line().startswith("table.csv, row 2, column")


def test_duplicate_ids_unknown_columns_and_shared_paths_are_rejected() -> None:
    with pytest.raises(CorpusError, match="field_uniqueness"):
        validate_utterances(pd.DataFrame([row("a"), row("a", path="audio/other.wav")]), "t")
    with pytest.raises(CorpusError, match="column_in_schema"):
        validate_utterances(pd.DataFrame([row("a", nationality="Ireland")]), "t")
    with pytest.raises(CorpusError, match="one_path_per_utterance"):
        validate_utterances(pd.DataFrame([row("a"), row("b", path="audio/a.wav")]), "t")


def test_csv_round_trip_keeps_values_and_nulls(tmp_path: Path) -> None:
    records = [row("b", gender="M", transcript='say "NA" twice, ok'), row("a", accent="NA", age=40)]
    table = CorpusTable.from_records(records, [Problem("x.wav", "skipped: y")], "test")
    table.write(tmp_path)
    header = (tmp_path / UTTERANCES_FILE).read_text().splitlines()[0]
    assert header == ",".join(UTTERANCE_COLUMNS)
    back = read_utterances(tmp_path / UTTERANCES_FILE)
    assert list(back["utt_id"]) == ["a", "b"]  # sorted by utt_id
    assert back.loc[0, "accent"] == "NA"  # the string NA is a value, not a null
    assert back.loc[0, "age"] == 40.0
    assert pd.isna(back.loc[0, "gender"])
    assert back.loc[1, "transcript"] == 'say "NA" twice, ok'
    assert (tmp_path / PROBLEMS_FILE).read_text() == "path,reason\nx.wav,skipped: y\n"


def test_broken_csv_value_names_file_row_and_column(tmp_path: Path) -> None:
    path = tmp_path / UTTERANCES_FILE
    path.write_text(f"utt_id,speaker,path,duration_s,sample_rate,blake3\na,s,a.wav,abc,16000,{DIGEST}\n")
    with pytest.raises(CorpusError) as caught:
        read_utterances(path)
    assert (caught.value.source, caught.value.row, caught.value.column) == (str(path), 1, "duration_s")


def test_load_corpus_names_missing_folder_and_unknown_corpus(tmp_path: Path) -> None:
    assert {"ravdess", "torgo", "ears", "common_voice", "l2_arctic", "voxceleb1", "asterisk"} <= set(ADAPTERS)
    missing = tmp_path / "RAVDESS"
    with pytest.raises(CorpusError) as caught:
        load_corpus("ravdess", missing)
    assert caught.value.line() == f"{missing}: corpus folder not found: provide the ravdess corpus in this folder"
    with pytest.raises(CorpusError, match="unknown corpus 'timit'"):
        load_corpus("timit", tmp_path)


def test_schema_and_corpora_import_no_torch() -> None:
    code = "import sys, schemas.utterances, runner.corpora; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
