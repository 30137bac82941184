"""verify_subjects on tampered copies of a synthetic bundle: the names, digests and coverage of the signed files.

The rows' metrics come from independent oracles in ``tests/provenance/synthetic_bundle.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from provenance.digests import file_digest
from tests.audit.bundle.bundle_checks import RECORD, by_id, error_ids, failures_of, resign, sections_of, verify_bundle
from tests.provenance.synthetic_bundle import SyntheticBundle


def test_one_changed_score_is_caught(bundle: SyntheticBundle) -> None:
    path = bundle.root / "scores" / f"{RECORD}.parquet"
    scores = pd.read_parquet(path)
    first_target = int(scores.index[(scores["label"] == 1) & (scores["status"] == "scored")][0])
    scores.loc[first_target, "score"] = -50.0  # a target scored far below every non-target
    scores.to_parquet(path, index=False)
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert {"subject": f"scores/{RECORD}.parquet", "problem": "sha256 and blake3 differ"} in (
        failures_of(flags, "digest-mismatch")
    )
    # a file that failed its digest is never parsed: the record has no verified scores to re-score from
    assert "score-mismatch" not in error_ids(flags)
    assert {"record_id": RECORD, "problem": "no verified scores file"} in failures_of(flags, "unmatched-trials")
    assert RECORD not in {row["record_id"] for row in sections_of(sections)["bundle-rescore"]["table"]}


def test_changed_eer_in_the_results_file_is_caught(bundle: SyntheticBundle) -> None:
    results = bundle.read_results()
    results.loc[results["record_id"] == RECORD, "eer"] += 0.01
    results.to_csv(bundle.root / "results.csv", index=False)
    flags, _ = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert {"subject": "results.csv", "problem": "sha256 and blake3 differ"} in failures_of(flags, "digest-mismatch")
    assert by_id(flags)["table-binding"].details["reasons"] == ["no-signed-table"]


def test_reordered_trial_list_is_caught(bundle: SyntheticBundle) -> None:
    path = bundle.root / "trials" / f"{bundle.trial_list_ids[0]}.csv"
    trials = pd.read_csv(path)
    reordered = trials.iloc[[1, 0, *range(2, len(trials))]]  # swap the first two trials
    assert not (reordered["label"].to_numpy() == trials["label"].to_numpy()).all()
    reordered.to_csv(path, index=False)
    flags, _ = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert {"digest-mismatch", "unmatched-trials"} <= error_ids(flags)
    assert len(by_id(flags)["unmatched-trials"].records) == 8  # every record was scored on that list


def test_renamed_subject_file_is_caught(bundle: SyntheticBundle) -> None:
    source = bundle.root / "scores" / f"{RECORD}.parquet"
    source.rename(source.with_name("renamed.parquet"))
    flags, _ = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    failures = failures_of(flags, "digest-mismatch")
    assert {"subject": f"scores/{RECORD}.parquet", "problem": "missing"} in failures
    assert {"file": "scores/renamed.parquet", "problem": "not a subject of the statement"} in failures


def test_path_traversal_subjects_are_refused(bundle: SyntheticBundle, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not part of the bundle\n")
    digest = file_digest(outside)

    def add_escapes(statement: dict[str, Any]) -> None:
        for name in ("../outside.txt", str(outside), "scores/../../outside.txt"):
            statement["subject"].append({"name": name, "digest": {"sha256": digest.sha256, "blake3": digest.blake3}})

    resign(bundle, add_escapes)
    flags, _ = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert error_ids(flags) == {"digest-mismatch"}
    failures = failures_of(flags, "digest-mismatch")
    assert len(flags) == 1
    assert {failure["subject"] for failure in failures} == {
        "../outside.txt",
        str(outside),
        "scores/../../outside.txt",
    }
    assert by_id(flags)["digest-mismatch"].details["reasons"] == ["path-escape"]


def test_symlink_out_of_the_bundle_is_refused(bundle: SyntheticBundle, tmp_path: Path) -> None:
    inside = bundle.root / "scores" / f"{RECORD}.parquet"
    outside = tmp_path / "elsewhere.parquet"
    shutil.move(inside, outside)
    inside.symlink_to(outside)  # same bytes, so its digest still matches: only the location gives it away
    flags, _ = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    mismatch = by_id(flags)["digest-mismatch"]
    assert mismatch.details["reasons"][0] == "path-escape"
    assert mismatch.details["failures"][0]["subject"] == f"scores/{RECORD}.parquet"
    assert {"file": f"scores/{RECORD}.parquet", "problem": "link pointing outside the bundle"} in (
        failures_of(flags, "digest-mismatch")
    )
    # its scores are never read from outside the bundle
    assert {"record_id": RECORD, "problem": "no verified scores file"} in failures_of(flags, "unmatched-trials")


def test_a_record_id_that_leaves_the_bundle_is_never_read(bundle: SyntheticBundle, tmp_path: Path) -> None:
    results = bundle.read_results()
    escape = "../../outside"
    (tmp_path / "outside.parquet").write_bytes((bundle.root / "scores" / f"{RECORD}.parquet").read_bytes())
    results.loc[results["record_id"] == RECORD, "record_id"] = escape
    flags, _ = verify_bundle(results, bundle.root, bundle.public_key)
    assert error_ids(flags) == {"table-binding"}
    assert {"row": 4, "record_id": escape, "problem": "not a record of the signed table"} in (
        failures_of(flags, "table-binding")
    )
    assert {"row": None, "record_id": RECORD, "problem": "signed row missing from the table"} in (
        failures_of(flags, "table-binding")
    )


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("scores/x\x00y.parquet", "holds the character U+0000 (Cc)"),
        ("scores/evil\u202etxt.parquet", "holds the character U+202E (Cf)"),
        ("scores/two\nlines.parquet", "holds the character U+000A (Cc)"),
        ("a" * 5000, "longer than 1024 bytes"),
        ("scores/" + "b" * 300, "a segment longer than 255 bytes"),
    ],
)
def test_hostile_subject_names_signed_by_the_author_are_findings(
    bundle: SyntheticBundle, name: str, problem: str
) -> None:
    """A subject name no file system or report can hold is refused by name, never opened or printed raw."""

    def add(statement: dict[str, Any]) -> None:
        statement["subject"].append({"name": name, "digest": {"sha256": "0" * 64, "blake3": "0" * 64}})

    resign(bundle, add, escaped=True)
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    refused = failures_of(flags, "digest-mismatch")
    assert [failure["problem"] for failure in refused] == [problem]
    assert refused[0]["subject"].isprintable() and len(refused[0]["subject"]) <= 200
    assert sections_of(sections)["bundle-subject-names"]["status"] == "fail"


def test_a_lone_surrogate_in_the_signed_statement_is_a_schema_finding(bundle: SyntheticBundle) -> None:
    """JSON's escape spells a lone surrogate that no UTF-8 file or report can hold: the statement is not used."""

    def add(statement: dict[str, Any]) -> None:
        statement["subject"].append({"name": "scores/x\ud800y.parquet", "digest": {"sha256": "0" * 64}})

    resign(bundle, add, escaped=True)
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert by_id(flags)["bundle-schema"].details["reasons"] == ["statement-text"]
    assert sections_of(sections)["bundle-subject-names"]["status"] == "skipped"


