"""``audit verify --attest`` and ``audit verify-attestation`` on a signed synthetic bundle.

Oracles independent of the code under test: ``securesystemslib`` verifies the DSSE envelopes (its own PAE and
ed25519), ``in-toto-attestation``'s protobuf bindings parse the Statement and both predicates with unknown fields
refused, and every digest is recomputed here with ``hashlib`` from the files. Hostile cases: another bundle, a
re-signed attestation, an edited verdict, a bundle or table changed after the attestation, a changed policy, a
malformed or unsigned file.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import shlex
import shutil
import tarfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from google.protobuf import json_format
from in_toto_attestation.predicates.test_result.v0 import test_result_pb2
from in_toto_attestation.predicates.vsa.v1.vsa_pb2 import VerificationSummary
from in_toto_attestation.v1.statement import Statement
from in_toto_attestation.v1.statement_pb2 import Statement as StatementProto
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import SSlibKey
from typer.testing import CliRunner

from tests.provenance.synthetic_bundle import SyntheticBundle, build_bundle

VSA = "https://slsa.dev/verification_summary/v1"
TEST_RESULT = "https://in-toto.io/attestation/test-result/v0.1"


def cli(*args: str | Path) -> tuple[int, str, str]:
    from audit.cli import app

    result = CliRunner().invoke(app, [str(arg) for arg in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def auditor_keys(folder: Path) -> tuple[Path, Path]:
    """An auditor's key pair, written here with cryptography (not the toolkit's keygen)."""
    key = Ed25519PrivateKey.generate()
    folder.mkdir(parents=True, exist_ok=True)
    private, public = folder / "auditor.key", folder / "auditor.pub"
    private.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public


def envelopes(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def statement_of(envelope: dict[str, Any]) -> dict[str, Any]:
    return json.loads(base64.b64decode(envelope["payload"]))


class Attested:
    """A bundle, its audit report and the attestation written beside it, with the auditor's keys."""

    def __init__(self, root: Path) -> None:
        self.bundle: SyntheticBundle = build_bundle(root)
        self.private, self.public = auditor_keys(root / "auditor")
        self.out = root / "out"
        self.code, self.stdout, self.stderr = cli(
            "verify", self.bundle.root / "results.csv", "--bundle", self.bundle.root, "--key", self.bundle.public_key,
            "--out", self.out, "--attest", self.private,
        )  # fmt: skip
        self.attestation = self.out / "attestation.intoto.jsonl"
        self.report = json.loads((self.out / "report.json").read_text())

    def check(
        self, *extra: str | Path, attestation: Path | None = None, key: Path | None = None
    ) -> tuple[int, str, str]:
        return cli("verify-attestation", attestation or self.attestation, "--key", key or self.public, *extra)


@pytest.fixture(scope="module")
def attested(tmp_path_factory: pytest.TempPathFactory) -> Attested:
    return Attested(tmp_path_factory.mktemp("attested"))


def public_sslib_key(public_pem: Path) -> SSlibKey:
    """The auditor's key for securesystemslib, under the project's key id (SHA-256 of the raw 32 bytes)."""
    key = serialization.load_pem_public_key(public_pem.read_bytes())
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return SSlibKey.from_crypto(key, keyid=hashlib.sha256(raw).hexdigest())


def test_the_audit_writes_its_attestation_and_policy_beside_the_report(attested: Attested) -> None:
    assert attested.code == 0 and attested.stdout.startswith("PASS"), attested.stderr
    assert attested.attestation.is_file() and (attested.out / "audit-policy.json").is_file()
    assert f"wrote {attested.attestation}" in attested.stdout
    assert not (attested.bundle.root / "attestation.intoto.jsonl").exists()  # never written into the bundle


