"""schemas.trials.speaker_counts on hand-counted trial lists, and the results schema's speaker-count columns."""

from __future__ import annotations

import pandas as pd

from schemas.results import validate_results
from schemas.trials import speaker_counts


def _trials(pairs: list[tuple[str, str]]) -> pd.DataFrame:
    """A trial list of (enrolment speaker, test speaker) pairs; a same-speaker pair is a target trial."""
    return pd.DataFrame(
        {
            "trial_index": range(len(pairs)),
            "enrol_utt": [f"{e}-e{i}" for i, (e, _) in enumerate(pairs)],
            "test_utt": [f"{t}-t{i}" for i, (_, t) in enumerate(pairs)],
            "label": [int(e == t) for e, t in pairs],
            "enrol_speaker": [e for e, _ in pairs],
            "test_speaker": [t for _, t in pairs],
        }
    )


def test_counts_of_a_hand_counted_list() -> None:
    # enrolment side: a, b, c (3); test side: a, b, d, e (4); either side: a, b, c, d, e (5)
    trials = _trials([("a", "a"), ("a", "d"), ("b", "b"), ("b", "e"), ("c", "a"), ("c", "d")])
    assert speaker_counts(trials) == {"n_speakers": 5, "n_enrol_speakers": 3, "n_test_speakers": 4}


def test_an_enrolment_side_subgroup_of_one_speaker() -> None:
    # the default corpus's male subgroup: one enrolment speaker m, non-targets against three others
    trials = _trials([("m", "m"), ("m", "m"), ("m", "f1"), ("m", "f2"), ("m", "f3")])
    assert speaker_counts(trials) == {"n_speakers": 4, "n_enrol_speakers": 1, "n_test_speakers": 4}


def test_speaker_ids_compare_as_text() -> None:
    # ids that pandas may read as numbers: 1 and "1" are one speaker, 01 another
    trials = _trials([("1", "1"), ("01", "1")])
    trials["enrol_speaker"] = [1, "01"]
    assert speaker_counts(trials) == {"n_speakers": 2, "n_enrol_speakers": 2, "n_test_speakers": 1}


def _row(**extra: str) -> dict[str, str]:
    base = {
        "record_id": "r1",
        "experiment": "D01",
        "model": "m",
        "corpus": "c",
        "condition": "clean",
        "eer": "0.1",
        "n_target": "10",
        "n_nontarget": "10",
    }
    return base | extra


def test_results_schema_takes_the_counts_as_optional_positive_integers() -> None:
    frame = pd.DataFrame([_row(n_speakers="5", n_enrol_speakers="3", n_test_speakers="4"), _row(record_id="r2")])
    frame.loc[1, ["n_speakers", "n_enrol_speakers", "n_test_speakers"]] = None
    checked = validate_results(frame)
    assert checked.failures == [] and len(checked.valid) == 2
    assert validate_results(pd.DataFrame([_row()])).failures == []  # a table without the columns
    bad = validate_results(pd.DataFrame([_row(n_speakers="0", n_enrol_speakers="2.5", n_test_speakers="x")]))
    assert {(f.column, f.check) for f in bad.failures} == {
        ("n_speakers", "must be > 0"),
        ("n_enrol_speakers", "must be an integer"),
        ("n_test_speakers", "must be an integer"),
    }
