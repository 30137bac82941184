"""The auditor's signed verdict: two in-toto Statements v1 in DSSE envelopes (ed25519, the bundle's signing code),
one JSON line each in ``attestation.intoto.jsonl``, and the audit's effective configuration beside them.

- line 1, SLSA Verification Summary (``VSA_PREDICATE_TYPE``): ``verifier`` {id, version: the toolkit's version and the
  digest of its installed files}, ``timeVerified``, ``resourceUri``, ``policy`` {uri: the policy file, digest},
  ``inputAttestations`` (the run's statement), ``verificationResult`` PASSED / FAILED, ``verifiedLevels`` (the checks
  that held, in the project's ``INTERBIAS_`` vocabulary; ``FAILED`` first on a failure), ``slsaVersion``;
- line 2, in-toto Test Result (``TEST_PREDICATE_TYPE``): ``result`` PASSED / WARNED / FAILED,
  ``configuration`` (the policy file), ``passedTests``, ``warnedTests``, ``failedTests`` (each step and flag; the
  cause of a failure first).

Both statements have the same subjects: what was verified, each annotated with its ``role`` (``ROLES``). Reading back
(:func:`read_attestation`) checks the signatures under the auditor's key, the statement and predicate types and the
fields this module writes, so a verifier checks the bytes it was given before it believes anything in them.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from provenance.atomic import atomic_write_bytes
from provenance.canonical import canonical_json
from provenance.digests import Digest, bytes_digest
from provenance.reading import read_regular_file
from provenance.statement import STATEMENT_TYPE
from schemas import (
    ATTESTATION_FILE,
    EXIT_FINDING,
    NOT_SUBJECTS,
    POLICY_FILE,
    STATEMENT_FILE,
    BundleFileError,
    Error,
    InputError,
    json_file_bytes,
    read_bundle_file,
)

if TYPE_CHECKING:  # signing and verifying import cryptography when they run: the file names here need none of it
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = [
    "CAUSE_PREFIX",
    "MAX_ATTESTATION_BYTES",
    "RESULT_FAILED",
    "RESULT_PASSED",
    "RESULT_WARNED",
    "ROLES",
    "TEST_RESULT_PREDICATE_TYPE",
    "VERIFIER_ID",
    "VSA_PREDICATE_TYPE",
    "AttestationMismatch",
    "AttestedSubject",
    "AuditOutcome",
    "ReadAttestation",
    "attestation_bytes",
    "installed_files_digest",
    "read_attestation",
    "verify_attested_bundle",
    "verify_attested_policy",
    "verify_attested_results",
    "verify_attested_table",
    "verify_attested_toolkit",
    "write_attestation",
]

VSA_PREDICATE_TYPE = "https://slsa.dev/verification_summary/v1"
TEST_RESULT_PREDICATE_TYPE = "https://in-toto.io/attestation/test-result/v0.1"
VERIFIER_ID = "https://interbias-sv.org/audit"
SLSA_VERSION = "1.0"
RESULT_PASSED, RESULT_WARNED, RESULT_FAILED = "PASSED", "WARNED", "FAILED"
CAUSE_PREFIX = "cause: "  # the first failed test of a failure: why the verdict is not a pass, in one sentence
# What a subject is: the bundle's signed statement (a folder), the archive file the bundle came as, the audited table.
ROLES = ("bundle-statement", "bundle-archive", "audited-table")
MAX_ATTESTATION_BYTES = 16 * 1024 * 1024  # two envelopes of a few hundred checks: far below this


@dataclass(frozen=True)
class AttestedSubject:
    """One thing the audit verified: its role (``ROLES``), its name and its two digests."""

    role: str
    name: str
    sha256: str
    blake3: str

    def descriptor(self) -> dict[str, Any]:
        """An in-toto ResourceDescriptor: name, digest {sha256, blake3}, the role as an annotation."""
        digest = {"sha256": self.sha256, "blake3": self.blake3}
        return {"name": self.name, "digest": digest, "annotations": {"role": self.role}}


@dataclass(frozen=True)
class AuditOutcome:
    """What a finished audit attests: the subjects, the verdict and its cause, every check by outcome, the policy.

    ``verdict``: the report's ``pass`` / ``fail`` / ``unauthenticated``; ``held``: the checks that held (verified
    levels, without the prefix); ``passed`` / ``warned`` / ``failed``: test names; ``policy``: the audit's effective
    configuration, written as ``POLICY_FILE``; ``input_attestations``: (uri, digest) of the statements it relied on.
    """

    verdict: str
    cause: str | None
    resource_uri: str
    subjects: tuple[AttestedSubject, ...]
    input_attestations: tuple[tuple[str, Digest], ...]
    held: tuple[str, ...]
    passed: tuple[str, ...]
    warned: tuple[str, ...]
    failed: tuple[str, ...]
    policy: dict[str, Any]
    tool_version: str
    files_digest: Digest
    time_verified: datetime

    @property
    def result(self) -> str:
        """The VSA's verificationResult: PASSED for a pass only."""
        return RESULT_PASSED if self.verdict == "pass" else RESULT_FAILED