def test_securesystemslib_verifies_both_envelopes_under_the_auditors_key_only(attested: Attested) -> None:
    lines = envelopes(attested.attestation)
    assert len(lines) == 2
    key = public_sslib_key(attested.public)
    for line in lines:
        envelope = Envelope.from_dict(copy.deepcopy(line))
        assert envelope.payload_type == "application/vnd.in-toto+json"
        assert set(envelope.verify([key], 1)) == {key.keyid}
        other = public_sslib_key(auditor_keys(attested.out.parent / "other")[1])
        forged = Envelope.from_dict(copy.deepcopy(line))
        forged.signatures = {other.keyid: next(iter(forged.signatures.values()))}
        forged.signatures[other.keyid].keyid = other.keyid
        with pytest.raises(VerificationError):
            forged.verify([other], 1)


def test_in_toto_bindings_parse_the_statements_and_predicates_as_the_specs_name_them(attested: Attested) -> None:
    vsa_statement, test_statement = (statement_of(line) for line in envelopes(attested.attestation))
    for statement in (vsa_statement, test_statement):
        proto = json_format.ParseDict(statement, StatementProto(), ignore_unknown_fields=False)
        Statement.copy_from_pb(proto).validate()
    assert (vsa_statement["predicateType"], test_statement["predicateType"]) == (VSA, TEST_RESULT)
    assert vsa_statement["subject"] == test_statement["subject"]

    predicate = copy.deepcopy(vsa_statement["predicate"])
    # Where the bindings (0.9.3) differ from the SLSA VSA v1.0 text, which is authoritative: they lack
    # verifier.version and make verifiedLevels one string, not an array (in-toto/attestation issue 425).
    version = predicate["verifier"].pop("version")
    levels = predicate.pop("verifiedLevels")
    assert isinstance(levels, list) and all(isinstance(level, str) for level in levels)
    vsa = json_format.ParseDict(predicate, VerificationSummary(), ignore_unknown_fields=False)
    assert vsa.verification_result == "PASSED"
    assert vsa.verifier.id == "https://interbias-sv.org/audit" and vsa.slsa_version == "1.0"
    assert version["interbias-sv"] == attested.report["tool"]["version"]
    assert abs(vsa.time_verified.ToDatetime(tzinfo=UTC) - datetime.now(UTC)) < timedelta(minutes=30)
    assert vsa.policy.uri == "audit-policy.json"
    assert vsa.policy.digest["sha256"] == sha256(attested.out / "audit-policy.json")
    statement_sha = sha256(attested.bundle.root / "provenance" / "statement.json")
    assert [(a.uri, a.digest["sha256"]) for a in vsa.input_attestations] == [
        ("provenance/statement.json", statement_sha)
    ]
    assert vsa.resource_uri == attested.bundle.root.resolve().as_uri()
    subjects = {s["annotations"]["role"]: s["digest"]["sha256"] for s in vsa_statement["subject"]}
    assert subjects == {
        "bundle-statement": statement_sha,
        "audited-table": sha256(attested.bundle.root / "results.csv"),
    }

    tests = json_format.ParseDict(
        test_statement["predicate"], test_result_pb2.TestResult(), ignore_unknown_fields=False
    )
    passed_sections = {f"step:{s['id']}" for s in attested.report["sections"] if s["status"] == "pass"}
    warnings = {f"flag:{f['id']}" for f in attested.report["flags"] if f["severity"] == "warning"}
    assert passed_sections and passed_sections <= set(tests.passed_tests)
    assert warnings <= set(tests.warned_tests) and not tests.failed_tests
    assert tests.result == ("WARNED" if tests.warned_tests else "PASSED")
    assert {f"INTERBIAS_{s[len('step:') :].upper().replace('-', '_')}" for s in passed_sections} <= set(levels)
    assert "INTERBIAS_TRUSTED_KEY" in levels and "FAILED" not in levels
    assert [c.digest["sha256"] for c in tests.configuration] == [vsa.policy.digest["sha256"]]


def test_the_policy_file_records_the_effective_configuration(attested: Attested) -> None:
    policy = json.loads((attested.out / "audit-policy.json").read_text())
    raw = serialization.load_pem_public_key(attested.bundle.public_key.read_bytes()).public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    assert policy["trusted_key_ids"] == [hashlib.sha256(raw).hexdigest()]
    assert policy["audit"] == attested.report["config"]
    assert policy["eer_methods"] == attested.report["source"]["eer_methods"]


