"""The trial checks on synthetic bundles: the signed trial lists against the corpus tables, the rows and the
operator records; speaker counts against a hand count.

The rows' metrics come from independent oracles in ``tests/provenance/synthetic_bundle.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from audit.bundle import verification
from audit.bundle import verified as bundle_errors
from schemas.flags import Severity, has_errors
from tests.audit.bundle.bundle_checks import RECORD, by_id, error_ids, failures_of, sections_of, verify_bundle
from tests.provenance.synthetic_bundle import build_bundle


def test_contrast_terms_on_different_trial_lists_are_unmatched(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path, odd_trial_list_record=RECORD)
    flags, _ = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert error_ids(flags) == {"unmatched-trials"}
    records = set(by_id(flags)["unmatched-trials"].records)
    m1_terms = {"E13-m1-none-none", "E13-m1-babble-none", "E13-m1-none-opus", RECORD}
    assert m1_terms | {"E13-m2-babble-opus"} == records  # the m1 contrast, and both encoders of that condition


@pytest.mark.parametrize("forked", [False, True])
def test_trials_naming_utterances_or_speakers_the_corpus_table_lacks_are_caught(
    forked: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same failures and section whether the check runs in line or in a fork (``FORKED_UTTERANCE_TRIALS``, which a
    paper-scale bundle reaches): its error crosses the pipe with its failures."""
    if forked:
        monkeypatch.setattr(verification, "FORKED_UTTERANCE_TRIALS", 0)

    def break_table(table: pd.DataFrame) -> pd.DataFrame:
        table = table[table["utt_id"] != "s1-u1b"]  # trial 1 tests s1-u1b: now unlisted
        return table.assign(speaker=table["speaker"].where(table["utt_id"] != "s2-u0a", "s4"))  # trial 0 enrols s2

    bundle = build_bundle(tmp_path, corpus_table_edit=break_table)
    trials = pd.read_csv(bundle.root / "trials" / f"{bundle.trial_list_ids[0]}.csv")
    assert list(trials.loc[0, ["enrol_utt", "enrol_speaker"]]) == ["s2-u0a", "s2"]
    assert trials.loc[1, "test_utt"] == "s1-u1b"
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert error_ids(flags) == {"trial-utterances"}
    assert [failure["problem"] for failure in failures_of(flags, "trial-utterances")] == [
        "1 enrol speaker(s) differ from corpus 'synthetic'",
        "1 test utterance(s) not in corpus 'synthetic', e.g. 's1-u1b'",
    ]
    assert sections_of(sections)["bundle-trial-utterances"]["status"] == "fail"


def test_operator_fallbacks_are_reported_as_a_warning(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path, fallback_record=RECORD)
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert not has_errors(flags)
    warning = by_id(flags)["operator-failures"]
    assert warning.severity is Severity.WARNING and RECORD in warning.records  # the others: their failed sides
    table = sections_of(sections)["bundle-operators"]["table"]
    assert {row["chain"]: row["fallback"] for row in table} == {"codec-opus": 0, "noise-babble": 3}


def _hand_counted_speakers(bundle_root: Path, list_id: str) -> dict[str, int]:
    """Speakers of a trial list counted with plain sets over the CSV rows (not schemas.trials)."""
    trials = pd.read_csv(bundle_root / "trials" / f"{list_id}.csv", dtype=str)
    enrol, test = set(trials["enrol_speaker"]), set(trials["test_speaker"])
    return {"n_speakers": len(enrol | test), "n_enrol_speakers": len(enrol), "n_test_speakers": len(test)}


def _with_counts(root: Path, wrong_record: str | None = None) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """A results edit adding the hand-counted speakers (one enrolment speaker short for ``wrong_record``)."""

    def edit(results: pd.DataFrame) -> pd.DataFrame:
        counts = _hand_counted_speakers(root, str(results["trial_list_id"].iloc[0]))
        results = results.assign(**counts)
        results.loc[results["record_id"] == wrong_record, "n_enrol_speakers"] = counts["n_enrol_speakers"] - 1
        return results

    return edit


def test_speaker_counts_are_checked_against_the_signed_trial_list(tmp_path: Path) -> None:
    good = build_bundle(tmp_path / "good", results_edit=_with_counts(tmp_path / "good" / "bundle"))
    assert good.read_results()[
        ["n_speakers", "n_enrol_speakers", "n_test_speakers"]
    ].drop_duplicates().values.tolist() == [[6, 6, 6]]  # six speakers s0..s5, each on both sides of 160 trials
    flags, sections = verify_bundle(good.read_results(), good.root, good.public_key)
    assert flags == []
    assert "speaker counts given equal their trial lists'" in sections_of(sections)["bundle-rescore"]["lines"][0]
    bad = build_bundle(tmp_path / "bad", results_edit=_with_counts(tmp_path / "bad" / "bundle", RECORD))
    flags, _ = verify_bundle(bad.read_results(), bad.root, bad.public_key)
    assert error_ids(flags) == {"score-mismatch"}
    assert failures_of(flags, "score-mismatch") == [
        {"record_id": RECORD, "problem": "n_enrol_speakers 5 but its trial list has 6"}
    ]


def test_a_passing_check_in_a_fork_reports_what_it_reports_in_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = build_bundle(tmp_path)
    in_line = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    monkeypatch.setattr(verification, "FORKED_UTTERANCE_TRIALS", 0)
    forked = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert forked == in_line
    assert sections_of(forked[1])["bundle-trial-utterances"]["status"] == "pass"


def test_every_bundle_error_pickles_with_what_the_line_reads() -> None:
    """A step run in a fork sends its error through a pipe: each kind comes back with its reason, message,
    records, failures, lines and partial value, and its flag."""
    import pickle

    kinds = [
        kind
        for kind in vars(bundle_errors).values()
        if isinstance(kind, type) and issubclass(kind, bundle_errors.BundleError)
    ]
    assert len(kinds) >= 10
    for kind in kinds:
        error = kind(
            "why", "what", records=("r1",), failures=[{"file": "f", "problem": "p"}], lines=["l"], partial={"x": 1}
        )
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is kind
        assert (again.reason, again.message, again.records, again.failures, again.lines, again.partial) == (
            "why", "what", ("r1",), [{"file": "f", "problem": "p"}], ["l"], {"x": 1},
        )  # fmt: skip
        if hasattr(kind, "flag_id"):
            assert again.flag() == error.flag()
