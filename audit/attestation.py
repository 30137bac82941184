"""The auditor's signed verdict of a finished audit: what it attests (:func:`audit_outcome`: the subjects, the
verdict and its cause, every step and flag as passed / warned / failed, the effective configuration) and where it is
written (beside the report). ``provenance.attestation`` writes and reads the documents; ``audit verify --attest``
and ``interbias reproduce`` call :func:`write_audit_attestation`."""

from __future__ import annotations

import shlex
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from schemas import STATEMENT_FILE

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from audit.bundle import VerifiedBundle
    from provenance import AttestedSubject, AuditOutcome, Digest, ReviewerKey

__all__ = [
    "VERIFIER_PACKAGES",
    "AttestedRequest",
    "attestation_pointer",
    "audit_outcome",
    "write_audit_attestation",
]

# The packages whose installed files give a verdict (the runner gives none): their digest names the verifier.
VERIFIER_PACKAGES = ("audit", "schemas", "provenance", "reports")


class AttestedRequest(Protocol):
    """What an attestation reads of the audit's request (``audit.AuditRequest`` has it)."""

    @property
    def results(self) -> Path: ...
    @property
    def bundle(self) -> Path | None: ...
    @property
    def key(self) -> Path | ReviewerKey | None: ...
    @property
    def trusted_ids(self) -> frozenset[str]: ...
    @property
    def subset(self) -> str | None: ...
    @property
    def columns(self) -> Path | None: ...
    @property
    def claims(self) -> Path | None: ...


def _held_and_tests(report: dict[str, Any]) -> tuple[list[str], list[str], list[str], list[str]]:
    """The checks that held (verified levels), and the passed / warned / failed tests: each report section by its
    status (``step:<id>``; skipped and informational ones are no test), each flag by its severity (``flag:<id>``)."""
    held, passed, warned, failed = [], [], [], []
    for section in report["sections"]:
        name, status = f"step:{section['id']}", section.get("status")
        if status == "pass":
            held.append(section["id"].upper().replace("-", "_"))
            passed.append(name)
        elif status == "warning":
            warned.append(name)
        elif status in ("fail", "failed"):
            failed.append(name)
    for flag in report["flags"]:
        {"error": failed, "warning": warned, "info": passed}[flag["severity"]].append(f"flag:{flag['id']}")
    trust = report.get("trust") or {}
    if trust.get("trusted"):
        held.append("TRUSTED_KEY")
        passed.append("trust:trusted-key")
    elif report.get("trust") is not None:
        failed.append("trust:unauthenticated")
    return held, passed, warned, failed


def _cause(report: dict[str, Any]) -> str | None:
    """Why the verdict is not a pass, in one sentence (None for a pass)."""
    if report["verdict"] == "pass":
        return None
    if report.get("cause"):
        return f"{report['cause']['flag']}: {report['cause']['message']}"
    key_id = (report.get("trust") or {}).get("key_id")
    return (
        f"unauthenticated: the bundle verifies only under its own key (key id {key_id}), which proves integrity, not "
        "authorship; no key the auditor trusts signed it"
    )


def _file_entry(path: Path | None) -> dict[str, str] | None:
    """A configuration file the audit read, by name and SHA-256."""
    if path is None:
        return None
    from provenance import bytes_digest, read_regular_file

    return {"path": str(path), "sha256": bytes_digest(read_regular_file(Path(path), "a configuration file")).sha256}


def _policy(report: dict[str, Any], verified: VerifiedBundle | None, request: AttestedRequest) -> dict[str, Any]:
    """The audit's effective configuration: thresholds and tolerances, whom it trusted, the files that configured
    it, the EER variants the table names and the statistics settings the signed run declared."""
    from provenance import ReviewerKey, key_id

    trusted = set(request.trusted_ids)
    if request.key is not None:
        reviewer = request.key if isinstance(request.key, ReviewerKey) else ReviewerKey.load(request.key)
        trusted.add(key_id(reviewer.public_key))
    config = verified.files.config if verified is not None else None
    return {
        "audit": report["config"],
        "trusted_key_ids": sorted(trusted),
        "subset": request.subset,
        "columns": _file_entry(request.columns),
        "claims": _file_entry(request.claims),
        "eer_methods": report["source"].get("eer_methods"),
        "statistics": (config or {}).get("analysis"),
    }


def audit_outcome(
    report: dict[str, Any], verified: VerifiedBundle | None, request: AttestedRequest, now: datetime | None = None
) -> AuditOutcome:
    """What the finished audit attests: the subjects (the bundle's signed statement, or the archive it came as, and
    the audited table), the verdict with its cause, every check, the policy, the verifier."""
    from provenance import AttestedSubject, AuditOutcome, installed_files_digest

    source = report["source"]
    subjects: list[AttestedSubject] = []
    inputs: list[tuple[str, Digest]] = []
    if verified is not None and verified.archive is not None:
        subjects.append(AttestedSubject("bundle-archive", Path(verified.root).name, *_pair(verified.archive)))
    if verified is not None and verified.statement_digest is not None:
        if verified.archive is None:
            subjects.append(AttestedSubject("bundle-statement", STATEMENT_FILE, *_pair(verified.statement_digest)))
        inputs.append((STATEMENT_FILE, verified.statement_digest))
    subjects.append(AttestedSubject("audited-table", Path(source["path"]).name, source["sha256"], source["blake3"]))
    held, passed, warned, failed = _held_and_tests(report)
    resource = Path(request.bundle if request.bundle is not None else request.results).resolve().as_uri()
    return AuditOutcome(
        verdict=report["verdict"],
        cause=_cause(report),
        resource_uri=resource,
        subjects=tuple(subjects),
        input_attestations=tuple(inputs),
        held=tuple(held),
        passed=tuple(passed),
        warned=tuple(warned),
        failed=tuple(failed),
        policy=_policy(report, verified, request),
        tool_version=report["tool"]["version"],
        files_digest=installed_files_digest(VERIFIER_PACKAGES),
        time_verified=now or datetime.now(UTC),
    )


def _pair(digest: Digest) -> tuple[str, str]:
    return digest.sha256, digest.blake3


def attestation_pointer(out: Path, request: AttestedRequest, private_key: Ed25519PrivateKey) -> dict[str, str]:
    """Where the signed verdict lies and the one command that checks it (the report's artefact-evaluation section
    says both)."""
    from provenance import key_id
    from schemas import ATTESTATION_FILE

    words = ["audit", "verify-attestation", str(Path(out) / ATTESTATION_FILE), "--key", "AUDITOR.pub"]
    words += ["--bundle", str(request.bundle)] if request.bundle is not None else []
    words += ["--table", str(request.results)]
    return {
        "file": ATTESTATION_FILE,
        "key_id": key_id(private_key.public_key()),
        "command": shlex.join(words),
    }


def write_audit_attestation(
    out: Path,
    report: dict[str, Any],
    verified: VerifiedBundle | None,
    request: AttestedRequest,
    private_key: Ed25519PrivateKey,
) -> list[Path]:
    """Write the attestation and its policy file into ``out`` (beside the report); the paths written."""
    from provenance import write_attestation

    return write_attestation(out, audit_outcome(report, verified, request), private_key)