def installed_files_digest(packages: Iterable[str]) -> Digest:
    """The digest of the toolkit's installed source (every ``.py``/``.pyi`` of ``packages``, by package-relative POSIX
    path, size and SHA-256, sorted), found without importing a package: which code gave the verdict."""
    lines = []
    for package in packages:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise InputError(package, "not an installed package: the verifier's files cannot be digested")
        root = Path(next(iter(spec.submodule_search_locations)))
        for path in sorted(root.rglob("*.py*")):
            if path.suffix in (".py", ".pyi") and path.is_file():
                data = path.read_bytes()
                name = f"{package}/{path.relative_to(root).as_posix()}"
                lines.append(f"{name}\t{len(data)}\t{bytes_digest(data).sha256}\n")
    return bytes_digest("".join(sorted(lines)).encode("utf-8"))


def _descriptor(uri: str, digest: Digest) -> dict[str, Any]:
    return {"uri": uri, "digest": {"sha256": digest.sha256, "blake3": digest.blake3}}


def _statement(outcome: AuditOutcome, predicate_type: str, predicate: dict[str, Any]) -> dict[str, Any]:
    return {
        "_type": STATEMENT_TYPE,
        "subject": [subject.descriptor() for subject in outcome.subjects],
        "predicateType": predicate_type,
        "predicate": predicate,
    }


def _timestamp(moment: datetime) -> str:
    """RFC 3339 in UTC, to the second (``2026-12-06T17:30:00Z``); a naive time is refused."""
    if moment.tzinfo is None:
        raise ValueError("timeVerified needs a timezone-aware time")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def attestation_bytes(outcome: AuditOutcome, private_key: Ed25519PrivateKey) -> tuple[bytes, bytes]:
    """The policy file's bytes, and the attestation file's: the VSA envelope line, then the Test Result one."""
    from provenance.dsse import sign_envelope

    policy = json_file_bytes(outcome.policy)
    policy_digest = bytes_digest(policy)
    failed_result = outcome.result == RESULT_FAILED
    vsa = {
        "verifier": {
            "id": VERIFIER_ID,
            "version": {"interbias-sv": outcome.tool_version, "interbias-sv-files-sha256": outcome.files_digest.sha256},
        },
        "timeVerified": _timestamp(outcome.time_verified),
        "resourceUri": outcome.resource_uri,
        "policy": _descriptor(POLICY_FILE, policy_digest),
        "inputAttestations": [_descriptor(uri, digest) for uri, digest in outcome.input_attestations],
        "verificationResult": outcome.result,
        "verifiedLevels": [
            *([RESULT_FAILED] if failed_result else []),
            *(f"INTERBIAS_{c}" for c in outcome.held),
        ],
        "slsaVersion": SLSA_VERSION,
    }
    test_result = {
        "result": RESULT_FAILED if failed_result else RESULT_WARNED if outcome.warned else RESULT_PASSED,
        "configuration": [{"name": POLICY_FILE, **_descriptor(POLICY_FILE, policy_digest)}],
        "passedTests": list(outcome.passed),
        "warnedTests": list(outcome.warned),
        "failedTests": [*([f"{CAUSE_PREFIX}{outcome.cause}"] if outcome.cause else []), *outcome.failed],
    }
    lines = [
        sign_envelope(canonical_json(_statement(outcome, predicate_type, predicate)), private_key)
        for predicate_type, predicate in ((VSA_PREDICATE_TYPE, vsa), (TEST_RESULT_PREDICATE_TYPE, test_result))
    ]
    return policy, b"".join(lines)


