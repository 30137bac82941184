"""schemas.bundle: the vectorised scores check agrees with the pandera ScoresSchema it implements, the parsers
turn hostile bytes into one BundleFileError, and read_bundle_file never follows a link or blocks on a FIFO."""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pandera.errors import SchemaError, SchemaErrors

from schemas.bundle import (
    SCORE_FILES_AT_ONCE,
    BundleFileError,
    csv_file_bytes,
    json_file_bytes,
    parse_checkpoints,
    parse_environment,
    parse_json_object,
    parse_operators,
    parse_score_files,
    parse_scores,
    parse_toml,
    parse_trial_list,
    parse_utterances,
    read_bundle_file,
)
from schemas.scores import COHORT_COLUMNS, ScoresSchema
from schemas.trials import TrialsSchema, plainly_valid


def _scores() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "trial_index": np.arange(6, dtype=np.int64),
            "label": np.array([1, 0, 1, 0, 0, 1], dtype=np.int8),
            "score": [0.9, 0.1, np.nan, 0.3, -0.2, 0.7],
            "status": ["scored", "scored", "test-failed", "scored", "scored", "scored"],
        }
    )


def _edit(column: str, position: int, value: object) -> Callable[[pd.DataFrame], pd.DataFrame]:
    def edit(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.copy()
        frame.loc[position, column] = value
        return frame

    return edit


CASES: dict[str, Callable[[pd.DataFrame], pd.DataFrame]] = {
    "valid": lambda frame: frame,
    "label-2": _edit("label", 0, 2),
    "bad-status": _edit("status", 1, "unknown"),
    "scored-nan": _edit("score", 0, np.nan),
    "unscored-with-score": _edit("score", 2, 0.5),
    "scored-inf": _edit("score", 3, np.inf),
    "negative-index": _edit("trial_index", 0, -1),
    "extra-column": lambda frame: frame.assign(extra=1),
    "missing-column": lambda frame: frame.drop(columns="status"),
    "cm-score": lambda frame: frame.assign(cm_score=[1.5, -2.0, np.nan, 0.3, 4.0, np.nan]),
    "cm-score-inf": lambda frame: frame.assign(cm_score=[1.5, -np.inf, 0.0, 0.3, 4.0, 1.0]),
    "cm-score-text": lambda frame: frame.assign(cm_score=["1.5", "a", "b", "c", "d", "e"]),
    "cohort": lambda frame: frame.assign(**_cohort()),
    "cohort-three-of-four": lambda frame: frame.assign(**_cohort()).drop(columns="test_cohort_std"),
    "cohort-nan-on-a-scored-trial": lambda frame: _edit("enrol_cohort_mean", 0, np.nan)(frame.assign(**_cohort())),
    "cohort-negative-std": lambda frame: _edit("test_cohort_std", 3, -0.1)(frame.assign(**_cohort())),
    "cohort-zero-std": lambda frame: _edit("test_cohort_std", 3, 0.0)(frame.assign(**_cohort())),
}


def _cohort() -> dict[str, list[float]]:
    """AS-norm cohort statistics of the six trials; NaN on the unscored third (its test side has no embedding)."""
    return {
        "enrol_cohort_mean": [0.2, 0.1, 0.3, 0.2, 0.1, 0.2],
        "enrol_cohort_std": [0.05, 0.04, 0.06, 0.05, 0.04, 0.05],
        "test_cohort_mean": [0.3, 0.2, np.nan, 0.1, 0.2, 0.3],
        "test_cohort_std": [0.06, 0.05, np.nan, 0.04, 0.05, 0.06],
    }


def _parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_vectorised_scores_check_agrees_with_the_pandera_model(case: str) -> None:
    frame = CASES[case](_scores())
    try:
        ScoresSchema.validate(frame, lazy=True)
        pandera_ok = True
    except (SchemaError, SchemaErrors):
        pandera_ok = False
    try:
        parsed = parse_scores("scores/r.parquet", _parquet(frame))
        fast_ok = True
    except BundleFileError:
        fast_ok = False
    assert fast_ok == pandera_ok
    if fast_ok:
        assert parsed.scored.tolist() == (frame["status"] == "scored").tolist()
        if "cm_score" in frame:
            np.testing.assert_array_equal(parsed.cm_scores, frame["cm_score"].to_numpy(float))
        else:
            assert parsed.cm_scores is None
        if "enrol_cohort_mean" in frame:
            np.testing.assert_array_equal(parsed.cohort, frame[list(COHORT_COLUMNS)].to_numpy(float))
        else:
            assert parsed.cohort is None


def test_the_scores_check_also_requires_trial_list_order() -> None:
    """Beyond the model's ``ge=0``: DESIGN section 10 puts scores in trial-list order, 0..n-1."""
    frame = _scores().iloc[[1, 0, 2, 3, 4, 5]]
    with pytest.raises(BundleFileError, match="trial_index"):
        parse_scores("scores/r.parquet", _parquet(frame))


def _each_as_alone(files: dict[str, bytes], max_rows: int | None = None) -> dict[str, object]:
    """``parse_score_files`` of all ``files``, asserted to give each file, in order, what it gets parsed alone."""
    together = parse_score_files(files, max_rows)
    assert list(together) == list(files)
    for name, data in files.items():
        alone = parse_score_files({name: data}, max_rows)[name]
        assert type(together[name]) is type(alone)
        if isinstance(alone, BundleFileError):
            assert str(together[name]) == str(alone)
        else:
            for field in ("labels", "scores", "scored"):
                np.testing.assert_array_equal(getattr(together[name], field), getattr(alone, field))
    return dict(together)


def test_score_files_checked_together_each_get_what_a_file_alone_gets() -> None:
    """The rules run once over many files' rows: each file's outcome is still its own (bad neighbours, an empty
    file, several row groups, string and large_string status)."""
    files = {f"scores/{case}.parquet": _parquet(edit(_scores())) for case, edit in sorted(CASES.items())}
    files["scores/empty.parquet"] = _parquet(_scores().iloc[:0])
    large = pa.Table.from_pandas(_scores(), preserve_index=False)
    large = large.set_column(3, "status", large.column("status").cast(pa.large_string()))
    buffer = io.BytesIO()
    pq.write_table(large, buffer, row_group_size=4)
    files["scores/groups.parquet"] = buffer.getvalue()
    together = _each_as_alone(files)
    assert not isinstance(together["scores/groups.parquet"], BundleFileError)
    assert "a status is not one of" in str(together["scores/empty.parquet"])


def test_a_bundle_of_many_score_files_parsed_in_two_processes_gets_each_file_its_own_outcome() -> None:
    """Past ``2 * SCORE_FILES_AT_ONCE`` files, half are parsed in a forked process: every file still gets what it
    gets alone, its refusal (pickled back) included, in the order given."""
    cases = sorted(CASES.items())
    files = {
        f"scores/{number:04d}-{case}.parquet": _parquet(edit(_scores()))
        for number in range(2 * SCORE_FILES_AT_ONCE // len(cases) + 1)
        for case, edit in cases
    }
    assert len(files) >= 2 * SCORE_FILES_AT_ONCE
    together = _each_as_alone(files, max_rows=6)
    assert sum(isinstance(outcome, BundleFileError) for outcome in together.values()) > len(files) // 2


TRIALS = (
    b"trial_index,enrol_utt,test_utt,label,enrol_speaker,test_speaker\n0,a1,b1,0,a,b\n1,a1,a2,1,a,a\n2,b2,a2,0,b,a\n"
)


@pytest.mark.parametrize(
    ("status", "problem"),
    [
        (pa.array(["scored"] * 6).dictionary_encode(), "column status is dictionary<values=string"),
        (pa.array([b"scored"] * 6), "column status is binary, expected string"),
        (pa.array([1] * 6), "column status is int64, expected string"),
    ],
    ids=["dictionary", "binary", "int"],
)
def test_a_status_column_of_another_type_is_refused_by_the_type_it_was_written_in(
    status: pa.Array, problem: str
) -> None:
    """The file is opened once with ``status`` read as a dictionary: the check still sees the type as written (a
    status stored as a dictionary is refused, as a string column read as one is not)."""
    table = pa.Table.from_pandas(_scores(), preserve_index=False)
    buffer = io.BytesIO()
    pq.write_table(table.set_column(3, "status", status), buffer)
    with pytest.raises(BundleFileError, match=problem.replace("[", r"\[")):
        parse_scores("scores/r.parquet", buffer.getvalue())


TRIAL_CASES = {
    "valid": TRIALS,
    "label-2": TRIALS.replace(b"1,a1,a2,1,a,a", b"1,a1,a2,2,a,a"),
    "index-order": TRIALS.replace(b"\n0,a1", b"\n7,a1"),
    "index-twice": TRIALS.replace(b"\n1,a1", b"\n0,a1"),
    "index-negative": TRIALS.replace(b"\n2,b2", b"\n-2,b2"),
    "index-float": TRIALS.replace(b"\n2,b2", b"\n2.0,b2"),
    "empty-utterance": TRIALS.replace(b",b2,", b",,"),
    "empty-speaker": TRIALS.replace(b",0,b,a", b",0,,a"),
    "label-speakers": TRIALS.replace(b"0,a1,b1,0,a,b", b"0,a1,b1,1,a,b"),
    "self-trial": TRIALS.replace(b"1,a1,a2", b"1,a1,a1"),
    "extra-column": TRIALS.replace(b"test_speaker\n", b"test_speaker,x\n").replace(b"\n", b",1\n")[:-2] + b"\n",
    "subgroup": TRIALS.replace(b"test_speaker\n", b"test_speaker,subgroup\n").replace(b",b\n", b",b,F\n"),
    "header-only": TRIALS.split(b"\n")[0] + b"\n",
}


@pytest.mark.parametrize("case", sorted(TRIAL_CASES))
def test_a_trial_list_passed_without_pandera_passes_pandera(case: str) -> None:
    """parse_trial_list skips pandera only for lists that ``plainly_valid`` passes: each of them passes the model
    unchanged, and the plain valid list is one of them."""
    text = dict.fromkeys(("enrol_utt", "test_utt", "enrol_speaker", "test_speaker"), str)
    frame = pd.read_csv(io.BytesIO(TRIAL_CASES[case]), dtype=text, keep_default_na=False, na_values=[""])
    assert plainly_valid(frame) == (case == "valid")
    if plainly_valid(frame):
        pd.testing.assert_frame_equal(TrialsSchema.validate(frame, lazy=True), frame, check_exact=True)
        assert parse_trial_list("trials/t.csv", TRIAL_CASES[case]) is not None


SPOOF_TRIALS = (
    b"trial_index,enrol_utt,test_utt,label,enrol_speaker,test_speaker,trial_kind,test_corpus\n"
    b"0,a1,b1,0,a,b,nontarget,c1\n1,a1,a2,1,a,a,target,c1\n2,a1,a9,0,a,a,spoof,c2\n"
)
SUBGROUP_TRIALS = TRIALS.replace(b"test_speaker\n", b"test_speaker,subgroup\n").replace(b",b\n", b",b,F\n")
OPTIONAL_CASES = {
    "subgroup": SUBGROUP_TRIALS,
    "subgroup-missing": SUBGROUP_TRIALS.replace(b",a,a,F\n", b",a,a,\n"),
    "spoof": SPOOF_TRIALS,
    "spoof-self-trial": SPOOF_TRIALS.replace(b"a1,a9,0", b"a1,a1,0"),
    "kind-unknown": SPOOF_TRIALS.replace(b"spoof,c2", b"replay,c2"),
    "kind-missing": SPOOF_TRIALS.replace(b"spoof,c2", b",c2"),
    "corpus-missing": SPOOF_TRIALS.replace(b"spoof,c2", b"spoof,"),
    "kind-label": SPOOF_TRIALS.replace(b"1,a,a,target", b"0,a,a,target"),
    "kind-without-corpus": SPOOF_TRIALS.replace(b",test_corpus", b"").replace(b",c1\n", b"\n").replace(b",c2\n", b"\n"),
}


@pytest.mark.parametrize("case", sorted(OPTIONAL_CASES))
def test_a_list_with_optional_columns_skips_pandera_only_where_pandera_passes_it(case: str) -> None:
    """A subgroup or spoof list as parse_trial_list reads it (the optional columns as Python strings): where
    ``plainly_valid`` passes it, pandera passes it unchanged; where pandera refuses it, ``plainly_valid`` did too
    (parse_trial_list raises pandera's finding); the valid cases take the fast path."""
    try:
        frame = parse_trial_list("trials/t.csv", OPTIONAL_CASES[case])
    except BundleFileError as error:
        assert "breaks the trial-list schema" in error.problem
        assert case not in {"subgroup", "subgroup-missing", "spoof", "spoof-self-trial"}
        return
    assert plainly_valid(frame) == (case in {"subgroup", "subgroup-missing", "spoof", "spoof-self-trial"})
    pd.testing.assert_frame_equal(TrialsSchema.validate(frame, lazy=True), frame, check_exact=True)


@pytest.mark.parametrize(
    ("parser", "data"),
    [
        (parse_scores, b"PAR1 truncated"),
        (parse_json_object, b"[1, 2]"),
        (parse_json_object, b"\xff\xfe{"),
        (parse_toml, b"[analysis\n"),
        (parse_trial_list, b"trial_index,enrol_utt\n0,a\n"),
        (parse_trial_list, b"\x00\x01\x02"),
        (parse_utterances, b"speaker,path\ns0,a.wav\n"),
        (parse_utterances, b"utt_id,speaker\na,s0\na,s1\n"),
        (parse_json_object, b'{"name": "\\ud800"}'),  # a lone surrogate, spelt as JSON's escape
        (parse_operators, b'{"chains": [1, 2]}'),
        (parse_operators, b'{"chains": {"c": 5}}'),
        (parse_operators, b'{"chains": {"c": {"failed": true}}}'),  # a count is never a boolean
        (parse_operators, b'{"chains": {"c": {"failed": -1}}}'),
        (parse_operators, b'{"records": {"r": {"chains": "noise"}}}'),
        (parse_operators, b'{"policy": 3}'),
        (parse_checkpoints, b'{"m1": 7}'),
        (parse_checkpoints, b'{"m1": {"checkpoint_blake3": ["ab"]}}'),
        (parse_checkpoints, b'{"m1": {"weights": {"origin": 1}}}'),
        (parse_environment, b'{"git": "abc"}'),
    ],
)
def test_hostile_bytes_are_one_bundle_file_error(parser: Callable[[str, bytes], object], data: bytes) -> None:
    with pytest.raises(BundleFileError) as caught:
        parser("some/file", data)
    assert str(caught.value).startswith("some/file: ")


def test_read_bundle_file_refuses_links_fifos_and_escapes(tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("secret")
    bundle = tmp_path / "bundle"
    (bundle / "trials").mkdir(parents=True)
    (bundle / "trials" / "ok.csv").write_text("x")
    (bundle / "trials" / "link.csv").symlink_to(tmp_path / "outside.txt")
    os.mkfifo(bundle / "trials" / "fifo.csv")
    (bundle / "linked").symlink_to(tmp_path)
    assert read_bundle_file(bundle, "trials/ok.csv") == b"x"
    for name, problem in (
        ("trials/link.csv", "a link"),
        ("trials/fifo.csv", "not a regular file"),
        ("../outside.txt", "unsafe name"),
        ("linked/outside.txt", "is a link"),
        ("trials/absent.csv", "missing"),
    ):
        with pytest.raises(BundleFileError, match=problem):
            read_bundle_file(bundle, name)


def test_a_corpus_table_gives_its_releases_and_an_older_one_says_it_records_none() -> None:
    from audit.result import corpus_release

    recorded = b"utt_id,speaker,source_package,source_version\na,s0,pkg-b,2.0\nb,s1,pkg-a,1.1\nc,s1,pkg-a,1.1\n"
    assert corpus_release(parse_utterances("corpus/x/utterances.csv", recorded)) == "pkg-a 1.1; pkg-b 2.0"
    older = parse_utterances("corpus/utterances.csv", b"utt_id,speaker\na,s0\n")  # before releases were recorded
    assert older["source_version"].isna().all() and corpus_release(older) == "not recorded"


# --- serialisers: the one format of the files the runner writes ------------------------------------------------


def test_json_files_are_sorted_indented_utf8_with_one_trailing_newline() -> None:
    data = json_file_bytes({"b": [1, 0.5], "a": {"é": None}})
    assert data == '{\n  "a": {\n    "é": null\n  },\n  "b": [\n    1,\n    0.5\n  ]\n}\n'.encode()
    assert parse_json_object("run.json", data) == {"a": {"é": None}, "b": [1, 0.5]}


def test_csv_files_have_no_index_and_lf_line_ends() -> None:
    frame = pd.DataFrame({"record_id": ["r1", "r2"], "eer": [0.25, 0.1]})
    assert csv_file_bytes(frame) == b"record_id,eer\nr1,0.25\nr2,0.1\n"


def test_the_json_documents_the_runner_writes_pass_their_shapes() -> None:
    """Fields nobody reads are kept; the counts, names and digests the audit reads are typed."""
    operators = {
        "policy": "drop-trial",
        "sources": {"noise": "synthetic"},
        "chains": {"c1": {"spec": [{"name": "opus"}], "applied": 3, "failed": 1, "fallback": 0, "reasons": {"x": 1}}},
        "records": {"r1": {"chains": ["c1"], "applied": 3, "failed": 1, "fallback": 0}},
    }
    assert parse_operators("operators.json", json_file_bytes(operators)) == operators
    checkpoints = {"m1": {"checkpoint_blake3": "ab" * 32, "weights": {"origin": "registry", "sha256": "cd"}}}
    assert parse_checkpoints("checkpoints.json", json_file_bytes(checkpoints)) == checkpoints
    assert parse_environment("environment.json", b'{"git": {"commit": "abc", "dirty": false}}')["git"]["dirty"] is False
