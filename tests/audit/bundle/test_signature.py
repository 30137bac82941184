"""verify_signature on tampered copies of a synthetic bundle: which key vouches for it, and what a
failed signature leaves unparsed.

The rows' metrics come from independent oracles in ``tests/provenance/synthetic_bundle.py``.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import provenance.keys as keys
from audit.bundle.verification import NOT_RUN_UNAUTHENTICATED
from audit.bundle.verification import verify_bundle as verify_bundle_object
from audit.bundle.verified import Trust
from audit.cli import app
from provenance.keys import ReviewerKey, generate_keypair
from schemas.errors import InputError
from tests.audit.bundle.bundle_checks import by_id, error_ids, resign, sections_of, verify_bundle
from tests.provenance.synthetic_bundle import SyntheticBundle, build_bundle


def test_bundle_key_is_used_and_named_without_a_reviewer_key(bundle: SyntheticBundle) -> None:
    verified = verify_bundle_object(bundle.read_results(), bundle.root, None)
    assert verified.flags == []
    assert verified.authentication.trust is Trust.BUNDLE_KEY and not verified.authentication.trusted
    lines = sections_of(verified.sections)["bundle-signature"]["lines"]
    assert "bundle's own key" in lines[0] and "UNAUTHENTICATED" in lines[1]
    assert bundle.manifest.key_id in lines[0]


def test_renamed_subject_name_in_the_statement_breaks_the_signature(bundle: SyntheticBundle) -> None:
    envelope_path = bundle.root / "provenance" / "run.intoto.jsonl"
    envelope = json.loads(envelope_path.read_bytes())
    payload = base64.b64decode(envelope["payload"]).replace(b"results.csv", b"resultz.csv")
    envelope["payload"] = base64.b64encode(payload).decode()
    envelope_path.write_text(json.dumps(envelope) + "\n")
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert error_ids(flags) == {"bad-signature"}  # nothing in a payload that failed its signature is parsed
    assert sections_of(sections)["bundle-subject-digests"]["status"] == "skipped"


def test_altered_signature_is_caught(bundle: SyntheticBundle) -> None:
    envelope_path = bundle.root / "provenance" / "run.intoto.jsonl"
    envelope = json.loads(envelope_path.read_bytes())
    signature = envelope["signatures"][0]["sig"]
    envelope["signatures"][0]["sig"] = ("B" if signature[0] == "A" else "A") + signature[1:]
    envelope_path.write_text(json.dumps(envelope) + "\n")
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert by_id(flags)["bad-signature"].details["reasons"] == ["signature"]
    assert sections_of(sections)["bundle-signature"]["status"] == "fail"


def test_a_different_trusted_key_is_refused(bundle: SyntheticBundle, tmp_path: Path) -> None:
    generate_keypair(tmp_path / "other" / "k.pem", tmp_path / "other" / "k.pub")
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, tmp_path / "other" / "k.pub")
    assert error_ids(flags) == {"bad-signature"}
    assert "reviewer's key" in sections_of(sections)["bundle-signature"]["lines"][0]


def test_unsigned_bundle_says_so_and_parses_nothing(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path, signed=False)
    assert not bundle.manifest.signed
    assert "UNSIGNED" in (bundle.root / "provenance" / "UNSIGNED.txt").read_text()
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, None)
    assert error_ids(flags) == {"bad-signature"}
    assert by_id(flags)["bad-signature"].details["reasons"] == ["unsigned"]
    named = sections_of(sections)
    assert named["bundle-subject-digests"]["status"] == "skipped"
    assert named["bundle-rescore"]["lines"] == [NOT_RUN_UNAUTHENTICATED]


def test_wrong_statement_type_stops_the_bundle_checks(bundle: SyntheticBundle) -> None:
    resign(bundle, lambda statement: statement.update({"_type": "https://in-toto.io/Statement/v0.1"}))
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert by_id(flags)["bad-signature"].details["reasons"] == ["statement-type"]
    assert sections_of(sections)["bundle-rows"]["status"] == "skipped"


def test_signed_bundle_without_its_public_key_needs_a_reviewer_key(bundle: SyntheticBundle) -> None:
    (bundle.root / "provenance" / "signing-key.pub.pem").unlink()
    flags, _ = verify_bundle(bundle.read_results(), bundle.root, None)
    assert by_id(flags)["bad-signature"].details["reasons"] == ["no-key"]
    assert verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)[0] == []


def test_an_unreadable_reviewer_key_is_an_input_error(bundle: SyntheticBundle, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"absent\.pub"):
        verify_bundle(bundle.read_results(), bundle.root, tmp_path / "absent.pub")


def test_the_reviewer_key_is_read_once_and_a_swap_after_the_check_changes_nothing(
    bundle: SyntheticBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: the bytes of the author's key, counted as they are read, and a forger's key swapped in after."""

    reads: list[Path] = []
    original = keys.read_regular_file

    def counted(path: Path, what: str) -> bytes:
        reads.append(Path(path))
        return original(path, what)

    monkeypatch.setattr(keys, "read_regular_file", counted)
    table = bundle.root / "results.csv"
    result = CliRunner().invoke(
        app, ["verify", str(table), "--bundle", str(bundle.root), "--key", str(bundle.public_key)]
    )
    assert result.exit_code == 0, result.output
    assert reads.count(bundle.public_key) == 1
    reviewer_key = ReviewerKey.load(bundle.public_key)
    generate_keypair(tmp_path / "forger.pem", tmp_path / "forger.pub")
    bundle.public_key.write_bytes((tmp_path / "forger.pub").read_bytes())  # swapped after the check
    verified = verify_bundle_object(bundle.read_results(), bundle.root, reviewer_key)
    assert verified.flags == [] and verified.authentication.trust is Trust.TRUSTED_KEY
    assert error_ids(verify_bundle_object(bundle.read_results(), bundle.root, bundle.public_key).flags) == {
        "bad-signature"
    }
