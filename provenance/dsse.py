"""DSSE envelopes (Dead Simple Signing Envelope, v1) signed with ed25519.

The signature covers the pre-authentication encoding (PAE) of the payload type and the exact payload bytes, so
a verifier checks the bytes it was given before it parses anything. The envelope is one JSON object per line
(``.intoto.jsonl``): ``{"payload": b64, "payloadType": ..., "signatures": [{"keyid": ..., "sig": b64}]}``.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from provenance.canonical import canonical_json
from provenance.keys import key_id
from schemas import Error

__all__ = [
    "IN_TOTO_PAYLOAD_TYPE",
    "MAX_SIGNATURES",
    "Envelope",
    "EnvelopeError",
    "pae",
    "parse_envelope",
    "sign_envelope",
    "verify_envelope",
]

IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"
# Signatures an envelope may carry: each is tried against the trusted key, so their number bounds the work a forged
# envelope can ask for (the runner writes one).
MAX_SIGNATURES = 16


class EnvelopeError(Error, ValueError):
    """An envelope that cannot be parsed, or whose signature does not verify under the trusted key."""


@dataclass(frozen=True)
class Envelope:
    """A parsed envelope: the exact payload bytes, its type, and the (keyid, signature) pairs."""

    payload: bytes
    payload_type: str
    signatures: tuple[tuple[str, bytes], ...]


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSEv1 pre-authentication encoding: ``DSSEv1 SP len(type) SP type SP len(body) SP body``."""
    type_bytes = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(type_bytes), type_bytes, len(payload), payload)


def sign_envelope(payload: bytes, private_key: Ed25519PrivateKey, payload_type: str = IN_TOTO_PAYLOAD_TYPE) -> bytes:
    """One JSON line (with trailing newline) holding ``payload`` signed by ``private_key``."""
    signature = private_key.sign(pae(payload_type, payload))
    envelope = {
        "payload": base64.b64encode(payload).decode("ascii"),
        "payloadType": payload_type,
        "signatures": [{"keyid": key_id(private_key.public_key()), "sig": base64.b64encode(signature).decode("ascii")}],
    }
    return canonical_json(envelope) + b"\n"


def _b64decode(text: object, what: str) -> bytes:
    if not isinstance(text, str):
        raise EnvelopeError(f"{what} is not a base64 string")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        raise EnvelopeError(f"{what} is not valid base64: {error}") from error


def _text(value: object, what: str) -> str:
    """A JSON string that is also valid Unicode text (JSON's ``\\ud800`` escape decodes to a lone surrogate)."""
    if not isinstance(value, str):
        raise EnvelopeError(f"{what} is not a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise EnvelopeError(f"{what} is not valid Unicode text: {error.reason}") from error
    return value


def parse_envelope(line: bytes) -> Envelope:
    """Parse one envelope line; the payload stays the exact decoded bytes."""
    try:
        data = json.loads(line)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:  # ValueError: bad JSON, a 5000-digit number
        raise EnvelopeError(f"the envelope is not JSON: {type(error).__name__}: {str(error)[:200]}") from error
    if not isinstance(data, dict):
        raise EnvelopeError("the envelope is not a JSON object")
    payload_type = _text(data.get("payloadType"), "the envelope's payloadType")
    signatures = data.get("signatures")
    if not isinstance(signatures, list) or not signatures:
        raise EnvelopeError("the envelope has no signatures")
    if len(signatures) > MAX_SIGNATURES:
        raise EnvelopeError(f"the envelope has {len(signatures)} signatures (at most {MAX_SIGNATURES} are read)")
    pairs = []
    for index, entry in enumerate(signatures):
        if not isinstance(entry, dict):
            raise EnvelopeError(f"signature {index} is not an object")
        keyid = _text(entry.get("keyid", ""), f"the keyid of signature {index}")
        pairs.append((keyid, _b64decode(entry.get("sig"), f"signature {index}")))
    return Envelope(_b64decode(data.get("payload"), "the payload"), payload_type, tuple(pairs))


def verify_envelope(envelope: Envelope, public_key: Ed25519PublicKey, expected_type: str) -> str:
    """Return the key id of ``public_key`` if one of the signatures verifies under it, else raise."""
    if envelope.payload_type != expected_type:
        raise EnvelopeError(f"payloadType is {envelope.payload_type!r}, expected {expected_type!r}")
    message = pae(envelope.payload_type, envelope.payload)
    trusted_id = key_id(public_key)
    for _keyid, signature in envelope.signatures:
        try:
            public_key.verify(signature, message)
        except InvalidSignature:
            continue
        return trusted_id
    raise EnvelopeError(f"no signature verifies under the trusted key {trusted_id}")
