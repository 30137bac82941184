"""Property-based fuzzing of ``provenance.attestation``'s reading and checks: whatever an attestation file holds (any
bytes, any JSON signed by the auditor's key, one changed byte of a real one), only the documented errors escape
(``InputError``: exit 2; ``AttestationMismatch``: exit 1), every note is printable text, and a file that still
verifies carries exactly the statements that were signed."""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from provenance import (
    TEST_RESULT_PREDICATE_TYPE,
    VSA_PREDICATE_TYPE,
    AttestationMismatch,
    AttestedSubject,
    AuditOutcome,
    attestation_bytes,
    bytes_digest,
    public_key_pem,
    read_attestation,
    sign_envelope,
    verify_attested_bundle,
    verify_attested_policy,
    verify_attested_results,
    verify_attested_table,
    verify_attested_toolkit,
)
from schemas import ATTESTATION_FILE, STATEMENT_FILE, InputError
from tests.fuzzing import examples

KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
PUBLIC_PEM = public_key_pem(KEY.public_key())
FUZZ = settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
STATEMENT = b'{"subject": [{"name": "results.csv", "digest": {"sha256": "00"}}]}\n'
TABLE = b"record_id,eer\nr1,0.1\n"
STATEMENT_DIGEST, TABLE_DIGEST = bytes_digest(STATEMENT), bytes_digest(TABLE)
OUTCOME = AuditOutcome(
    verdict="fail",
    cause="digest-mismatch: a file differs",
    resource_uri="file:///bundle",
    subjects=(
        AttestedSubject(
            "bundle-statement", "provenance/statement.json", STATEMENT_DIGEST.sha256, STATEMENT_DIGEST.blake3
        ),
        AttestedSubject("audited-table", "results.csv", bytes_digest(TABLE).sha256, bytes_digest(TABLE).blake3),
    ),
    input_attestations=((STATEMENT_FILE, STATEMENT_DIGEST),),
    held=("BUNDLE_SIGNATURE",),
    passed=("step:bundle-signature",),
    warned=(),
    failed=("flag:digest-mismatch",),
    policy={"audit": {"near_chance_eer": 0.4}},
    tool_version="0.1.0",
    files_digest=bytes_digest(b"files"),
    time_verified=datetime(2026, 12, 6, 17, 0, tzinfo=UTC),
)
POLICY, SIGNED = attestation_bytes(OUTCOME, KEY)
STATEMENTS = [json.loads(base64.b64decode(json.loads(line)["payload"])) for line in SIGNED.splitlines()]

TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=10) | st.sampled_from(
    ["", "\ud800", "bundle-statement", "audited-table", "bundle-archive", "PASSED", "FAILED", "results.csv", "../x"]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)


def mutated(statement: dict[str, Any]) -> st.SearchStrategy[Any]:
    """The statement with one field (of the top level, the predicate or a subject) replaced by any JSON."""
    places = [((), name) for name in statement]
    places += [(("predicate",), name) for name in statement["predicate"]]
    places += [(("subject", index), name) for index, subject in enumerate(statement["subject"]) for name in subject]
    places += [(("subject", 0, "annotations"), "role"), (("subject", 0, "digest"), "sha256")]

    def replace(place: tuple[tuple[Any, ...], str], value: Any) -> Any:
        changed = copy.deepcopy(statement)
        container = changed
        for step in place[0]:
            container = container[step]
        container[place[1]] = value
        return changed

    return st.builds(replace, st.sampled_from(places), JSON)


def check_everything(folder: Path) -> None:
    """Read the attestation in ``folder`` and run every check on the files there; only documented errors escape."""
    (folder / "results.csv").write_bytes(TABLE)
    (folder / "bundle" / "provenance").mkdir(parents=True, exist_ok=True)
    (folder / "bundle" / "provenance" / "statement.json").write_bytes(STATEMENT)
    with contextlib.suppress(InputError, AttestationMismatch):
        read = read_attestation(folder / ATTESTATION_FILE, KEY.public_key())
        notes = [verify_attested_results(read), verify_attested_toolkit(read, "0.1.0", bytes_digest(b"files"))]
        for check in (
            lambda: verify_attested_policy(read, folder),
            lambda: verify_attested_table(read, folder / "results.csv"),
            lambda: verify_attested_bundle(read, folder / "bundle"),
        ):
            with contextlib.suppress(AttestationMismatch):
                notes.append(check())
        for note in notes:
            assert isinstance(note, str)
            note.encode("utf-8")


def run(content: bytes) -> None:
    """The checks in the library, then the command line over the same files: exit 0, 1 or 2, never an internal
    error."""
    from typer.testing import CliRunner

    from audit.cli import app

    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / ATTESTATION_FILE).write_bytes(content)
        (folder / "audit-policy.json").write_bytes(POLICY)
        (folder / "auditor.pub").write_bytes(PUBLIC_PEM)
        check_everything(folder)
        arguments = [str(folder / ATTESTATION_FILE), "--key", str(folder / "auditor.pub"), "--bundle"]
        arguments += [str(folder / "bundle"), "--table", str(folder / "results.csv")]
        done = CliRunner().invoke(app, ["verify-attestation", *arguments])
        assert done.exit_code in (0, 1, 2) and "internal error" not in done.output, done.output


@FUZZ
@given(content=st.binary(max_size=300))
def test_any_bytes_are_read_or_refused(content: bytes) -> None:
    run(content)


@FUZZ
@given(vsa=mutated(STATEMENTS[0]) | JSON, tests=mutated(STATEMENTS[1]) | JSON)
def test_any_signed_statements_are_read_or_refused(vsa: Any, tests: Any) -> None:
    run(b"".join(sign_envelope(json.dumps(statement).encode(), KEY) for statement in (vsa, tests)))


@FUZZ
@given(position=st.integers(0, len(SIGNED) - 1), value=st.integers(0, 255))
def test_a_changed_byte_never_verifies_other_statements(position: int, value: int) -> None:
    content = bytearray(SIGNED)
    content[position] = value
    with tempfile.TemporaryDirectory() as name:
        path = Path(name) / ATTESTATION_FILE
        path.write_bytes(bytes(content))
        with contextlib.suppress(InputError, AttestationMismatch):
            read = read_attestation(path, KEY.public_key())
            assert [read.vsa, read.test_result] == STATEMENTS


def test_the_unchanged_attestation_reads_with_its_recorded_failure() -> None:
    with tempfile.TemporaryDirectory() as name:
        path = Path(name) / ATTESTATION_FILE
        path.write_bytes(SIGNED)
        read = read_attestation(path, KEY.public_key())
    assert (read.vsa["predicateType"], read.test_result["predicateType"]) == (
        VSA_PREDICATE_TYPE,
        TEST_RESULT_PREDICATE_TYPE,
    )
    assert verify_attested_results(read) == "FAILED"
    assert read.test_predicate["failedTests"] == ["cause: digest-mismatch: a file differs", "flag:digest-mismatch"]
    assert read.vsa_predicate["verifiedLevels"] == ["FAILED", "INTERBIAS_BUNDLE_SIGNATURE"]
