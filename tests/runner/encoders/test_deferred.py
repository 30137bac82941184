"""Deferred encoders: the record without the model when an earlier load stored it, the model on the first forward
pass, and stored records that do not verify never used.

Oracles: the counted loads of a real (MFCC) encoder, its own record and vectors, and store entries damaged by hand.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from runner.encoders import CheckpointError, CheckpointRecord, EncoderHandle, EncoderSpec, load_roster
from runner.encoders.deferred import DeferredEncoder, RecordStore

ROOT = Path(__file__).resolve().parents[3]
WAVES = [np.random.default_rng(seed).normal(0, 0.1, 16000).astype(np.float32) for seed in range(3)]


@pytest.fixture
def spec() -> EncoderSpec:
    return next(s for s in load_roster(ROOT / "configs" / "encoders.toml") if s.label == "mfcc-stats")


class Loads:
    """The loader a run passes in, counting its calls."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, spec: EncoderSpec, device: str) -> EncoderHandle:
        self.count += 1
        return spec.load(device=device)


def test_the_stored_record_stands_in_until_the_first_forward_pass(spec: EncoderSpec, tmp_path: Path) -> None:
    store, loads = RecordStore(tmp_path / "checkpoints"), Loads()
    first = DeferredEncoder(spec, "cpu", loads, store)
    record = first.checkpoint  # nothing stored yet: loaded for its record
    assert loads.count == 1 and record == spec.load().checkpoint
    again = DeferredEncoder(spec, "cpu", loads, store)
    assert again.checkpoint == record and loads.count == 1  # from the store, nothing loaded
    np.testing.assert_array_equal(again.embed(WAVES, 16000), spec.load().embed(WAVES, 16000))
    again.embed(WAVES, 16000)
    assert loads.count == 2  # loaded once, on the first forward pass


@pytest.mark.parametrize("damage", ["garbled", "other identity", "cache key", "pin"])
def test_a_stored_record_that_does_not_verify_is_removed_and_the_encoder_loaded(
    spec: EncoderSpec, tmp_path: Path, damage: str
) -> None:
    store, loads = RecordStore(tmp_path / "checkpoints"), Loads()
    assert DeferredEncoder(spec, "cpu", loads, store).checkpoint.label == spec.label  # loaded and stored
    [entry] = (tmp_path / "checkpoints").iterdir()
    stored = json.loads(entry.read_text())
    if damage == "garbled":
        entry.write_bytes(entry.read_bytes()[:50])
    elif damage == "other identity":
        stored["identity"]["device"] = "cuda"
        entry.write_text(json.dumps(stored))
    elif damage == "cache key":
        stored["record"]["config"]["n_mfcc"] = 13  # a record whose cache key is no longer its own
        entry.write_text(json.dumps(stored))
    else:
        spec = replace(spec, blake3="0" * 64)  # the roster now pins another digest
    if damage == "pin":
        with pytest.raises(CheckpointError, match="differs from the pinned"):
            assert DeferredEncoder(spec, "cpu", loads, store).checkpoint  # the pin is checked on the loaded one too
    else:
        assert DeferredEncoder(spec, "cpu", loads, store).checkpoint == spec.load().checkpoint
        assert loads.count == 2
        assert CheckpointRecord.from_dict(json.loads(entry.read_text())["record"]) == spec.load().checkpoint


def test_a_stored_record_with_another_cache_key_than_the_loaded_encoder_stops_the_run(
    spec: EncoderSpec, tmp_path: Path
) -> None:
    store, loads = RecordStore(tmp_path / "checkpoints"), Loads()
    assert DeferredEncoder(spec, "cpu", loads, store).checkpoint.label == spec.label  # loaded and stored
    [entry] = (tmp_path / "checkpoints").iterdir()
    stored = json.loads(entry.read_text())
    other = replace(spec, options={"n_mfcc": 13}).load().checkpoint  # what a changed adapter would record
    stored["record"] = {**other.as_dict(), "label": spec.label}
    entry.write_text(json.dumps(stored))
    stale = DeferredEncoder(spec, "cpu", loads, store)
    assert stale.checkpoint.cache_key != spec.load().checkpoint.cache_key  # verifies, but is not this encoder's
    with pytest.raises(CheckpointError, match="the entry was removed, run again"):
        stale.embed(WAVES, 16000)
    assert not entry.exists()
    assert DeferredEncoder(spec, "cpu", loads, store).checkpoint == spec.load().checkpoint