def test_a_folder_finds_links_out_as_resolving_every_name_would(tmp_path: Path) -> None:
    """``BundleFolder.link_escape`` resolves each folder once: the oracle is ``Path.resolve`` of every name. Links of
    files and of folders, pointing out or staying in, a link to a link, a dangling link, a name that is absent and
    a folder's link seen before and after the names under it."""
    from audit.bundle import source as bundle_source

    outside, root = tmp_path / "outside", tmp_path / "bundle"
    for folder in (outside / "deep", root / "scores", root / "corpus" / "a"):
        folder.mkdir(parents=True)
    (outside / "x.parquet").write_bytes(b"x")
    (root / "scores" / "kept.parquet").write_bytes(b"k")
    (root / "scores" / "out.parquet").symlink_to(outside / "x.parquet")
    (root / "scores" / "in.parquet").symlink_to(root / "scores" / "kept.parquet")
    (root / "scores" / "relay.parquet").symlink_to(root / "scores" / "out.parquet")
    (root / "scores" / "dangling.parquet").symlink_to(outside / "gone.parquet")
    (root / "elsewhere").symlink_to(outside)
    (root / "mirror").symlink_to(root / "corpus")
    names = [
        "scores/kept.parquet", "scores/out.parquet", "scores/in.parquet", "scores/relay.parquet",
        "scores/dangling.parquet", "scores/absent.parquet", "elsewhere/x.parquet", "elsewhere/deep/y.csv",
        "mirror/a/utterances.csv", "corpus/a/utterances.csv", "elsewhere", "scores/../scores/kept.parquet",
    ]  # fmt: skip
    real_root = root.resolve()
    expected = [(root / name).resolve().is_relative_to(real_root) for name in names]
    assert expected == [True, False, True, False, False, True, False, False, True, True, False, True]
    for order in (names, names[::-1]):
        source = bundle_source.BundleFolder(root)
        found = {name: source.link_escape(name) is None for name in order}
        assert [found[name] for name in names] == expected
