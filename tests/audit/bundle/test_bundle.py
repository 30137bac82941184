"""verify_bundle on synthetic bundles: a clean one passes, and each kind of tampering is caught by the right
flag.

The bundles are written by ``tests/provenance/synthetic_bundle.py``; the rows' metrics there come from
independent oracles (sklearn's roc_curve snippet, a brute-force minDCF sweep, sklearn's AUC), not from
``audit.metrics.point``.
"""

from __future__ import annotations

import base64
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from audit.bundle.verification import NOT_RUN_UNAUTHENTICATED
from audit.bundle.verification import verify_bundle as verify_bundle_object
from audit.bundle.verified import Trust
from audit.table.findings import Flag, Severity, has_errors
from provenance.canonical import canonical_json
from provenance.digests import file_digest
from provenance.dsse import sign_envelope
from provenance.keys import generate_keypair, load_private_key
from schemas.errors import InputError

sys.path.insert(0, str(Path(__file__).parents[2] / "provenance"))  # the shared bundle factory
from synthetic_bundle import SyntheticBundle, build_bundle

RECORD = "E13-m1-babble-opus"


def verify_bundle(*args: Any, **kwargs: Any) -> tuple[list[Flag], list[dict[str, Any]]]:
    """The flags and sections of ``audit.bundle.verify_bundle``'s VerifiedBundle."""
    verified = verify_bundle_object(*args, **kwargs)
    return verified.flags, verified.sections


def _by_id(flags: list[Flag]) -> dict[str, Flag]:
    return {flag.id: flag for flag in flags}


def _failures(flags: list[Flag], flag_id: str) -> list[dict[str, Any]]:
    """The failure cases of the flag with this id, without the reason code of the step that found each."""
    return [
        {key: value for key, value in failure.items() if key != "reason"}
        for failure in _by_id(flags)[flag_id].details["failures"]
    ]


