"""Ed25519 signing keys: generate a key pair, load keys from PEM files, and name a public key by its key id.

The key id is the SHA-256 (hex) of the 32 raw public-key bytes, so anyone holding the public key can recompute
it. A private key is written with mode 0600 and never inside a bundle folder: a bundle is published, a key is
not.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from audit.errors import InputError
from provenance.atomic import atomic_write_bytes

# Files whose presence marks a folder as an artefact bundle (DESIGN.md section 3).
BUNDLE_MARKERS = ("results.csv", "provenance/statement.json", "provenance/run.intoto.jsonl")


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


def generate_keypair(private_path: Path, public_path: Path) -> str:
    """Write a new ed25519 key pair (private PKCS#8 PEM, mode 0600; public PEM) and return its key id.

    Refuses to overwrite an existing private key or to write it inside a bundle folder.
    """
    private_path, public_path = Path(private_path), Path(public_path)
    bundle = enclosing_bundle(private_path)
    if bundle is not None:
        raise InputError(str(private_path), f"refusing to write a private key inside the bundle folder {bundle}")
    if private_path.exists():
        raise InputError(str(private_path), "a file already exists here; refusing to overwrite a private key")
    private_key = Ed25519PrivateKey.generate()
    private_pem = private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    atomic_write_bytes(private_path, private_pem, mode=0o600)  # created 0600: never readable by others
    atomic_write_bytes(public_path, public_key_pem(private_key.public_key()))
    os.chmod(public_path, 0o644)
    return key_id(private_key.public_key())


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """Read an unencrypted ed25519 private key from a PEM file."""
    try:
        key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    except OSError as error:
        raise InputError(str(path), f"cannot read the private key: {error.strerror}") from error
    except (ValueError, TypeError, UnsupportedAlgorithm) as error:
        raise InputError(str(path), f"not an unencrypted PEM private key: {error}") from error
    if not isinstance(key, Ed25519PrivateKey):
        raise InputError(str(path), f"expected an ed25519 private key, found {type(key).__name__}")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """Read an ed25519 public key from a PEM file."""
    try:
        key = serialization.load_pem_public_key(Path(path).read_bytes())
    except OSError as error:
        raise InputError(str(path), f"cannot read the public key: {error.strerror}") from error
    except (ValueError, UnsupportedAlgorithm) as error:
        raise InputError(str(path), f"not a PEM public key: {error}") from error
    if not isinstance(key, Ed25519PublicKey):
        raise InputError(str(path), f"expected an ed25519 public key, found {type(key).__name__}")
    return key
