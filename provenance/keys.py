"""Ed25519 signing keys: generate a key pair, load keys from PEM files, and name a public key by its key id.

The key id is the SHA-256 (hex) of the 32 raw public-key bytes, so anyone holding the public key can recompute
it. A private key is written with mode 0600 and never inside a bundle folder: a bundle is published, a key is
not.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from provenance.atomic import atomic_write_bytes, check_writable_folder
from provenance.reading import read_regular_file
from schemas import ENVELOPE_FILE, RESULTS_FILE, STATEMENT_FILE, InputError

__all__ = [
    "BUNDLE_MARKERS",
    "ReviewerKey",
    "enclosing_bundle",
    "generate_keypair",
    "key_id",
    "load_private_key",
    "load_public_key",
    "public_key_pem",
]

# Files whose presence marks a folder as an artefact bundle (DESIGN.md section 3).
BUNDLE_MARKERS = (RESULTS_FILE, STATEMENT_FILE, ENVELOPE_FILE)


def key_id(public_key: Ed25519PublicKey) -> str:
    """SHA-256 hex of the raw 32-byte public key."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def public_key_pem(public_key: Ed25519PublicKey) -> bytes:
    """The public key as SubjectPublicKeyInfo PEM."""
    return public_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def enclosing_bundle(path: Path) -> Path | None:
    """The nearest folder at or above ``path``'s parent that looks like a bundle, or None."""
    for folder in Path(path).resolve().parents:
        if any((folder / marker).exists() for marker in BUNDLE_MARKERS):
            return folder
    return None


def _check_key_targets(private_path: Path, public_path: Path) -> None:
    """Both key files can be written and neither exists (a key is never overwritten), before either is made."""
    bundle = enclosing_bundle(private_path)
    if bundle is not None:
        raise InputError(str(private_path), f"refusing to write a private key inside the bundle folder {bundle}")
    if private_path.resolve() == public_path.resolve():
        raise InputError(str(public_path), "the private and the public key must be two different files")
    for path, kind in ((private_path, "private"), (public_path, "public")):
        if os.path.lexists(path):
            raise InputError(str(path), f"a file already exists here; refusing to overwrite a {kind} key")
        check_writable_folder(path.parent, path)


def generate_keypair(private_path: Path, public_path: Path) -> str:
    """Write a new ed25519 key pair (private PKCS#8 PEM, mode 0600; public PEM) and return its key id.

    Refuses to overwrite an existing private or public key, to write the private key inside a bundle folder,
    or to start when either folder cannot be written.
    """
    private_path, public_path = Path(private_path), Path(public_path)
    _check_key_targets(private_path, public_path)
    private_key = Ed25519PrivateKey.generate()
    private_pem = private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    try:
        atomic_write_bytes(private_path, private_pem, mode=0o600)  # created 0600: never readable by others
    except OSError as error:
        raise InputError(str(private_path), f"cannot write the key: {error.strerror}") from error
    try:
        atomic_write_bytes(public_path, public_key_pem(private_key.public_key()))
        os.chmod(public_path, 0o644)
    except OSError as error:
        private_path.unlink()  # half a pair is of no use, and would block the next keygen
        raise InputError(str(public_path), f"cannot write the key: {error.strerror}") from error
    return key_id(private_key.public_key())


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """Read an unencrypted ed25519 private key from a PEM file."""
    try:
        key = serialization.load_pem_private_key(read_regular_file(path, "a PEM private key"), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as error:
        raise InputError(str(path), f"not an unencrypted PEM private key: {error}") from error
    if not isinstance(key, Ed25519PrivateKey):
        raise InputError(str(path), f"expected an ed25519 private key, found {type(key).__name__}")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """Read an ed25519 public key from a PEM file."""
    try:
        key = serialization.load_pem_public_key(read_regular_file(path, "a PEM public key"))
    except (ValueError, UnsupportedAlgorithm) as error:
        raise InputError(str(path), f"not a PEM public key: {error}") from error
    if not isinstance(key, Ed25519PublicKey):
        raise InputError(str(path), f"expected an ed25519 public key, found {type(key).__name__}")
    return key


@dataclass(frozen=True)
class ReviewerKey:
    """The public key a reviewer trusts, read once from its file: what was checked is what verifies."""

    path: Path
    public_key: Ed25519PublicKey

    @classmethod
    def load(cls, path: Path) -> ReviewerKey:
        return cls(Path(path), load_public_key(Path(path)))