def _sections(sections: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {section["id"]: section for section in sections}


def _error_ids(flags: list[Flag]) -> set[str]:
    return {flag.id for flag in flags if flag.severity is Severity.ERROR}


def _resign(bundle: SyntheticBundle, mutate: Callable[[dict[str, Any]], None]) -> None:
    """Rewrite the statement (as someone holding the key would) and sign it again."""
    statement = json.loads((bundle.root / "provenance" / "statement.json").read_bytes())
    mutate(statement)
    payload = canonical_json(statement)
    (bundle.root / "provenance" / "statement.json").write_bytes(payload)
    envelope = sign_envelope(payload, load_private_key(bundle.private_key))
    (bundle.root / "provenance" / "run.intoto.jsonl").write_bytes(envelope)


@pytest.fixture
def bundle(tmp_path: Path) -> SyntheticBundle:
    return build_bundle(tmp_path)


def test_clean_bundle_passes_with_full_coverage(bundle: SyntheticBundle) -> None:
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert flags == []
    assert {section["status"] for section in sections} == {"pass"}
    by_id = _sections(sections)
    assert "reviewer's key" in by_id["bundle-signature"]["lines"][0]
    assert bundle.manifest.key_id in by_id["bundle-signature"]["lines"][0]
    assert [row["fraction"] for row in by_id["bundle-coverage"]["table"]] == [1.0, 1.0, 1.0, 1.0]
    assert len(by_id["bundle-rescore"]["table"]) == 8


def test_bundle_key_is_used_and_named_without_a_reviewer_key(bundle: SyntheticBundle) -> None:
    verified = verify_bundle_object(bundle.read_results(), bundle.root, None)
    assert verified.flags == []
    assert verified.authentication.trust is Trust.BUNDLE_KEY and not verified.authentication.trusted
    lines = _sections(verified.sections)["bundle-signature"]["lines"]
    assert "bundle's own key" in lines[0] and "UNAUTHENTICATED" in lines[1]
    assert bundle.manifest.key_id in lines[0]


def test_one_changed_score_is_caught(bundle: SyntheticBundle) -> None:
    path = bundle.root / "scores" / f"{RECORD}.parquet"
    scores = pd.read_parquet(path)
    first_target = int(scores.index[(scores["label"] == 1) & (scores["status"] == "scored")][0])
    scores.loc[first_target, "score"] = -50.0  # a target scored far below every non-target
    scores.to_parquet(path, index=False)
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert {"subject": f"scores/{RECORD}.parquet", "problem": "sha256 and blake3 differ"} in (
        _failures(flags, "digest-mismatch")
    )
    # a file that failed its digest is never parsed: the record has no verified scores to re-score from
    assert "score-mismatch" not in _error_ids(flags)
    assert {"record_id": RECORD, "problem": "no verified scores file"} in _failures(flags, "unmatched-trials")
    assert RECORD not in {row["record_id"] for row in _sections(sections)["bundle-rescore"]["table"]}


def test_changed_eer_in_the_results_file_is_caught(bundle: SyntheticBundle) -> None:
    results = bundle.read_results()
    results.loc[results["record_id"] == RECORD, "eer"] += 0.01
    results.to_csv(bundle.root / "results.csv", index=False)
    flags, _ = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert {"subject": "results.csv", "problem": "sha256 and blake3 differ"} in _failures(flags, "digest-mismatch")
    assert _by_id(flags)["table-binding"].details["reasons"] == ["no-signed-table"]


def test_changed_eer_in_a_table_outside_the_bundle_is_a_table_binding_error_only(bundle: SyntheticBundle) -> None:
    results = bundle.read_results()
    signed = float(results.loc[results["record_id"] == RECORD, "eer"].iloc[0])
    results.loc[results["record_id"] == RECORD, "eer"] += 0.002
    flags, _ = verify_bundle(results, bundle.root, bundle.public_key)
    assert _error_ids(flags) == {"table-binding"}
    [failure] = _failures(flags, "table-binding")
    assert (failure["record_id"], failure["column"]) == (RECORD, "eer")
    assert float(failure["signed"]) == signed and float(failure["table"]) == signed + 0.002


def test_reordered_trial_list_is_caught(bundle: SyntheticBundle) -> None:
    path = bundle.root / "trials" / f"{bundle.trial_list_ids[0]}.csv"
    trials = pd.read_csv(path)
    reordered = trials.iloc[[1, 0, *range(2, len(trials))]]  # swap the first two trials
    assert not (reordered["label"].to_numpy() == trials["label"].to_numpy()).all()
    reordered.to_csv(path, index=False)
    flags, _ = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert {"digest-mismatch", "unmatched-trials"} <= _error_ids(flags)
    assert len(_by_id(flags)["unmatched-trials"].records) == 8  # every record was scored on that list


def test_renamed_subject_file_is_caught(bundle: SyntheticBundle) -> None:
    source = bundle.root / "scores" / f"{RECORD}.parquet"
    source.rename(source.with_name("renamed.parquet"))
    flags, _ = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    failures = _failures(flags, "digest-mismatch")
    assert {"subject": f"scores/{RECORD}.parquet", "problem": "missing"} in failures
    assert {"file": "scores/renamed.parquet", "problem": "not a subject of the statement"} in failures


def test_renamed_subject_name_in_the_statement_breaks_the_signature(bundle: SyntheticBundle) -> None:
    envelope_path = bundle.root / "provenance" / "run.intoto.jsonl"
    envelope = json.loads(envelope_path.read_bytes())
    payload = base64.b64decode(envelope["payload"]).replace(b"results.csv", b"resultz.csv")
    envelope["payload"] = base64.b64encode(payload).decode()
    envelope_path.write_text(json.dumps(envelope) + "\n")
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert _error_ids(flags) == {"bad-signature"}  # nothing in a payload that failed its signature is parsed
    assert _sections(sections)["bundle-subject-digests"]["status"] == "skipped"


def test_altered_signature_is_caught(bundle: SyntheticBundle) -> None:
    envelope_path = bundle.root / "provenance" / "run.intoto.jsonl"
    envelope = json.loads(envelope_path.read_bytes())
    signature = envelope["signatures"][0]["sig"]
    envelope["signatures"][0]["sig"] = ("B" if signature[0] == "A" else "A") + signature[1:]
    envelope_path.write_text(json.dumps(envelope) + "\n")
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert _by_id(flags)["bad-signature"].details["reasons"] == ["signature"]
    assert _sections(sections)["bundle-signature"]["status"] == "fail"


def test_a_different_trusted_key_is_refused(bundle: SyntheticBundle, tmp_path: Path) -> None:
    generate_keypair(tmp_path / "other" / "k.pem", tmp_path / "other" / "k.pub")
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, tmp_path / "other" / "k.pub")
    assert _error_ids(flags) == {"bad-signature"}
    assert "reviewer's key" in _sections(sections)["bundle-signature"]["lines"][0]


