"""The first steps of bundle verification: the DSSE signature over the exact payload bytes, then the statement.

Trust model: PASS needs a signature by a key the reviewer trusts, given as the public key itself (``--key``) or
as its key id in a file of trusted ids (``--trusted-keys``). A bundle that verifies only under the key it carries
is intact but unauthenticated: anyone can re-sign a forgery with a fresh key. So is one verified under a ``--key``
file that lies inside the bundle folder (its own ``provenance/run.pub``): the reviewer trusted nothing independent of
it. (A copy of that key taken out of the bundle cannot be told from the authors' key obtained elsewhere.) Nothing in
a payload whose signature fails is parsed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit.bundle.source import BundleFolder, BundleSource
from audit.bundle.verified import (
    Authentication,
    BadSignatureError,
    BundleSchemaError,
    DigestMismatchError,
    StatementError,
    Step,
    Trust,
)
from provenance import (
    BUILD_TYPE,
    IN_TOTO_PAYLOAD_TYPE,
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    EnvelopeError,
    ReviewerKey,
    parse_envelope,
    verify_envelope,
)
from schemas import (
    ENVELOPE_FILE,
    KEY_ID_FILE,
    PUBLIC_KEY_FILE,
    STATEMENT_FILE,
    BundleFileError,
)

HOW_TO_TRUST = "pass the authors' public key with --key AUTHOR.pub (or its key id in --trusted-keys FILE)"


@dataclass(frozen=True)
class SignatureCheck:
    """The exact payload bytes and how they were authenticated."""

    payload: bytes
    authentication: Authentication


def _bundle_public_key(source: BundleSource) -> Ed25519PublicKey:
    """The public key the bundle carries, read as a regular file of the bundle."""
    try:
        data = source.read(PUBLIC_KEY_FILE)
        key = serialization.load_pem_public_key(data)
    except BundleFileError as error:
        raise BadSignatureError(
            "no-key",
            f"The bundle is signed but its {PUBLIC_KEY_FILE} is {error.problem} and no --key was given: "
            f"nothing to verify the signature with; {HOW_TO_TRUST}.",
        ) from error
    except (ValueError, UnsupportedAlgorithm) as error:
        raise BadSignatureError("no-key", f"{PUBLIC_KEY_FILE} is not a PEM public key: {error}") from error
    if not isinstance(key, Ed25519PublicKey):
        raise BadSignatureError("no-key", f"{PUBLIC_KEY_FILE} is not an ed25519 key ({type(key).__name__})")
    return key


def _inside_bundle(source: BundleSource, key: ReviewerKey) -> bool:
    """The reviewer's key file lies inside the bundle folder (its own enclosed key, or any file beside it), links
    resolved: a key the bundle brings vouches for nothing outside it."""
    if not isinstance(source, BundleFolder):
        return False
    return Path(key.path).resolve().is_relative_to(source.root.resolve())


def verify_signature(
    source: BundleSource, trusted_key: ReviewerKey | None, trusted_ids: frozenset[str] = frozenset()
) -> tuple[SignatureCheck, Step]:
    """Verify the DSSE envelope over the exact payload bytes, before anything in it is parsed."""
    try:
        envelope_bytes = source.read(ENVELOPE_FILE)
    except BundleFileError as error:
        if error.problem == "missing":
            raise BadSignatureError(
                "unsigned",
                f"The bundle is UNSIGNED: no {ENVELOPE_FILE}; nothing vouches that its files were not changed "
                "together with the statement, so none of them is checked further.",
            ) from error
        raise BadSignatureError("envelope", f"{ENVELOPE_FILE} is {error.problem}") from error
    lines = [line for line in envelope_bytes.splitlines() if line.strip()]
    if len(lines) != 1:
        raise BadSignatureError("envelope", f"{ENVELOPE_FILE} holds {len(lines)} envelopes, expected exactly one")
    try:
        envelope = parse_envelope(lines[0])
    except EnvelopeError as error:
        raise BadSignatureError("envelope", f"{ENVELOPE_FILE}: {error}") from error
    enclosed = trusted_key is not None and _inside_bundle(source, trusted_key)
    if trusted_key is not None:
        public_key, key_source = trusted_key.public_key, f"the reviewer's key {trusted_key.path} (--key)"
        if enclosed:
            key_source = f"the key {trusted_key.path} given with --key, a file of the bundle itself"
    else:
        public_key, key_source = _bundle_public_key(source), f"the bundle's own key {PUBLIC_KEY_FILE}"
    try:
        key_id = verify_envelope(envelope, public_key, IN_TOTO_PAYLOAD_TYPE)
    except EnvelopeError as error:
        raise BadSignatureError(
            "signature", f"The signature does not verify under {key_source}: {error}; nothing in it was parsed."
        ) from error
    if trusted_key is not None and not enclosed:
        trust = Trust.TRUSTED_KEY
    elif key_id in trusted_ids:
        trust = Trust.TRUSTED_KEY_ID
    else:
        trust = Trust.BUNDLE_KEY
    report = [f"The DSSE envelope verifies under {key_source}, key id {key_id}."]
    if trust is Trust.TRUSTED_KEY_ID:
        report.append("That key id is in the reviewer's list of trusted keys (--trusted-keys).")
    if trust is Trust.BUNDLE_KEY and enclosed:
        report.append(
            "UNAUTHENTICATED: the key given with --key lies inside the bundle it is to vouch for, so it proves the "
            "files unchanged since signing, not who signed them (a forger ships the key of the forgery); "
            f"{HOW_TO_TRUST}, obtained from the authors, not from the bundle."
        )
    elif trust is Trust.BUNDLE_KEY:
        report.append(
            "UNAUTHENTICATED: the key was taken from the bundle itself, which proves the files are unchanged since "
            f"signing, not who signed them (a forger re-signs with a fresh key); {HOW_TO_TRUST}."
        )
    try:
        recorded = source.read(KEY_ID_FILE).decode("utf-8").strip()
    except (BundleFileError, UnicodeDecodeError):
        recorded = None
    if recorded is not None and recorded != key_id:
        report.append(f"Note: {KEY_ID_FILE} names another key id than the one that verified ({recorded[:80]!r}).")
    authentication = Authentication(trust, key_id, str(trusted_key.path) if trusted_key else PUBLIC_KEY_FILE)
    return SignatureCheck(envelope.payload, authentication), Step(report)


def verify_statement(payload: bytes) -> tuple[dict[str, Any], Step]:
    """Parse the authenticated payload and check the statement type, predicate type and build type."""
    try:
        statement = json.loads(payload)
    except (ValueError, RecursionError) as error:  # also a 5000-digit number, deep nesting (UnicodeDecodeError)
        message = f"{type(error).__name__}: {str(error)[:200]}"
        raise StatementError("statement-json", f"The signed payload is not JSON: {message}") from error
    if not isinstance(statement, dict):
        raise StatementError("statement-type", "The signed payload is not a JSON object")
    try:  # JSON's "\\ud800" escape reads as a lone surrogate, which no later step could print or write
        json.dumps(statement, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as error:
        raise BundleSchemaError(
            "statement-text", f"The signed payload holds text that is not Unicode: {error.reason}"
        ) from error
    predicate = statement.get("predicate")
    definition = predicate.get("buildDefinition") if isinstance(predicate, dict) else None
    found = {
        "_type": (statement.get("_type"), STATEMENT_TYPE),
        "predicateType": (statement.get("predicateType"), PREDICATE_TYPE),
        "buildType": (definition.get("buildType") if isinstance(definition, dict) else None, BUILD_TYPE),
    }
    wrong = [
        {"field": name, "found": str(got)[:200], "expected": want} for name, (got, want) in found.items() if got != want
    ]
    if wrong or not isinstance(statement.get("subject"), list):
        raise StatementError(
            "statement-type", "The statement is not an in-toto v1 statement of an interbias-sv run", failures=wrong
        )
    return statement, Step([f"in-toto {STATEMENT_TYPE}, predicate {PREDICATE_TYPE}, build type {BUILD_TYPE}."])


def verify_statement_copy(source: BundleSource, payload: bytes) -> tuple[None, Step]:
    """``provenance/statement.json`` must be byte-identical to the verified payload."""
    try:
        same = source.read(STATEMENT_FILE) == payload
    except BundleFileError:
        same = False
    if not same:
        raise DigestMismatchError(
            "statement-copy", f"{STATEMENT_FILE} is missing or differs from the signed payload; the payload was used."
        )
    return None, Step([f"{STATEMENT_FILE} is byte-identical to the verified payload."])