def test_the_report_says_where_the_attestation_is_and_the_command_that_checks_it(attested: Attested) -> None:
    summary = next(s for s in attested.report["sections"] if s["id"] == "artefact-evaluation")
    command = attested.report["attestation"]["command"]
    assert any(line.startswith("Signed verdict: attestation.intoto.jsonl") for line in summary["lines"])
    assert any(command in line for line in summary["lines"])
    program, *args = [str(attested.public) if arg == "AUDITOR.pub" else arg for arg in shlex.split(command)]
    assert program == "audit"
    code, stdout, stderr = cli(*args)
    assert code == 0 and stdout.startswith("PASS: recorded verdict PASSED"), stderr


def test_verify_attestation_passes_for_the_bundle_and_table_attested(attested: Attested) -> None:
    root = attested.bundle.root
    code, stdout, stderr = attested.check("--bundle", root, "--table", root / "results.csv")
    assert code == 0, stderr
    assert stdout.startswith("PASS: recorded verdict PASSED")
    n_files = len(statement_of(json.loads((root / "provenance" / "run.intoto.jsonl").read_bytes()))["subject"])
    assert f"all {n_files} files it names are those attested" in stdout


def copied(attested: Attested, tmp_path: Path) -> Path:
    """A copy of the bundle to change."""
    target = tmp_path / "bundle"
    shutil.copytree(attested.bundle.root, target)
    return target


def test_a_bundle_changed_after_the_attestation_fails_naming_the_file(attested: Attested, tmp_path: Path) -> None:
    bundle = copied(attested, tmp_path)
    trial_list = next((bundle / "trials").glob("*.csv"))
    trial_list.write_bytes(trial_list.read_bytes().replace(b"\n1,", b"\n0,", 1))
    code, stdout, _ = attested.check("--bundle", bundle)
    assert code == 1
    assert stdout.startswith("FAIL: attestation-bundle:") and f"trials/{trial_list.name} (changed)" in stdout
    trial_list.unlink()
    (bundle / "extra.csv").write_text("a\n")
    code, stdout, _ = attested.check("--bundle", bundle)
    assert code == 1 and "(missing)" in stdout and "extra.csv (not in the statement)" in stdout


def test_another_bundle_is_not_what_was_attested(attested: Attested, tmp_path: Path) -> None:
    other = build_bundle(tmp_path, fallback_record=attested.bundle.read_results()["record_id"].iloc[0])
    code, stdout, _ = attested.check("--bundle", other.root)
    assert code == 1 and stdout.startswith("FAIL: attestation-bundle:") and "statement.json has sha256" in stdout
    archive = tmp_path / "bundle.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(attested.bundle.root, arcname="bundle")
    code, stdout, _ = attested.check("--bundle", archive)  # the attestation is of the folder, not an archive
    assert code == 1 and stdout.startswith("FAIL: attestation-subject:") and "bundle-statement" in stdout


def test_a_changed_table_or_policy_fails_naming_it(attested: Attested, tmp_path: Path) -> None:
    table = tmp_path / "results.csv"
    table.write_bytes((attested.bundle.root / "results.csv").read_bytes() + b"\n")
    code, stdout, _ = attested.check("--table", table)
    assert code == 1 and stdout.startswith(f"FAIL: attestation-table: {table} has sha256 {sha256(table)}")
    folder = tmp_path / "out"
    shutil.copytree(attested.out, folder)
    policy = folder / "audit-policy.json"
    policy.write_text(policy.read_text().replace('"near_chance_eer": 0.4', '"near_chance_eer": 0.45'))
    code, stdout, _ = attested.check(attestation=folder / "attestation.intoto.jsonl")
    assert code == 1 and stdout.startswith("FAIL: attestation-policy:")


