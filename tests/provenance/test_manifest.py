"""write_manifest: subjects against hashlib/blake3 of the bytes, the signed payload, and refusals."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import blake3
import pandas as pd
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat, load_pem_public_key

from provenance.canonical import canonical_json
from provenance.manifest import write_manifest
from provenance.statement import BUILD_TYPE, PREDICATE_TYPE, STATEMENT_TYPE, read_bindings, read_checkpoints
from schemas.errors import InputError
from tests.provenance.synthetic_bundle import RUN_CONFIG, RUN_ID, build_bundle


def test_statement_lists_every_file_with_both_digests(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path)
    statement = json.loads((bundle.root / "provenance" / "statement.json").read_bytes())
    assert statement["_type"] == STATEMENT_TYPE and statement["predicateType"] == PREDICATE_TYPE
    assert statement["predicate"]["buildDefinition"]["buildType"] == BUILD_TYPE
    expected = {
        path.relative_to(bundle.root).as_posix(): path.read_bytes()
        for path in bundle.root.rglob("*")
        if path.is_file() and path.relative_to(bundle.root).parts[0] != "provenance"
    }
    assert len(expected) == 14 == bundle.manifest.n_subjects  # 8 scores, trials, corpus, 4 top-level files
    assert {s["name"]: s["digest"] for s in statement["subject"]} == {
        name: {"sha256": hashlib.sha256(data).hexdigest(), "blake3": blake3.blake3(data).hexdigest()}
        for name, data in expected.items()
    }


def test_predicate_binds_each_record(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path)
    predicate = json.loads((bundle.root / "provenance" / "statement.json").read_bytes())["predicate"]
    assert predicate["runDetails"]["metadata"]["invocationId"] == RUN_ID
    assert predicate["buildDefinition"]["externalParameters"]["runConfig"]["p_target"] == "0.01"
    bindings = read_bindings(predicate)
    assert set(bindings) == set(bundle.results["record_id"])
    for row in bundle.results.to_dict("records"):
        binding = bindings[row["record_id"]]
        assert binding.scores_blake3 == row["scores_blake3"]
        assert binding.trial_list_id == row["trial_list_id"]
        assert binding.checkpoint_blake3 == row["checkpoint_blake3"]
    assert bindings["E13-m1-babble-opus"].operator_chains == ("noise-babble", "codec-opus")
    assert read_checkpoints(predicate) == {m: blake3.blake3(m.encode()).hexdigest() for m in ("m1", "m2")}


def test_envelope_signs_the_exact_statement_bytes(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path)
    provenance = bundle.root / "provenance"
    payload = (provenance / "statement.json").read_bytes()
    assert payload == canonical_json(json.loads(payload))
    envelope = json.loads((provenance / "run.intoto.jsonl").read_bytes())
    assert base64.b64decode(envelope["payload"]) == payload
    public = load_pem_public_key((provenance / "signing-key.pub.pem").read_bytes())
    assert isinstance(public, Ed25519PublicKey)
    raw = public.public_bytes(Encoding.Raw, PublicFormat.Raw)
    assert (provenance / "signing-key.id").read_text().strip() == hashlib.sha256(raw).hexdigest()
    message = b"DSSEv1 28 application/vnd.in-toto+json %d %b" % (len(payload), payload)
    public.verify(base64.b64decode(envelope["signatures"][0]["sig"]), message)


def test_rewriting_is_byte_identical_and_unsigned_removes_the_envelope(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path)
    statement = (bundle.root / "provenance" / "statement.json").read_bytes()
    result = write_manifest(bundle.root, RUN_CONFIG, None)
    assert (bundle.root / "provenance" / "statement.json").read_bytes() == statement
    assert not result.signed and not (bundle.root / "provenance" / "run.intoto.jsonl").exists()
    assert "UNSIGNED" in (bundle.root / "provenance" / "UNSIGNED.txt").read_text()


def test_inconsistent_bundles_are_refused(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path)
    results = pd.read_csv(bundle.root / "results.csv")
    results.loc[0, "scores_blake3"] = "f" * 64
    results.to_csv(bundle.root / "results.csv", index=False)
    with pytest.raises(InputError, match=r"results.csv, row 1, column 'scores_blake3'"):
        write_manifest(bundle.root, RUN_CONFIG, None)


def test_trial_list_named_by_another_digest_is_refused(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path)
    trial_list = bundle.root / "trials" / f"{bundle.trial_list_ids[0]}.csv"
    trial_list.write_bytes(trial_list.read_bytes() + b"\n")
    with pytest.raises(InputError, match="first 16 hex"):
        write_manifest(bundle.root, RUN_CONFIG, None)


def test_symlinks_and_keys_inside_the_bundle_are_refused(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path)
    with pytest.raises(InputError, match="inside the bundle"):
        write_manifest(bundle.root, RUN_CONFIG, bundle.root / "scores" / "key.pem")
    (bundle.root / "link.csv").symlink_to(bundle.root / "results.csv")
    with pytest.raises(InputError, match="symbolic links"):
        write_manifest(bundle.root, RUN_CONFIG, None)


def test_missing_required_file_is_refused(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path)
    (bundle.root / "environment.json").unlink()
    with pytest.raises(InputError, match=r"environment\.json: required bundle file is missing"):
        write_manifest(bundle.root, RUN_CONFIG, None)