def write_attestation(folder: Path, outcome: AuditOutcome, private_key: Ed25519PrivateKey) -> list[Path]:
    """Write ``POLICY_FILE`` and ``ATTESTATION_FILE`` into ``folder``, each atomically; the paths written."""
    policy, attestation = attestation_bytes(outcome, private_key)
    written = []
    for name, data in ((POLICY_FILE, policy), (ATTESTATION_FILE, attestation)):
        atomic_write_bytes(Path(folder) / name, data)
        written.append(Path(folder) / name)
    return written


class AttestationMismatch(Error):
    """A check of an attestation that does not hold (a finding, exit 1): ``check`` names it, the message says what
    differs."""

    exit_code = EXIT_FINDING

    def __init__(self, check: str, message: str) -> None:
        super().__init__(message)
        self.check = check
        self.message = message

    def line(self) -> str:
        return f"FAIL: attestation-{self.check}: {self.message}"


@dataclass(frozen=True)
class ReadAttestation:
    """An attestation whose two signatures verified: the key id, the two statements, the subjects by role."""

    key_id: str
    vsa: dict[str, Any]
    test_result: dict[str, Any]
    subjects: dict[str, dict[str, Any]]

    @property
    def vsa_predicate(self) -> dict[str, Any]:
        return self.vsa["predicate"]

    @property
    def test_predicate(self) -> dict[str, Any]:
        return self.test_result["predicate"]


_KINDS: dict[str, Callable[[Any], bool]] = {
    "text": lambda value: isinstance(value, str),
    "object": lambda value: isinstance(value, dict),
    "list": lambda value: isinstance(value, list),
    "names": lambda value: isinstance(value, list) and all(isinstance(item, str) for item in value),
}


def _shape(path: Path, statement: Any, predicate_type: str, fields: dict[str, str]) -> None:
    """The statement is an in-toto v1 Statement of ``predicate_type`` whose predicate has ``fields`` of those kinds
    (``_KINDS``: text, object, list, names)."""
    what = f"the {predicate_type} statement"
    if not isinstance(statement, dict) or statement.get("_type") != STATEMENT_TYPE:
        raise InputError(str(path), f"{what} is not an in-toto Statement v1")
    if statement.get("predicateType") != predicate_type:
        raise InputError(
            str(path), f"expected predicateType {predicate_type!r}, found {statement.get('predicateType')!r}"
        )
    predicate = statement.get("predicate")
    if not isinstance(predicate, dict):
        raise InputError(str(path), f"{what} has no predicate object")
    for name, kind in fields.items():
        if not _KINDS[kind](predicate.get(name)):
            raise InputError(str(path), f"{what}: predicate field {name!r} is missing or not {kind}")