def _rewrite(attested: Attested, tmp_path: Path, edit: Any, sign_with: Ed25519PrivateKey | None = None) -> Path:
    """The attestation with each statement edited, its envelopes re-signed (by ``sign_with``) or not."""
    from provenance import sign_envelope

    lines = []
    for envelope in envelopes(attested.attestation):
        statement = statement_of(envelope)
        edit(statement)
        payload = json.dumps(statement).encode()
        if sign_with is not None:
            lines.append(sign_envelope(payload, sign_with))
        else:
            lines.append(json.dumps(envelope | {"payload": base64.b64encode(payload).decode()}).encode() + b"\n")
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "attestation.intoto.jsonl"
    path.write_bytes(b"".join(lines))
    shutil.copy(attested.out / "audit-policy.json", tmp_path / "audit-policy.json")
    return path


def fail_verdict(statement: dict[str, Any]) -> None:
    predicate = statement["predicate"]
    if "verificationResult" in predicate:
        predicate["verificationResult"] = "FAILED"
    else:
        predicate["result"] = "FAILED"


def test_an_edited_verdict_or_a_re_signed_attestation_fails_the_signature(attested: Attested, tmp_path: Path) -> None:
    edited = _rewrite(attested, tmp_path / "edited", fail_verdict)
    code, stdout, _ = attested.check(attestation=edited)
    assert code == 1 and stdout.startswith("FAIL: attestation-signature:") and "line 1" in stdout
    resigned = _rewrite(attested, tmp_path / "resigned", lambda statement: None, Ed25519PrivateKey.generate())
    code, stdout, _ = attested.check(attestation=resigned)
    assert code == 1 and stdout.startswith("FAIL: attestation-signature:")
    code, stdout, _ = attested.check(key=attested.bundle.public_key)  # the authors' key did not sign the verdict
    assert code == 1 and stdout.startswith("FAIL: attestation-signature:")


def test_subjects_that_differ_between_the_statements_are_refused(attested: Attested, tmp_path: Path) -> None:
    private = serialization.load_pem_private_key(attested.private.read_bytes(), password=None)
    assert isinstance(private, Ed25519PrivateKey)

    def other_table(statement: dict[str, Any]) -> None:
        if statement["predicateType"] == TEST_RESULT:
            statement["subject"][-1]["digest"]["sha256"] = "0" * 64

    path = _rewrite(attested, tmp_path, other_table, private)
    code, _, stderr = attested.check(attestation=path)
    assert code == 2 and stderr.strip().endswith("the two statements name different subjects")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"not json\n{}\n", "the envelope is not JSON"),
        (b"", "holds 0 envelope lines, expected 2"),
        (b'{"payload": "", "payloadType": "application/vnd.in-toto+json", "signatures": []}\n' * 2, "no signatures"),
    ],
)
def test_a_malformed_or_unsigned_attestation_is_one_line_and_exit_2(
    attested: Attested, tmp_path: Path, content: bytes, expected: str
) -> None:
    path = tmp_path / "attestation.intoto.jsonl"
    path.write_bytes(content)
    code, stdout, stderr = attested.check(attestation=path)
    assert code == 2 and not stdout and len(stderr.strip().splitlines()) == 1 and expected in stderr


