"""Hostile bundles and hostile audited tables, through the command line a reviewer runs.

Each case is made by code from a clean signed synthetic bundle (``tests/provenance/synthetic_bundle.py``): a
forgery re-signed by another key, tables that relabel, drop, round or change rows, removed and edited files of each
kind, non-regular files, malformed JSON/TOML/CSV/Parquet re-signed by the author (so the parsers, not the digests,
must catch them). For each: the verdict, the exit code, the flag, and that no traceback escapes.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from provenance.canonical import canonical_json
from provenance.digests import file_digest
from provenance.dsse import sign_envelope
from provenance.keys import generate_keypair, load_private_key
from provenance.manifest import write_manifest
from tests.provenance.synthetic_bundle import RUN_CONFIG, SyntheticBundle, build_bundle

ANALYSIS = 'equivalence_margin = 0.05\nn_resamples = 40\nseed = 3\ndev_speakers = ["s0", "s1"]'
RECORD = "E13-m1-babble-opus"


@pytest.fixture
def bundle(tmp_path: Path) -> SyntheticBundle:
    return build_bundle(tmp_path, analysis=ANALYSIS)


def audit(*args: str | Path) -> tuple[int, str, dict[str, Any] | None]:
    """Run ``audit verify ... --json``; no exception other than the exit may escape."""
    from audit.cli import app

    result = CliRunner().invoke(app, ["verify", *map(str, args), "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.stdout + result.stderr
    report = json.loads(result.stdout) if result.stdout.strip().startswith("{") else None
    return result.exit_code, result.stderr, report


def errors(report: dict[str, Any] | None) -> set[str]:
    assert report is not None
    return {flag["id"] for flag in report["flags"] if flag["severity"] == "error"}


def section(report: dict[str, Any] | None, section_id: str) -> dict[str, Any]:
    assert report is not None
    return next(s for s in report["sections"] if s["id"] == section_id)


def resign(bundle: SyntheticBundle, key: Path | None = None, mutate: Callable[[dict], None] | None = None) -> None:
    """Re-digest every subject and sign again (the author's key, or ``key``): files stay as changed."""
    statement_path = bundle.root / "provenance" / "statement.json"
    statement = json.loads(statement_path.read_bytes())
    for subject in statement["subject"]:
        path = bundle.root / subject["name"]
        if path.is_file() and not path.is_symlink():
            digest = file_digest(path)
            subject["digest"] = {"sha256": digest.sha256, "blake3": digest.blake3}
    if mutate:
        mutate(statement)
    payload = canonical_json(statement)
    statement_path.write_bytes(payload)
    envelope = sign_envelope(payload, load_private_key(key or bundle.private_key))
    (bundle.root / "provenance" / "run.intoto.jsonl").write_bytes(envelope)


def outside_table(bundle: SyntheticBundle, tmp_path: Path, edit: Callable[[pd.DataFrame], pd.DataFrame]) -> Path:
    """A copy of the signed results table outside the bundle, as text, after ``edit``."""
    table = pd.read_csv(bundle.root / "results.csv", dtype=str, keep_default_na=False)
    path = tmp_path / "paper-table.csv"
    edit(table).to_csv(path, index=False)
    return path


def test_the_clean_bundle_passes_under_the_authors_key(bundle: SyntheticBundle) -> None:
    code, _, report = audit(bundle.root / "results.csv", "--bundle", bundle.root, "--key", bundle.public_key)
    assert (code, report and report["verdict"]) == (0, "pass")
    assert report and report["trust"]["trust"] == "trusted-key" and report["statistics"]["n_resamples"] == 40
    run = report["run"]
    assert run["run_id"] == "run-synthetic-0001" and run["records"] == 8 and run["trial_lists"] == 1
    assert [encoder["label"] for encoder in run["encoders"]] == ["m1", "m2"]
    assert run["corpora"] == [
        {"corpus": "(single corpus)", "release": "not recorded", "utterances": len(set(bundle.read_trial_utterances()))}
    ]


def test_a_consistent_forgery_resigned_by_another_key(bundle: SyntheticBundle, tmp_path: Path) -> None:
    scores_path = bundle.root / "scores" / f"{RECORD}.parquet"
    scores = pd.read_parquet(scores_path)
    scores["score"] = scores["score"] * 2.0 + 1.0  # other scores, same ranks: every metric of the row still holds
    scores.to_parquet(scores_path, index=False)
    results = pd.read_csv(bundle.root / "results.csv", dtype=str, keep_default_na=False)
    results.loc[results["record_id"] == RECORD, "scores_blake3"] = file_digest(scores_path).blake3
    results.to_csv(bundle.root / "results.csv", index=False)
    forger = tmp_path / "forger"
    generate_keypair(forger / "k.pem", forger / "k.pub")
    shutil.rmtree(bundle.root / "provenance")
    write_manifest(bundle.root, RUN_CONFIG, forger / "k.pem")
    from audit.cli import app

    result = CliRunner().invoke(app, ["verify", str(bundle.root / "results.csv"), "--bundle", str(bundle.root)])
    first = result.stdout.splitlines()[0]
    assert result.exit_code == 1 and first.startswith("UNAUTHENTICATED")
    assert load_private_key(forger / "k.pem") and "--key AUTHOR.pub" in first and "own enclosed key" in first
    code, _, report = audit(bundle.root / "results.csv", "--bundle", bundle.root, "--key", bundle.public_key)
    assert code == 1 and errors(report) == {"bad-signature"}
    assert section(report, "per-trial-statistics")["status"] == "skipped"


def test_only_the_bundles_own_key_is_unauthenticated_and_trusted_ids_lift_it(
    bundle: SyntheticBundle, tmp_path: Path
) -> None:
    code, _, report = audit(bundle.root / "results.csv", "--bundle", bundle.root)
    assert (code, report and report["verdict"]) == (1, "unauthenticated")
    assert not errors(report)
    badges = section(report, "artefact-evaluation")
    text = " ".join(str(row) for row in badges["table"]["rows"])
    assert "trusted key verifies" not in text and "who signed them is not established" in text
    ids = tmp_path / "trusted.txt"
    ids.write_text(f"# the authors' key\n{bundle.manifest.key_id}\n")
    code, _, report = audit(bundle.root / "results.csv", "--bundle", bundle.root, "--trusted-keys", ids)
    assert (code, report and report["verdict"]) == (0, "pass")
    ids.write_text("not-a-key-id\n")
    code, stderr, _ = audit(bundle.root / "results.csv", "--bundle", bundle.root, "--trusted-keys", ids)
    assert code == 2 and "row 1" in stderr and "key id" in stderr


def _swap_conditions(table: pd.DataFrame) -> pd.DataFrame:
    first, second = (
        table.index[table["record_id"] == RECORD][0],
        table.index[table["record_id"] == "E13-m1-none-none"][0],
    )
    for column in ("condition", "level_a", "level_b"):
        table.loc[[first, second], column] = table.loc[[second, first], column].to_numpy()
    return table


@pytest.mark.parametrize(
    ("edit", "column"),
    [
        (_swap_conditions, "condition"),
        (lambda t: t.assign(eer=t["eer"].astype(float).add(0.01).astype(str)), "eer"),
        (lambda t: t.assign(model=t["model"].replace({"m2": "m3"})), "model"),
    ],
    ids=["relabelled-conditions", "changed-eer", "renamed-model"],
)
def test_an_outside_table_that_differs_from_the_signed_one_fails(
    bundle: SyntheticBundle, tmp_path: Path, edit: Callable[[pd.DataFrame], pd.DataFrame], column: str
) -> None:
    table = outside_table(bundle, tmp_path, edit)
    code, _, report = audit(table, "--bundle", bundle.root, "--key", bundle.public_key)
    assert code == 1 and "table-binding" in errors(report)
    failures = next(f for f in report["flags"] if f["id"] == "table-binding")["details"]["failures"]
    assert column in {failure.get("column") for failure in failures}


@pytest.mark.slow
def test_dropped_rows_fail_unless_the_subset_is_declared(bundle: SyntheticBundle, tmp_path: Path) -> None:
    table = outside_table(bundle, tmp_path, lambda t: t[t["model"] == "m1"])
    code, _, report = audit(table, "--bundle", bundle.root, "--key", bundle.public_key)
    assert code == 1 and "table-binding" in errors(report)
    from audit.cli import app

    result = CliRunner().invoke(
        app,
        [
            "verify",
            str(table),
            "--bundle",
            str(bundle.root),
            "--key",
            str(bundle.public_key),
            "--subset",
            "model in [m1]",
        ],
    )
    assert result.exit_code == 0
    assert result.stdout.startswith("PASS, subset: 4 of 8 signed rows (model in [m1])")
    code, _, report = audit(table, "--bundle", bundle.root, "--key", bundle.public_key, "--subset", "model = m2")
    assert code == 1  # the table's rows lie outside the declared subset, whose rows are missing
    code, stderr, _ = audit(table, "--bundle", bundle.root, "--subset", "model like m1")
    assert code == 2 and "--subset" in stderr


def test_a_table_rounded_to_printed_precision_is_bound_and_says_so(bundle: SyntheticBundle, tmp_path: Path) -> None:
    rounded = outside_table(bundle, tmp_path, lambda t: t.assign(eer=t["eer"].astype(float).round(3).astype(str)))
    code, _, report = audit(rounded, "--bundle", bundle.root, "--key", bundle.public_key)
    assert (code, report and report["verdict"]) == (0, "pass")
    assert report and report["trust"]["rounded_columns"] == ["eer"]
    assert "printed precision" in " ".join(section(report, "bundle-table-binding")["lines"])


FILE_DAMAGE: dict[str, Callable[[SyntheticBundle], None]] = {
    "trial-list-removed": lambda b: (b.root / "trials" / f"{b.trial_list_ids[0]}.csv").unlink(),
    "trial-list-edited": lambda b: (b.root / "trials" / f"{b.trial_list_ids[0]}.csv").write_text("garbage\n"),
    "scores-removed": lambda b: (b.root / "scores" / f"{RECORD}.parquet").unlink(),
    "scores-truncated": lambda b: (b.root / "scores" / f"{RECORD}.parquet").write_bytes(
        (b.root / "scores" / f"{RECORD}.parquet").read_bytes()[:100]
    ),
    "results-removed": lambda b: (b.root / "results.csv").unlink(),
    "operators-removed": lambda b: (b.root / "operators.json").unlink(),
    "corpus-table-edited": lambda b: (b.root / "corpus" / "utterances.csv").write_text("x\n1\n"),
    "config-edited": lambda b: (b.root / "config.toml").write_text("[analysis]\nn_resamples = 100000000\n"),
}


@pytest.mark.parametrize("damage", sorted(FILE_DAMAGE))
def test_a_damaged_file_is_a_digest_finding_and_no_statistics(bundle: SyntheticBundle, damage: str) -> None:
    FILE_DAMAGE[damage](bundle)
    table = bundle.root.parent / "copy.csv"
    bundle.results.to_csv(table, index=False)
    code, _, report = audit(table, "--bundle", bundle.root, "--key", bundle.public_key)
    assert code == 1 and "digest-mismatch" in errors(report)
    assert section(report, "per-trial-statistics")["status"] == "skipped"


RESIGNED_DAMAGE: dict[str, tuple[Callable[[SyntheticBundle], None], str]] = {
    "utterances-without-utt_id": (
        lambda b: (b.root / "corpus" / "utterances.csv").write_text("speaker,path\ns0,a.wav\n"),
        "bundle-schema",
    ),
    "operators-not-json": (lambda b: (b.root / "operators.json").write_text("{not json"), "bundle-schema"),
    "operators-a-list": (lambda b: (b.root / "operators.json").write_text("[1, 2]"), "bundle-schema"),
    "config-not-toml": (lambda b: (b.root / "config.toml").write_text("[analysis\n"), "bundle-schema"),
    "analysis-mistyped": (
        lambda b: (b.root / "config.toml").write_text('[analysis]\nequivalence_margin = 0.05\nn_resamples = "many"\n'),
        "bundle-schema",
    ),
    "analysis-too-many-resamples": (
        lambda b: (b.root / "config.toml").write_text("[analysis]\nequivalence_margin = 0.05\nn_resamples = 1e8\n"),
        "bundle-schema",
    ),
    "scores-truncated": (
        lambda b: (b.root / "scores" / f"{RECORD}.parquet").write_bytes(
            (b.root / "scores" / f"{RECORD}.parquet").read_bytes()[:100]
        ),
        "bundle-schema",
    ),
    "scores-wrong-types": (
        lambda b: (
            pd.read_parquet(b.root / "scores" / f"{RECORD}.parquet")
            .astype({"label": "float64"})
            .to_parquet(b.root / "scores" / f"{RECORD}.parquet", index=False)
        ),
        "bundle-schema",
    ),
    "trial-list-bad-labels": (
        lambda b: (b.root / "trials" / f"{b.trial_list_ids[0]}.csv").write_text(
            (b.root / "trials" / f"{b.trial_list_ids[0]}.csv").read_text().replace(",1,", ",7,", 1)
        ),
        "bundle-schema",
    ),
    "results-binary": (lambda b: (b.root / "results.csv").write_bytes(b"\xff\xfe\x00\x01" * 64), "bundle-schema"),
    "operators-chain-a-number": (
        lambda b: (b.root / "operators.json").write_text('{"policy": "drop-trial", "chains": {"c": 5}}'),
        "bundle-schema",
    ),
    "checkpoints-entry-a-string": (
        lambda b: (b.root / "checkpoints.json").write_text('{"m1": "ab", "m2": {}}'),
        "bundle-schema",
    ),
}


@pytest.mark.parametrize("damage", sorted(RESIGNED_DAMAGE))
def test_a_malformed_file_resigned_by_the_author_is_a_schema_finding(
    bundle: SyntheticBundle, tmp_path: Path, damage: str
) -> None:
    edit, flag = RESIGNED_DAMAGE[damage]
    edit(bundle)
    resign(bundle)
    table = tmp_path / "table.csv"
    bundle.results.to_csv(table, index=False)
    code, _, report = audit(table, "--bundle", bundle.root, "--key", bundle.public_key)
    assert code == 1 and flag in errors(report)
    assert section(report, "per-trial-statistics")["status"] in ("skipped", "failed")


def test_a_malformed_operators_file_under_the_bundles_own_key_is_a_finding_not_a_traceback(
    bundle: SyntheticBundle,
) -> None:
    """Reachable by anyone (no --key): the shape is checked before any step reads a count."""
    (bundle.root / "operators.json").write_text('{"chains": {"c": {"applied": "many"}}}')
    resign(bundle)
    code, _, report = audit(bundle.root / "results.csv", "--bundle", bundle.root)
    assert code == 1 and errors(report) == {"bundle-schema"}
    assert section(report, "bundle-operators")["status"] == "skipped"


@pytest.mark.parametrize(
    ("declared", "problem"),
    [
        ('dev_speakers = ["s0", "s1"]', None),
        (
            'dev_speakers = ["s0", "nobody"]',
            "analysis.dev_speakers: 1 name is no speaker of the bundle's corpora: nobody",
        ),
        ('held_out_levels = ["opus", "gsm"]', "analysis.held_out_levels: 1 name is no factor level of the "),
    ],
)
def test_an_analysis_that_names_what_the_run_lacks_is_a_finding(
    tmp_path: Path, declared: str, problem: str | None
) -> None:
    """A threshold chosen on no speaker, or settings held out by no level, would be reported as if they had been."""
    analysis = ANALYSIS.replace('dev_speakers = ["s0", "s1"]', declared)
    bundle = build_bundle(tmp_path, analysis=analysis)
    code, _, report = audit(bundle.root / "results.csv", "--bundle", bundle.root, "--key", bundle.public_key)
    if problem is None:
        assert (code, report and report["verdict"]) == (0, "pass")
        return
    assert code == 1 and errors(report) == {"bundle-schema"}
    flag = next(flag for flag in report["flags"] if flag["id"] == "bundle-schema")
    assert [failure["problem"][: len(problem)] for failure in flag["details"]["failures"]] == [problem]


def test_badly_typed_fields_in_a_signed_predicate_are_a_finding(bundle: SyntheticBundle) -> None:
    def mistype(statement: dict[str, Any]) -> None:
        statement["predicate"]["runDetails"]["byproducts"][0]["annotations"]["applied"] = {"a": []}
        statement["subject"].append({"name": 7, "digest": "x"})

    resign(bundle, mutate=mistype)
    code, _, report = audit(bundle.root / "results.csv", "--bundle", bundle.root, "--key", bundle.public_key)
    assert code == 1 and {"bad-signature", "digest-mismatch"} <= errors(report)


def test_badly_typed_fields_in_an_unauthenticated_payload_are_never_parsed(
    bundle: SyntheticBundle, tmp_path: Path
) -> None:
    statement_path = bundle.root / "provenance" / "statement.json"
    statement_path.write_bytes(b'{"_type": 1, "subject": {"x": [1e999]}, "predicate": []}')
    other = tmp_path / "other"
    generate_keypair(other / "k.pem", other / "k.pub")
    (bundle.root / "provenance" / "run.intoto.jsonl").write_bytes(
        sign_envelope(statement_path.read_bytes(), load_private_key(other / "k.pem"))
    )
    code, _, report = audit(bundle.root / "results.csv", "--bundle", bundle.root, "--key", bundle.public_key)
    assert code == 1 and errors(report) == {"bad-signature"}
    assert section(report, "bundle-statement")["status"] == "skipped"


def test_a_binary_key_id_file_is_only_noted(bundle: SyntheticBundle) -> None:
    (bundle.root / "provenance" / "signing-key.id").write_bytes(b"\xff\x00\xfe" * 10)
    code, _, report = audit(bundle.root / "results.csv", "--bundle", bundle.root, "--key", bundle.public_key)
    assert (code, report and report["verdict"]) == (0, "pass")


@pytest.mark.parametrize("kind", ["fifo", "symlink-out", "directory"])
def test_non_regular_files_in_the_bundle_are_refused_not_read(
    bundle: SyntheticBundle, tmp_path: Path, kind: str
) -> None:
    target = bundle.root / "scores" / f"{RECORD}.parquet"
    if kind == "fifo":
        target.unlink()
        os.mkfifo(target)  # reading it would block forever
    elif kind == "symlink-out":
        shutil.move(target, tmp_path / "outside.parquet")
        target.symlink_to(tmp_path / "outside.parquet")
    else:
        target.unlink()
        target.mkdir()
    code, _, report = audit(bundle.root / "results.csv", "--bundle", bundle.root, "--key", bundle.public_key)
    assert code == 1 and "digest-mismatch" in errors(report)


def test_unknown_files_under_provenance_are_caught_and_report_is_ignored(bundle: SyntheticBundle) -> None:
    (bundle.root / "provenance" / "extra.json").write_text("{}")
    (bundle.root / "report").mkdir()
    (bundle.root / "report" / "report.json").write_text('{"verdict": "pass"}')
    code, _, report = audit(bundle.root / "results.csv", "--bundle", bundle.root, "--key", bundle.public_key)
    assert code == 1 and errors(report) == {"digest-mismatch"}
    failures = next(f for f in report["flags"] if f["id"] == "digest-mismatch")["details"]["failures"]
    assert [failure["file"] for failure in failures] == ["provenance/extra.json"]


def test_a_flag_raised_by_the_table_and_the_bundle_checks_is_reported_once(tmp_path: Path) -> None:
    odd = build_bundle(tmp_path, odd_trial_list_record=RECORD, analysis=ANALYSIS)
    code, _, report = audit(odd.root / "results.csv", "--bundle", odd.root, "--key", odd.public_key)
    assert report is not None and code == 1
    ids = [flag["id"] for flag in report["flags"]]
    assert ids.count("unmatched-trials") == 1
    merged = next(flag for flag in report["flags"] if flag["id"] == "unmatched-trials")
    assert len(merged["details"]["sources"]) == 2  # the table's contrast check and the bundle's shared-list step
    assert "unmatched-trials" in " ".join(str(row) for row in section(report, "artefact-evaluation")["table"]["rows"])


@pytest.mark.parametrize("lie", ["n_unscored", "operators-no-failure", "operators-phantom-failure"])
def test_an_author_who_hides_or_invents_failed_trials_is_caught(bundle: SyntheticBundle, lie: str) -> None:
    """Oracle: the statuses of the record's own score file (two test-failed trials). The author re-signs a table or
    operators.json whose counts say otherwise; the rows' metrics still hold."""
    record = "E13-m1-none-none" if lie == "operators-phantom-failure" else RECORD
    if lie == "n_unscored":
        results = pd.read_csv(bundle.root / "results.csv", dtype=str, keep_default_na=False)
        results.loc[results["record_id"] == record, "n_unscored"] = "0"
        results.to_csv(bundle.root / "results.csv", index=False)
        expected = "n_unscored 0 but 2 trial(s) of its scores file are unscored"
    else:
        operators = json.loads((bundle.root / "operators.json").read_text())
        if lie == "operators-no-failure":
            operators["records"][record]["failed"] = 0
            expected = "2 unscored trial(s) but operators.json counts no failed side for the record"
        else:
            scores_path = bundle.root / "scores" / f"{record}.parquet"
            scores = pd.read_parquet(scores_path)
            scores.loc[scores["status"] != "scored", "score"] = 0.5  # every trial scored, as the row then says
            scores["status"] = "scored"
            scores.to_parquet(scores_path, index=False)
            expected = "operators.json counts 2 failed side(s) but every trial of the record is scored"
        (bundle.root / "operators.json").write_text(json.dumps(operators))
    shutil.rmtree(bundle.root / "provenance")
    if lie == "operators-phantom-failure":
        results = pd.read_csv(bundle.root / "results.csv", dtype=str, keep_default_na=False)
        row = results["record_id"] == record
        results.loc[row, "scores_blake3"] = file_digest(bundle.root / "scores" / f"{record}.parquet").blake3
        results.to_csv(bundle.root / "results.csv", index=False)
    write_manifest(bundle.root, RUN_CONFIG, bundle.private_key)
    code, _, report = audit(bundle.root / "results.csv", "--bundle", bundle.root, "--key", bundle.public_key)
    assert code == 1 and "score-mismatch" in errors(report)
    failures = next(flag for flag in report["flags"] if flag["id"] == "score-mismatch")["details"]["failures"]
    assert {"record_id": record, "problem": expected} in [
        {key: value for key, value in failure.items() if key != "reason"} for failure in failures
    ]


def terminal(*args: str | Path) -> tuple[int, list[str]]:
    """``audit verify ...`` as a reviewer reads it on the terminal: the exit code and the lines."""
    from audit.cli import app

    result = CliRunner().invoke(app, ["verify", *map(str, args)])
    assert "Traceback" not in result.stdout + result.stderr
    return result.exit_code, result.stdout.splitlines()


def test_a_wrong_key_is_the_first_line_before_any_table_warning(bundle: SyntheticBundle, tmp_path: Path) -> None:
    generate_keypair(tmp_path / "other.key", tmp_path / "other.pub")
    code, lines = terminal(bundle.root / "results.csv", "--bundle", bundle.root, "--key", tmp_path / "other.pub")
    assert code == 1 and lines[0].startswith("FAIL: bad-signature: The signature does not verify under the reviewer's")
    flag_lines = [line.split()[0] for line in lines[1:] if line.startswith("  ") and not line.startswith("   ")]
    assert flag_lines[0] == "error" and "warning" in flag_lines  # the table's warnings come after the cause


def test_a_table_binding_failure_names_rows_columns_and_values_on_the_terminal(
    bundle: SyntheticBundle, tmp_path: Path
) -> None:
    def edit(table: pd.DataFrame) -> pd.DataFrame:
        table.loc[:6, "eer"] = "0.5"
        return table

    table = outside_table(bundle, tmp_path, edit)
    code, lines = terminal(table, "--bundle", bundle.root, "--key", bundle.public_key)
    assert code == 1 and lines[0].startswith("FAIL: table-binding: The audited table is not the signed results table: ")
    assert "7 values differ; first: row 1, record E13-m1-none-none, column eer: 0.5 in the table, " in lines[0]
    cases = [line.strip() for line in lines if line.startswith("      ")]
    assert cases[:5] == [case for case in cases[:5] if case.startswith("row ") and ": 0.5 in the table, " in case]
    assert len(cases) == 6 and cases[5] == "... 2 more in report.json"


def test_a_damaged_file_is_named_on_the_terminal(bundle: SyntheticBundle) -> None:
    (bundle.root / "operators.json").write_text("{}")
    code, lines = terminal(bundle.root / "results.csv", "--bundle", bundle.root, "--key", bundle.public_key)
    assert code == 1 and lines[0].startswith("FAIL: digest-mismatch: ")
    assert "      file operators.json: sha256 and blake3 differ" in lines


def test_a_pass_says_how_the_table_was_bound(bundle: SyntheticBundle, tmp_path: Path) -> None:
    table = outside_table(bundle, tmp_path, lambda t: t.assign(eer=t["eer"].astype(float).round(3), notes="n"))
    code, lines = terminal(table, "--bundle", bundle.root, "--key", bundle.public_key)
    assert code == 0 and lines[0].startswith(f"PASS: {table} (8 rows): 0 errors, ")
    assert lines[0].endswith("; compared at printed precision: eer 3 decimals; not compared: notes")


def _scores_table(n_rows: int, status: str = "scored") -> bytes:
    """A score file of ``n_rows`` rows that compresses to little: every label 0, every score 0."""
    import numpy as np
    import pyarrow as arrow
    import pyarrow.parquet as pq

    table = arrow.table(
        {
            "trial_index": arrow.array(np.arange(n_rows, dtype=np.int64)),
            "label": arrow.array(np.zeros(n_rows, dtype=np.int8)),
            "score": arrow.array(np.zeros(n_rows)),
            "status": arrow.array([status], arrow.string()).take(arrow.array(np.zeros(n_rows, dtype=np.int64))),
        }
    )
    sink = arrow.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return bytes(sink.getvalue().to_pybytes())


@pytest.mark.parametrize(
    ("n_rows", "status", "problem"),
    [
        (2_000_000, "scored", "holds 2000000 rows, more than the longest trial list (160): not read"),
        (160, "scored" * 200_000, "a status is not one of scored, "),  # 1.2 MB spelt out 160 times: 192 MB
    ],
    ids=["rows", "status"],
)
def test_a_score_file_that_would_expand_in_memory_is_refused_before_it_is_decoded(
    bundle: SyntheticBundle, n_rows: int, status: str, problem: str
) -> None:
    """A few MB of Parquet can spell gigabytes: the row count and the status dictionary are read first."""
    (bundle.root / "scores" / f"{RECORD}.parquet").write_bytes(_scores_table(n_rows, status))
    resign(bundle)
    code, _, report = audit(bundle.root / "results.csv", "--bundle", bundle.root, "--key", bundle.public_key)
    assert code == 1 and "bundle-schema" in errors(report)
    flag = next(flag for flag in report["flags"] if flag["id"] == "bundle-schema")
    [case] = [c for c in flag["details"]["failures"] if c.get("file") == f"scores/{RECORD}.parquet"]
    assert case["problem"].startswith(problem), case["problem"]