def _subjects(path: Path, statement: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """role -> subject descriptor, each with a sha256 digest string and a known role, each role once."""
    subjects = statement.get("subject")
    if not isinstance(subjects, list) or not subjects:
        raise InputError(str(path), "a statement has no subjects")
    by_role: dict[str, dict[str, Any]] = {}
    for index, entry in enumerate(subjects):
        entry = entry if isinstance(entry, dict) else {}
        annotations = entry.get("annotations")
        role = annotations.get("role") if isinstance(annotations, dict) else None
        digest = entry.get("digest")
        if not isinstance(role, str) or role not in ROLES or role in by_role or not isinstance(entry.get("name"), str):
            raise InputError(str(path), f"subject {index} has no name, or no role of {list(ROLES)}, or a repeated one")
        if not isinstance(digest, dict) or not isinstance(digest.get("sha256"), str):
            raise InputError(str(path), f"subject {index} has no sha256 digest")
        by_role[role] = entry
    return by_role


def read_attestation(path: Path, public_key: Ed25519PublicKey) -> ReadAttestation:
    """Read ``ATTESTATION_FILE``: two envelope lines, each verified under ``public_key`` before its payload is
    parsed, a VSA then a Test Result over the same subjects.

    Raises InputError (exit 2) for a file that is not two envelopes of that shape, AttestationMismatch (exit 1) for
    an envelope that does not verify under the key.
    """
    from provenance.dsse import IN_TOTO_PAYLOAD_TYPE, EnvelopeError, parse_envelope, verify_envelope

    path = Path(path)
    data = read_regular_file(path, "an attestation (.intoto.jsonl)")
    if len(data) > MAX_ATTESTATION_BYTES:
        raise InputError(str(path), f"{len(data)} bytes; an attestation is at most {MAX_ATTESTATION_BYTES}")
    lines = [line for line in data.splitlines() if line.strip()]
    if len(lines) != 2:
        raise InputError(str(path), f"holds {len(lines)} envelope lines, expected 2 (the VSA, then the test result)")
    statements = []
    for number, line in enumerate(lines, start=1):
        try:
            envelope = parse_envelope(line)
        except EnvelopeError as error:
            raise InputError(str(path), str(error), row=number) from error
        try:
            verified_id = verify_envelope(envelope, public_key, IN_TOTO_PAYLOAD_TYPE)
        except EnvelopeError as error:
            raise AttestationMismatch("signature", f"{path}, line {number}: {error}") from error
        try:
            statement = json.loads(envelope.payload)
            json.dumps(statement, ensure_ascii=False).encode("utf-8")  # its text can be printed
        except (UnicodeError, ValueError, RecursionError) as error:
            raise InputError(str(path), f"the signed payload is not JSON text: {error}", row=number) from error
        statements.append(statement)
    vsa, test_result = statements
    _shape(path, vsa, VSA_PREDICATE_TYPE, {
        "verifier": "object", "timeVerified": "text", "resourceUri": "text", "policy": "object",
        "inputAttestations": "list", "verificationResult": "text", "verifiedLevels": "names",
    })  # fmt: skip
    _shape(path, test_result, TEST_RESULT_PREDICATE_TYPE, {
        "result": "text", "configuration": "list", "passedTests": "names", "warnedTests": "names",
        "failedTests": "names",
    })  # fmt: skip
    subjects = _subjects(path, vsa)
    if _subjects(path, test_result) != subjects:
        raise InputError(str(path), "the two statements name different subjects")
    return ReadAttestation(verified_id, vsa, test_result, subjects)


def _sha256_of(path: Path, what: str) -> str:
    return bytes_digest(read_regular_file(path, what)).sha256


def _subject(attestation: ReadAttestation, role: str, given: str) -> dict[str, Any]:
    subject = attestation.subjects.get(role)
    if subject is None:
        attested = ", ".join(f"{entry['name']} ({name})" for name, entry in sorted(attestation.subjects.items()))
        raise AttestationMismatch("subject", f"{given} is not what was attested: it attests {attested}")
    return subject


def verify_attested_results(attestation: ReadAttestation) -> str:
    """The VSA's result is PASSED or FAILED and the test result agrees (PASSED or WARNED with it, FAILED with
    FAILED); returns the recorded result."""
    result, tests = attestation.vsa_predicate["verificationResult"], attestation.test_predicate["result"]
    agreeing = {RESULT_PASSED: (RESULT_PASSED, RESULT_WARNED), RESULT_FAILED: (RESULT_FAILED,)}
    if tests not in agreeing.get(result, ()):
        raise AttestationMismatch("result", f"the VSA records {result!r} but the test result {tests!r}")
    return result


def verify_attested_policy(attestation: ReadAttestation, folder: Path) -> str:
    """The policy file beside the attestation has the digest the VSA records; a note when it is not there."""
    policy = attestation.vsa_predicate["policy"]
    uri, digest = policy.get("uri"), policy.get("digest")
    if uri != POLICY_FILE or not isinstance(digest, dict) or not isinstance(digest.get("sha256"), str):
        raise AttestationMismatch("policy", f"the VSA's policy is not {{uri: {POLICY_FILE}, digest}}")
    path = Path(folder) / POLICY_FILE
    if not path.exists():
        return f"the policy file {path} is not beside the attestation: its digest {digest['sha256']} was not compared"
    found = _sha256_of(path, "the audit's policy (JSON)")
    if found != digest["sha256"]:
        raise AttestationMismatch("policy", f"{path} has sha256 {found}, the attestation records {digest['sha256']}")
    return f"policy {path} matches its recorded digest"


def verify_attested_table(attestation: ReadAttestation, table: Path) -> str:
    """The audited table is byte for byte the one attested."""
    subject = _subject(attestation, "audited-table", str(table))
    found = _sha256_of(table, "the audited results table")
    if found != subject["digest"]["sha256"]:
        raise AttestationMismatch(
            "table",
            f"{table} has sha256 {found}; the attested table {subject['name']} had {subject['digest']['sha256']}",
        )
    return f"table {table} is the attested {subject['name']}"


def _statement_files(statement: bytes) -> dict[str, str] | None:
    """Subject name -> sha256 of a bundle's statement, or None when it is not in that shape."""
    try:
        subjects = json.loads(statement).get("subject")
        files = {entry["name"]: entry["digest"]["sha256"] for entry in subjects}
    except (ValueError, RecursionError, AttributeError, TypeError, KeyError):
        return None
    if not all(isinstance(name, str) and isinstance(sha, str) for name, sha in files.items()):
        return None
    return files


def verify_attested_bundle(attestation: ReadAttestation, bundle: Path) -> str:
    """The bundle is the one attested: an archive, byte for byte; a folder, its statement byte for byte and every
    file the statement names with its digest, and no other file (``provenance/`` and ``report/`` aside)."""
    bundle = Path(bundle)
    if not bundle.is_dir():
        subject = _subject(attestation, "bundle-archive", str(bundle))
        found = _sha256_of(bundle, "a bundle archive")
        if found != subject["digest"]["sha256"]:
            raise AttestationMismatch(
                "bundle", f"{bundle} has sha256 {found}; the attested archive {subject['name']} had "
                f"{subject['digest']['sha256']}"
            )  # fmt: skip
        return f"bundle archive {bundle} is the attested {subject['name']}"
    subject = _subject(attestation, "bundle-statement", str(bundle))
    try:
        statement_bytes = read_bundle_file(bundle, STATEMENT_FILE)
    except BundleFileError as error:
        raise AttestationMismatch("bundle", f"{bundle}: {STATEMENT_FILE} is {error.problem}") from error
    found = bytes_digest(statement_bytes).sha256
    if found != subject["digest"]["sha256"]:
        raise AttestationMismatch(
            "bundle", f"{bundle / STATEMENT_FILE} has sha256 {found}; the attested statement had "
            f"{subject['digest']['sha256']}"
        )  # fmt: skip
    files = _statement_files(statement_bytes)
    if files is None:
        return f"bundle {bundle}: its statement is the one attested, but names no files in the expected shape"
    differ = []
    for name, sha256 in sorted(files.items()):
        try:
            if bytes_digest(read_bundle_file(bundle, name)).sha256 != sha256:
                differ.append(f"{name} (changed)")
        except BundleFileError as error:
            differ.append(f"{name} ({error.problem})")
    extra = sorted(
        path.relative_to(bundle).as_posix()
        for path in bundle.rglob("*")
        if (path.is_symlink() or not path.is_dir()) and path.relative_to(bundle).parts[0] not in NOT_SUBJECTS
    )
    differ += [f"{name} (not in the statement)" for name in extra if name not in files]
    if differ:
        shown = "; ".join(differ[:10]) + (f"; and {len(differ) - 10} more" if len(differ) > 10 else "")
        raise AttestationMismatch("bundle", f"{bundle} differs from the bundle attested: {shown}")
    return f"bundle {bundle}: its statement and all {len(files)} files it names are those attested"


def verify_attested_toolkit(attestation: ReadAttestation, version: str, files_digest: Digest) -> str:
    """Whether this toolkit is the one that attested (a note either way: the signature, not the version, binds)."""
    recorded = attestation.vsa_predicate["verifier"].get("version")
    recorded = recorded if isinstance(recorded, dict) else {}
    same = recorded.get("interbias-sv") == version and recorded.get("interbias-sv-files-sha256") == files_digest.sha256
    if same:
        return f"attested by this toolkit (interbias-sv {version}, the same installed files)"
    return (
        f"attested by interbias-sv {recorded.get('interbias-sv')} (files sha256 "
        f"{str(recorded.get('interbias-sv-files-sha256'))[:16]}...); this is {version} (files sha256 "
        f"{files_digest.sha256[:16]}...): re-run the audit with that version to reproduce the verdict"
    )