def test_unsigned_bundle_says_so_and_parses_nothing(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path, signed=False)
    assert not bundle.manifest.signed
    assert "UNSIGNED" in (bundle.root / "provenance" / "UNSIGNED.txt").read_text()
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, None)
    assert _error_ids(flags) == {"bad-signature"}
    assert _by_id(flags)["bad-signature"].details["reasons"] == ["unsigned"]
    by_id = _sections(sections)
    assert by_id["bundle-subject-digests"]["status"] == "skipped"
    assert by_id["bundle-rescore"]["lines"] == [NOT_RUN_UNAUTHENTICATED]


def test_path_traversal_subjects_are_refused(bundle: SyntheticBundle, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not part of the bundle\n")
    digest = file_digest(outside)

    def add_escapes(statement: dict[str, Any]) -> None:
        for name in ("../outside.txt", str(outside), "scores/../../outside.txt"):
            statement["subject"].append({"name": name, "digest": {"sha256": digest.sha256, "blake3": digest.blake3}})

    _resign(bundle, add_escapes)
    flags, _ = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert _error_ids(flags) == {"digest-mismatch"}
    failures = _failures(flags, "digest-mismatch")
    assert len(flags) == 1
    assert {failure["subject"] for failure in failures} == {
        "../outside.txt",
        str(outside),
        "scores/../../outside.txt",
    }
    assert _by_id(flags)["digest-mismatch"].details["reasons"] == ["path-escape"]


def test_symlink_out_of_the_bundle_is_refused(bundle: SyntheticBundle, tmp_path: Path) -> None:
    inside = bundle.root / "scores" / f"{RECORD}.parquet"
    outside = tmp_path / "elsewhere.parquet"
    shutil.move(inside, outside)
    inside.symlink_to(outside)  # same bytes, so its digest still matches: only the location gives it away
    flags, _ = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    mismatch = _by_id(flags)["digest-mismatch"]
    assert mismatch.details["reasons"][0] == "path-escape"
    assert mismatch.details["failures"][0]["subject"] == f"scores/{RECORD}.parquet"
    assert {"file": f"scores/{RECORD}.parquet", "problem": "link pointing outside the bundle"} in (
        _failures(flags, "digest-mismatch")
    )
    # its scores are never read from outside the bundle
    assert {"record_id": RECORD, "problem": "no verified scores file"} in _failures(flags, "unmatched-trials")


def test_contrast_terms_on_different_trial_lists_are_unmatched(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path, odd_trial_list_record=RECORD)
    flags, _ = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert _error_ids(flags) == {"unmatched-trials"}
    records = set(_by_id(flags)["unmatched-trials"].records)
    m1_terms = {"E13-m1-none-none", "E13-m1-babble-none", "E13-m1-none-opus", RECORD}
    assert m1_terms | {"E13-m2-babble-opus"} == records  # the m1 contrast, and both encoders of that condition


def test_trials_naming_utterances_or_speakers_the_corpus_table_lacks_are_caught(tmp_path: Path) -> None:
    def break_table(table: pd.DataFrame) -> pd.DataFrame:
        table = table[table["utt_id"] != "s1-u1b"]  # trial 1 tests s1-u1b: now unlisted
        return table.assign(speaker=table["speaker"].where(table["utt_id"] != "s2-u0a", "s4"))  # trial 0 enrols s2

    bundle = build_bundle(tmp_path, corpus_table_edit=break_table)
    trials = pd.read_csv(bundle.root / "trials" / f"{bundle.trial_list_ids[0]}.csv")
    assert list(trials.loc[0, ["enrol_utt", "enrol_speaker"]]) == ["s2-u0a", "s2"]
    assert trials.loc[1, "test_utt"] == "s1-u1b"
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert _error_ids(flags) == {"trial-utterances"}
    assert [failure["problem"] for failure in _failures(flags, "trial-utterances")] == [
        "1 enrol speaker(s) differ from corpus 'synthetic'",
        "1 test utterance(s) not in corpus 'synthetic', e.g. 's1-u1b'",
    ]
    assert _sections(sections)["bundle-trial-utterances"]["status"] == "fail"


def test_operator_fallbacks_are_reported_as_a_warning(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path, fallback_record=RECORD)
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert not has_errors(flags)
    warning = _by_id(flags)["operator-failures"]
    assert warning.severity is Severity.WARNING and warning.records == (RECORD,)
    table = _sections(sections)["bundle-operators"]["table"]
    assert {row["chain"]: row["fallback"] for row in table} == {"codec-opus": 0, "noise-babble": 3}


def test_wrong_statement_type_stops_the_bundle_checks(bundle: SyntheticBundle) -> None:
    _resign(bundle, lambda statement: statement.update({"_type": "https://in-toto.io/Statement/v0.1"}))
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert _by_id(flags)["bad-signature"].details["reasons"] == ["statement-type"]
    assert _sections(sections)["bundle-rows"]["status"] == "skipped"


def test_a_table_row_naming_other_digests_is_not_bound(bundle: SyntheticBundle) -> None:
    results = bundle.read_results()
    results.loc[results["record_id"] == RECORD, "checkpoint_blake3"] = "0" * 64
    flags, sections = verify_bundle(results, bundle.root, bundle.public_key)
    assert _error_ids(flags) == {"table-binding"}
    assert _by_id(flags)["table-binding"].records == (RECORD,)
    assert _failures(flags, "table-binding")[0]["column"] == "checkpoint_blake3"
    coverage = {row["binding"]: row["rows"] for row in _sections(sections)["bundle-coverage"]["table"]}
    assert coverage["all three verified"] == 8  # the signed rows themselves are bound


def test_an_all_text_table_as_read_by_audit_io_verifies(bundle: SyntheticBundle) -> None:
    text_table = pd.read_csv(bundle.root / "results.csv", dtype=str, keep_default_na=False, na_values=[""])
    flags, _ = verify_bundle(text_table, bundle.root, bundle.public_key)
    assert flags == []


def test_a_record_id_that_leaves_the_bundle_is_never_read(bundle: SyntheticBundle, tmp_path: Path) -> None:
    results = bundle.read_results()
    escape = "../../outside"
    (tmp_path / "outside.parquet").write_bytes((bundle.root / "scores" / f"{RECORD}.parquet").read_bytes())
    results.loc[results["record_id"] == RECORD, "record_id"] = escape
    flags, _ = verify_bundle(results, bundle.root, bundle.public_key)
    assert _error_ids(flags) == {"table-binding"}
    assert {"row": 4, "record_id": escape, "problem": "not a record of the signed table"} in (
        _failures(flags, "table-binding")
    )
    assert {"row": None, "record_id": RECORD, "problem": "signed row missing from the table"} in (
        _failures(flags, "table-binding")
    )


def test_signed_bundle_without_its_public_key_needs_a_reviewer_key(bundle: SyntheticBundle) -> None:
    (bundle.root / "provenance" / "signing-key.pub.pem").unlink()
    flags, _ = verify_bundle(bundle.read_results(), bundle.root, None)
    assert _by_id(flags)["bad-signature"].details["reasons"] == ["no-key"]
    assert verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)[0] == []


def test_an_unreadable_reviewer_key_is_an_input_error(bundle: SyntheticBundle, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"absent\.pub"):
        verify_bundle(bundle.read_results(), bundle.root, tmp_path / "absent.pub")


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
    assert "speaker counts given equal their trial lists'" in _sections(sections)["bundle-rescore"]["lines"][0]
    bad = build_bundle(tmp_path / "bad", results_edit=_with_counts(tmp_path / "bad" / "bundle", RECORD))
    flags, _ = verify_bundle(bad.read_results(), bad.root, bad.public_key)
    assert _error_ids(flags) == {"score-mismatch"}
    assert _failures(flags, "score-mismatch") == [
        {"record_id": RECORD, "problem": "n_enrol_speakers 5 but its trial list has 6"}
    ]
