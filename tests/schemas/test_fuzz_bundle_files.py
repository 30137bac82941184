"""Property-based fuzzing of the parsers of a bundle's files (``schemas.bundle``): whatever bytes a bundle holds
under a name (a bundle signed by its own key can hold anything), the parser returns its typed table or raises
``BundleFileError``; nothing else escapes."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from schemas.bundle import (
    SCORE_COLUMNS,
    TRIAL_COLUMNS_READ,
    UTTERANCE_COLUMNS_READ,
    BundleFileError,
    RecordScores,
    parse_json_object,
    parse_results,
    parse_scores,
    parse_toml,
    parse_trial_list,
    parse_utterances,
)
from tests.fuzzing import examples

FUZZ = settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
CELLS = st.sampled_from(["", "0", "1", "2", "-1", "nan", "inf", "1.5", "spk1", "u1", "target", "x", "1e400"]) | st.text(
    max_size=4
)
TRIAL_HEADER = ["trial_index", *TRIAL_COLUMNS_READ, "subgroup", "trial_kind", "test_corpus"]


def parses_or_refuses(parse: Callable[[str, bytes], Any], data: bytes) -> Any:
    try:
        return parse("bundle-file", data)
    except BundleFileError as error:
        assert str(error).startswith("bundle-file")
        return None


@FUZZ
@given(data=st.binary(max_size=200))
def test_any_bytes_under_any_name(data: bytes) -> None:
    for parse in (parse_json_object, parse_toml, parse_results, parse_trial_list, parse_utterances, parse_scores):
        parses_or_refuses(parse, data)


@st.composite
def csv_tables(draw: st.DrawFn, names: list[str]) -> bytes:
    header = draw(
        st.permutations(names)
        | st.lists(st.sampled_from(names) | st.text(max_size=3), min_size=1, max_size=len(names) + 2)
    )
    rows = draw(st.lists(st.lists(CELLS, min_size=len(header), max_size=len(header)), max_size=4))
    text = io.StringIO()
    csv.writer(text).writerows([header, *rows])
    return text.getvalue().encode("utf-8", errors="surrogatepass")


@st.composite
def plausible_trial_lists(draw: st.DrawFn) -> bytes:
    """A valid trial list (targets within a speaker, non-targets across), one cell sometimes made hostile."""
    rows = []
    for index in range(draw(st.integers(1, 5))):
        enrol, test = draw(st.sampled_from(["s1", "s2"])), draw(st.sampled_from(["s1", "s2"]))
        rows.append([str(index), f"u{index}e", f"u{index}t", str(int(enrol == test)), enrol, test])
    if draw(st.booleans()):
        rows[draw(st.integers(0, len(rows) - 1))][draw(st.integers(0, 5))] = draw(CELLS)
    text = io.StringIO()
    csv.writer(text).writerows([["trial_index", *TRIAL_COLUMNS_READ], *rows])
    return text.getvalue().encode("utf-8", errors="surrogatepass")


@FUZZ
@given(
    data=csv_tables(TRIAL_HEADER)
    | plausible_trial_lists()
    | csv_tables(["utt_id", "speaker", "spoof_system", "gender", "source_version"])
)
@pytest.mark.slow
def test_any_csv_over_the_bundle_columns(data: bytes) -> None:
    trials = parses_or_refuses(parse_trial_list, data)
    utterances = parses_or_refuses(parse_utterances, data)
    event(f"trials {'read' if trials is not None else 'refused'}")
    event(f"utterances {'read' if utterances is not None else 'refused'}")
    if trials is not None:
        assert set(TRIAL_COLUMNS_READ) <= set(trials.columns)
    if utterances is not None:
        assert utterances.index.is_unique and list(utterances.columns) == list(UTTERANCE_COLUMNS_READ)


def _parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), buffer)
    return buffer.getvalue()


VALID_SCORES = _parquet(
    pd.DataFrame(
        {
            "trial_index": [0, 1, 2],
            "label": [1, 0, 1],
            "score": [0.5, np.nan, -1.0],
            "status": ["scored", "test-failed", "scored"],
        }
    )
)


def test_a_column_name_that_is_not_utf8_is_a_bundle_file_error() -> None:
    """Found by the fuzzing below: Arrow decodes column names lazily and raised UnicodeDecodeError."""
    assert b"status" in VALID_SCORES
    with pytest.raises(BundleFileError, match="not a Parquet file"):
        parse_scores("scores/r1.parquet", VALID_SCORES.replace(b"status", b"\x80tatus"))


@FUZZ
@given(position=st.integers(0, len(VALID_SCORES) - 1), value=st.integers(0, 255))
def test_a_changed_byte_of_a_scores_file(position: int, value: int) -> None:
    data = bytearray(VALID_SCORES)
    data[position] = value
    scores = parses_or_refuses(parse_scores, bytes(data))
    if scores is not None:
        assert isinstance(scores, RecordScores)
        assert np.array_equal(np.isfinite(scores.scores), scores.scored)
        assert set(np.unique(scores.labels)) <= {0, 1}


@FUZZ
@given(
    columns=st.dictionaries(
        st.sampled_from([*SCORE_COLUMNS, "extra"]),
        st.lists(
            st.none() | st.integers(-3, 3) | st.floats() | st.sampled_from(["scored", "enrol-failed", "x"]),
            min_size=2,
            max_size=2,
        ),
        min_size=1,
    )
)
def test_any_parquet_table_of_scores(columns: dict[str, list[Any]]) -> None:
    import pyarrow as arrow

    try:
        table = arrow.table({name: arrow.array(values) for name, values in columns.items()})
    except (arrow.ArrowInvalid, arrow.ArrowTypeError):
        return  # a column Arrow itself cannot hold (mixed types): not a file anyone can write
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    parses_or_refuses(parse_scores, buffer.getvalue())
