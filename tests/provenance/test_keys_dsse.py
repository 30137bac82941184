"""ed25519 keys and DSSE envelopes, against RFC 8032 and the DSSE specification's PAE example."""

from __future__ import annotations

import base64
import hashlib
import json
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from provenance.dsse import EnvelopeError, pae, parse_envelope, sign_envelope, verify_envelope
from provenance.keys import generate_keypair, key_id, load_private_key, load_public_key
from schemas.errors import InputError

# RFC 8032 section 7.1, TEST 1.
RFC_SECRET = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
RFC_PUBLIC = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
RFC_SIGNATURE = bytes.fromhex(
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
    "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
)
HELLO_TYPE = "http://example.com/HelloWorld"


def test_pae_matches_the_specification_example() -> None:
    assert pae(HELLO_TYPE, b"hello world") == b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"


def test_rfc8032_key_signs_as_published_and_key_id_is_sha256_of_raw_key() -> None:
    private = Ed25519PrivateKey.from_private_bytes(RFC_SECRET)
    assert private.sign(b"") == RFC_SIGNATURE
    assert key_id(private.public_key()) == hashlib.sha256(RFC_PUBLIC).hexdigest()


def test_envelope_signature_covers_the_pae_bytes() -> None:
    private = Ed25519PrivateKey.from_private_bytes(RFC_SECRET)
    line = sign_envelope(b"hello world", private, HELLO_TYPE)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    data = json.loads(line)
    assert base64.b64decode(data["payload"]) == b"hello world"
    assert data["signatures"][0]["keyid"] == hashlib.sha256(RFC_PUBLIC).hexdigest()
    public = Ed25519PublicKey.from_public_bytes(RFC_PUBLIC)
    public.verify(
        base64.b64decode(data["signatures"][0]["sig"]),
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world",
    )
    assert verify_envelope(parse_envelope(line), public, HELLO_TYPE) == hashlib.sha256(RFC_PUBLIC).hexdigest()


def test_tampered_payload_other_key_and_wrong_type_are_refused() -> None:
    private = Ed25519PrivateKey.from_private_bytes(RFC_SECRET)
    data = json.loads(sign_envelope(b"hello world", private, HELLO_TYPE))
    data["payload"] = base64.b64encode(b"hello World").decode()
    tampered = parse_envelope(json.dumps(data).encode())
    with pytest.raises(EnvelopeError, match="no signature verifies"):
        verify_envelope(tampered, private.public_key(), HELLO_TYPE)
    genuine = parse_envelope(sign_envelope(b"hello world", private, HELLO_TYPE))
    with pytest.raises(EnvelopeError, match="no signature verifies"):
        verify_envelope(genuine, Ed25519PrivateKey.generate().public_key(), HELLO_TYPE)
    with pytest.raises(EnvelopeError, match="payloadType"):
        verify_envelope(genuine, private.public_key(), "application/vnd.in-toto+json")


@pytest.mark.parametrize(
    "line",
    [
        b"not json",
        b"[]",
        b'{"payloadType": "t", "signatures": []}',
        b'{"payload": "!!", "payloadType": "t", "signatures": [{"sig": "AA=="}]}',
        # more signatures than are ever tried: each costs a verification under the trusted key
        b'{"payload": "", "payloadType": "t", "signatures": [' + b",".join([b'{"sig": "AA=="}'] * 17) + b"]}",
    ],
)
def test_malformed_envelopes_raise(line: bytes) -> None:
    with pytest.raises(EnvelopeError):
        parse_envelope(line)


def test_generate_keypair_modes_and_round_trip(tmp_path: Path) -> None:
    private_path, public_path = tmp_path / "keys" / "k.pem", tmp_path / "keys" / "k.pub"
    identifier = generate_keypair(private_path, public_path)
    assert stat.S_IMODE(private_path.stat().st_mode) == 0o600
    private, public = load_private_key(private_path), load_public_key(public_path)
    assert key_id(public) == key_id(private.public_key()) == identifier
    with pytest.raises(InputError, match="refusing to overwrite"):
        generate_keypair(private_path, public_path)


def test_generate_keypair_refuses_a_bundle_folder(tmp_path: Path) -> None:
    (tmp_path / "bundle").mkdir()
    (tmp_path / "bundle" / "results.csv").write_text("record_id\n")
    with pytest.raises(InputError, match="inside the bundle folder"):
        generate_keypair(tmp_path / "bundle" / "sub" / "k.pem", tmp_path / "k.pub")
    assert not (tmp_path / "bundle" / "sub" / "k.pem").exists()


def test_unreadable_keys_are_input_errors(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a key")
    with pytest.raises(InputError, match=r"garbage\.pem"):
        load_public_key(garbage)
    with pytest.raises(InputError, match=r"garbage\.pem"):
        load_private_key(garbage)
    with pytest.raises(InputError, match="no such file"):
        load_public_key(tmp_path / "absent.pem")