def test_attest_needs_out_and_a_private_key(attested: Attested) -> None:
    table = attested.bundle.root / "results.csv"
    code, _, stderr = cli("verify", table, "--attest", attested.private)
    assert code == 2 and "give --out too" in stderr
    code, _, stderr = cli("verify", table, "--out", attested.out.parent / "o", "--attest", attested.public)
    assert code == 2 and "not an unencrypted PEM private key" in stderr and len(stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_an_unauthenticated_bundle_is_attested_failed_with_its_cause(attested: Attested, tmp_path: Path) -> None:
    out = tmp_path / "out"
    table = attested.bundle.root / "results.csv"
    code, stdout, _ = cli("verify", table, "--bundle", attested.bundle.root, "--out", out, "--attest", attested.private)
    assert code == 1 and stdout.startswith("UNAUTHENTICATED")
    vsa, tests = (statement_of(line)["predicate"] for line in envelopes(out / "attestation.intoto.jsonl"))
    assert vsa["verificationResult"] == "FAILED" and vsa["verifiedLevels"][0] == "FAILED"
    assert "INTERBIAS_TRUSTED_KEY" not in vsa["verifiedLevels"]
    assert tests["result"] == "FAILED" and tests["failedTests"][0].startswith("cause: unauthenticated:")
    assert "trust:unauthenticated" in tests["failedTests"]
    code, stdout, _ = cli("verify-attestation", out / "attestation.intoto.jsonl", "--key", attested.public)
    assert code == 1 and stdout.startswith("FAIL: recorded verdict FAILED: unauthenticated:")
    code, _, _ = cli("verify", table, "--bundle", attested.bundle.root, "--out", out)
    assert not (out / "attestation.intoto.jsonl").exists()  # a report without --attest leaves no stale verdict


@pytest.mark.slow
def test_an_archive_is_attested_byte_for_byte(attested: Attested, tmp_path: Path) -> None:
    archive = tmp_path / "bundle.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(attested.bundle.root, arcname="bundle")
    out, table = tmp_path / "out", attested.bundle.root / "results.csv"
    code, stdout, stderr = cli(
        "verify", table, "--bundle", archive, "--key", attested.bundle.public_key, "--out", out,
        "--attest", attested.private,
    )  # fmt: skip
    assert code == 0 and stdout.startswith("PASS"), stderr
    subjects = statement_of(envelopes(out / "attestation.intoto.jsonl")[0])["subject"]
    assert [(s["annotations"]["role"], s["name"], s["digest"]["sha256"]) for s in subjects] == [
        ("bundle-archive", "bundle.tar.gz", sha256(archive)),
        ("audited-table", "results.csv", sha256(table)),
    ]
    check = ("verify-attestation", out / "attestation.intoto.jsonl", "--key", attested.public, "--bundle")
    assert cli(*check, archive)[0] == 0
    archive.write_bytes(archive.read_bytes() + b"\0")
    code, stdout, _ = cli(*check, archive)
    assert code == 1 and stdout.startswith(f"FAIL: attestation-bundle: {archive} has sha256 {sha256(archive)}")


def test_a_failed_audit_is_attested_failed_with_the_cause_first(attested: Attested, tmp_path: Path) -> None:
    from audit import AuditRequest, audit_table, finish_audit, write_audit_attestation

    bundle = copied(attested, tmp_path)
    victim = sorted((bundle / "trials").glob("*.csv"))[0]
    victim.write_bytes(victim.read_bytes() + b"\n")
    request = AuditRequest(bundle / "results.csv", bundle=bundle, key=attested.bundle.public_key)
    table = audit_table(request)
    report = finish_audit(table)
    assert report["verdict"] == "fail" and report["cause"]["flag"] == "digest-mismatch"
    private = serialization.load_pem_private_key(attested.private.read_bytes(), password=None)
    assert isinstance(private, Ed25519PrivateKey)
    out = tmp_path / "out"
    out.mkdir()
    write_audit_attestation(out, report, table.verified, request, private)
    vsa, tests = (statement_of(line)["predicate"] for line in envelopes(out / "attestation.intoto.jsonl"))
    assert vsa["verificationResult"] == "FAILED" and vsa["verifiedLevels"][0] == "FAILED"
    assert "INTERBIAS_BUNDLE_SUBJECT_DIGESTS" not in vsa["verifiedLevels"]
    assert tests["failedTests"][0] == f"cause: digest-mismatch: {report['cause']['message']}"
    assert {"step:bundle-subject-digests", "flag:digest-mismatch"} <= set(tests["failedTests"])
    code, stdout, _ = attested.check(attestation=out / "attestation.intoto.jsonl")
    assert code == 1 and stdout.startswith("FAIL: recorded verdict FAILED: digest-mismatch:")
    # The folder is attested by its signed statement, which the changed file does not match: checked against the
    # bundle, the attestation names that file, as the audit did.
    code, stdout, _ = attested.check("--bundle", bundle, attestation=out / "attestation.intoto.jsonl")
    assert code == 1 and stdout.startswith("FAIL: attestation-bundle:") and f"trials/{victim.name} (changed)" in stdout
