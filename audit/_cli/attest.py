"""``audit verify ... --attest KEY`` (its key, read before the audit) and ``audit verify-attestation``, which checks
an attestation offline (``audit.attestation`` says what is attested, ``provenance.attestation`` writes and reads the
documents)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from schemas import InputError, one_line_errors

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

__all__ = ["check_attest", "verify_attestation"]


def check_attest(attest: Path | None, out: Path | None) -> Ed25519PrivateKey | None:
    """``--attest KEY`` is a usable ed25519 private key and comes with ``--out`` (the attestation lies beside the
    report); read before the audit runs, so a bad key costs no audit."""
    if attest is None:
        return None
    if out is None:
        raise InputError(str(attest), "--attest writes the attestation beside the report; give --out too")
    from provenance import load_private_key

    return load_private_key(attest)


@one_line_errors()
def verify_attestation(
    attestation: Annotated[Path, typer.Argument(help="attestation.intoto.jsonl written by audit verify --attest")],
    key: Annotated[Path, typer.Option("--key", help="the auditor's public key (PEM)")],
    bundle: Annotated[
        Path | None, typer.Option("--bundle", help="the bundle folder or archive the attestation should cover")
    ] = None,
    table: Annotated[
        Path | None, typer.Option("--table", help="the results table the attestation should cover")
    ] = None,
) -> None:
    """Check an audit's attestation offline: the auditor's signature, its statements, that BUNDLE and TABLE are the
    ones attested; print the recorded verdict and its cause.

    Exit codes: 0 the attestation verifies and records PASSED, 1 it records FAILED or a check fails (the first line
    names it), 2 a malformed or unsigned file (one line on stderr).
    """
    from audit.attestation import VERIFIER_PACKAGES  # here: the command line's start imports no pandas
    from provenance import (
        CAUSE_PREFIX,
        RESULT_FAILED,
        AttestationMismatch,
        installed_files_digest,
        load_public_key,
        read_attestation,
        verify_attested_bundle,
        verify_attested_policy,
        verify_attested_results,
        verify_attested_table,
        verify_attested_toolkit,
    )
    from schemas import tool_version

    public_key = load_public_key(key)
    try:  # a check that does not hold is a finding: its line first on stdout, exit 1
        read = read_attestation(attestation, public_key)
        result = verify_attested_results(read)
        notes = [verify_attested_policy(read, attestation.parent)]
        notes += [verify_attested_bundle(read, bundle)] if bundle is not None else []
        notes += [verify_attested_table(read, table)] if table is not None else []
    except AttestationMismatch as error:
        typer.echo(error.line())
        raise typer.Exit(error.exit_code) from None
    notes.append(verify_attested_toolkit(read, tool_version(), installed_files_digest(VERIFIER_PACKAGES)))
    vsa, tests = read.vsa_predicate, read.test_predicate
    failed = tests["failedTests"]
    cause = next((test.removeprefix(CAUSE_PREFIX) for test in failed if test.startswith(CAUSE_PREFIX)), None)
    head = "PASS" if result != RESULT_FAILED else "FAIL"
    verdict = f"recorded verdict {result}" + (f": {cause}" if cause else "")
    typer.echo(
        f"{head}: {verdict} (the attestation verifies under key id {read.key_id}; {vsa['resourceUri']} verified at "
        f"{vsa['timeVerified']})"
    )
    for note in notes:
        typer.echo(f"  {note}")
    counts = [f"{len(tests[f'{name}Tests'])} {name}" for name in ("passed", "warned", "failed")]
    typer.echo(f"  tests: {', '.join(counts)}")
    raise typer.Exit(0 if result != RESULT_FAILED else 1)
