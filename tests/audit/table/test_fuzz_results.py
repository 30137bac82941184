"""Property-based fuzzing of the results-table reader: any bytes, and any CSV over the results columns with
hostile cells, are either read (and then validated, and audited, without an exception) or refused with one
``InputError``; nothing else escapes."""

from __future__ import annotations

import csv
import io
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from audit.table.reading import read_results
from audit.verify import AuditRequest, verify
from schemas.errors import InputError
from schemas.results import KNOWN_COLUMNS, REQUIRED_COLUMNS, ValidatedResults, validate_results, with_all_columns
from tests.fuzzing import examples

CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
FUZZ = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])

CELLS = st.sampled_from(
    [
        "",
        " ",
        "nan",
        "NaN",
        "inf",
        "-inf",
        "1e400",
        "-0",
        "0",
        "0.5",
        "1",
        "12.5",
        "1e-320",
        "3.0",
        "-5",
        "E13",
        "D01",
        "x",
        "None",
        "NA",
        "null",
        "0x10",
        "1_000",
        " 7 ",
        "٣",
        "\u00a0",
        "r1",
        "clean",
        "rocch",
        "speaker",
    ]
) | st.text(max_size=6)
HEADER_NAMES = st.sampled_from(sorted(KNOWN_COLUMNS)) | st.text(max_size=5)


@contextmanager
def file_with(data: bytes) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.csv"
        path.write_bytes(data)
        yield path


def read_and_validate(data: bytes) -> ValidatedResults | None:
    with file_with(data) as path:
        try:
            source = read_results(path)
        except InputError as error:
            assert str(path) in error.line() and "\n" not in error.line()
            return None
    validated = validate_results(source.frame)
    with_all_columns(validated.valid)
    return validated


@FUZZ
@given(data=st.binary(max_size=300))
def test_any_bytes_are_read_or_refused_with_one_line(data: bytes) -> None:
    read_and_validate(data)


@st.composite
def table_texts(draw: st.DrawFn) -> str:
    """A CSV whose header mixes the required columns, other results columns and junk, with hostile cells."""
    required = draw(st.lists(st.sampled_from(REQUIRED_COLUMNS), unique=True, min_size=1))
    header = required + draw(st.lists(HEADER_NAMES, max_size=4))
    header = draw(st.permutations(header))
    rows = draw(st.lists(st.lists(CELLS, min_size=len(header), max_size=len(header)), min_size=1, max_size=5))
    text = io.StringIO()
    csv.writer(text).writerows([header, *rows])
    return text.getvalue()


def tables() -> st.SearchStrategy[bytes]:
    return table_texts().map(lambda text: text.encode("utf-8", errors="surrogatepass"))


def read_frame(data: bytes) -> pd.DataFrame | None:
    with file_with(data) as path:
        try:
            return read_results(path).frame
        except InputError:
            return None


@pytest.mark.parametrize(
    "name", ['sub"group', "sub\ngroup", "sub\\group", "sub\x7fgroup", "sub\x85group", "sub\u2028group"]
)
def test_the_did_you_mean_map_is_one_line_of_toml_that_the_audit_accepts(tmp_path: Path, name: str) -> None:
    """The rename the refusal suggests, pasted into a --columns map, reads the table: quoted as TOML, not raw."""
    table = tmp_path / "results.csv"
    pd.DataFrame({"record_id": ["r1"], "eer": ["0.1"], name: ["gender=F"]}).to_csv(table, index=False)
    with pytest.raises(InputError) as refused:
        read_results(table)
    line = refused.value.line()
    assert len(line.splitlines()) == 1 and "did you mean 'subgroup'?" in line
    (tmp_path / "map.toml").write_text(
        "[columns]\n" + re.search(r"--columns map \((.*)\); an extra", line)[1] + "\n", encoding="utf-8"
    )
    assert read_results(table, tmp_path / "map.toml").frame["subgroup"].tolist() == ["gender=F"]


@pytest.mark.slow
@FUZZ
@given(text=table_texts())
@example(text="record_id\r\n\u0100\r\n")  # U+0100 puts its NUL on the other side of its unit
@example(text='record_id,"\n\x80\x80\u00b4"\r\n,\r\n')  # a header cell with a line break, quoted in the line
def test_any_results_csv_validates_without_an_exception(text: str) -> None:
    """Property: read and validated without an exception; read alike from UTF-8 (with or without a BOM) and
    UTF-16."""
    data = text.encode("utf-8", errors="surrogatepass")
    frame = read_frame(data)
    encodings = ["utf-8-sig", "utf-16"]
    if not CONTROL.search(text) and 2 * sum(map(str.isascii, text)) > len(text):
        encodings += ["utf-16-le", "utf-16-be"]  # without a byte-order mark: recognised when mostly ASCII
    for encoding in encodings:
        other = read_frame(text.encode(encoding, errors="surrogatepass"))
        assert (frame is None and other is None) or (frame is not None and other is not None and frame.equals(other))
    validated = read_and_validate(data)
    event("refused" if validated is None else f"read, {len(validated.failures) > 0} failures")
    if validated is not None:
        for failure in validated.failures:
            assert failure.row is None or failure.row >= 1


LEVELS = ("none", "babble", "opus")
PLAUSIBLE = {
    "experiment": st.sampled_from(["E13", "E14", "D01"]),
    "model": st.sampled_from(["m1", "m2"]),
    "corpus": st.sampled_from(["c1", "c2"]),
    "condition": st.sampled_from(["clean", "babble", "opus", "babble+opus"]),
    "eer": st.floats(0, 0.6).map(lambda value: f"{value:.4f}"),
    "n_target": st.integers(1, 500).map(str),
    "n_nontarget": st.integers(1, 5000).map(str),
    "factor_a": st.just("noise"),
    "level_a": st.sampled_from(LEVELS),
    "factor_b": st.just("codec"),
    "level_b": st.sampled_from(LEVELS),
    "subgroup": st.sampled_from(["", "female", "male"]),
    "model_family": st.sampled_from(["speaker", "ssl", "baseline"]),
}


@st.composite
def plausible_tables(draw: st.DrawFn) -> bytes:
    """A table of mostly valid rows over a factorial design (so contrasts, gaps and aggregates are derived), a
    few cells swapped for hostile ones."""
    header = ["record_id", *PLAUSIBLE]
    rows = []
    for index in range(draw(st.integers(1, 12))):
        row = [f"r{index}"] + [draw(strategy) for strategy in PLAUSIBLE.values()]
        if draw(st.integers(0, 3)) == 0:
            row[draw(st.integers(0, len(row) - 1))] = draw(CELLS)
        rows.append(row)
    text = io.StringIO()
    csv.writer(text).writerows([header, *rows])
    return text.getvalue().encode()


@pytest.mark.slow
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables() | plausible_tables())
def test_the_whole_audit_of_any_table_ends_in_a_report_or_an_input_error(data: bytes) -> None:
    with file_with(data) as path:
        try:
            report = verify(AuditRequest(path))
        except InputError:
            event("refused")
            return
    event(f"audited: {report['verdict']}")
    assert report["verdict"] in ("pass", "fail")
