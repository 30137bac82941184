"""Self-verifying cache entries: each damage kind is rejected with its reason, counted, and never returned.

Oracle: the entry bytes are built by hand here for the damage cases (a swapped file is another key's genuine
entry; a forged NaN entry has a correct digest), so the checks do not rely on the writer under test.
"""

from __future__ import annotations

import os
from pathlib import Path

import blake3
import numpy as np
import pytest

from runner.cache import MAGIC, CachedEmbedding, CacheEntryRejectedError, EmbeddingCache, embedding_key

OUTCOMES = [{"status": "applied", "reason": "white noise at 0 dB", "details": {"snr_db": 0.0}}]


def key(name: str) -> str:
    return embedding_key(
        audio_blake3=name, chain_id="c", seed=1, utt_id=name, encoder_key="e", device_class="cpu", material="m"
    )


def entry(seed: int = 0) -> CachedEmbedding:
    vector = np.random.default_rng(seed).standard_normal(8).astype(np.float32)
    return CachedEmbedding(vector / np.linalg.norm(vector), OUTCOMES)


def test_round_trip_and_failed_chain(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.put(key("a"), entry())
    cache.put(key("b"), CachedEmbedding(None, [{"status": "failed", "reason": "no music", "details": {}}]))
    got = cache.get(key("a"))
    assert got is not None and got.vector is not None
    assert np.array_equal(got.vector, entry().vector) and got.outcomes == OUTCOMES
    failed = cache.get(key("b"))
    assert failed is not None and failed.vector is None and failed.outcomes[0]["reason"] == "no music"
    assert cache.get(key("absent")) is None and not cache.rejected


def forged(key_text: str, vector: bytes, dim: int) -> bytes:
    """An entry written by hand with a correct digest (what a buggy or malicious writer could leave)."""
    payload = f'{{"dim": {dim}, "key": "{key_text}", "outcomes": []}}'.encode() + b"\n" + vector
    return MAGIC + blake3.blake3(payload).hexdigest().encode() + b"\n" + payload


def damage(kind: str, path: Path, other: Path) -> None:
    data = path.read_bytes()
    if kind == "swapped":  # file names exchanged: each file holds the other key's genuine entry
        other_data = other.read_bytes()
        other.write_bytes(data)
        path.write_bytes(other_data)
    elif kind == "truncated":
        path.write_bytes(data[: len(data) - 5])
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "garbage":
        path.write_bytes(os.urandom(len(data)))
    elif kind == "flipped":
        path.write_bytes(data[:-1] + bytes([data[-1] ^ 0x01]))
    elif kind == "nan-unsigned":  # NaN written over the vector, digest left as it was
        path.write_bytes(data[:-32] + np.full(8, np.nan, dtype="<f4").tobytes())
    elif kind == "nan-signed":
        path.write_bytes(forged(path.stem, np.full(8, np.nan, dtype="<f4").tobytes(), 8))
    elif kind == "old-npz":  # the previous format (a zip) under the new name
        path.write_bytes(b"PK\x03\x04" + data)
    elif kind == "fifo":
        path.unlink()
        os.mkfifo(path)
    elif kind == "folder":
        path.unlink()
        path.mkdir()


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("swapped", "another key"),
        ("truncated", "digest mismatch"),
        ("empty", "empty file"),
        ("garbage", "unknown format"),
        ("flipped", "digest mismatch"),
        ("nan-unsigned", "digest mismatch"),
        ("nan-signed", "non-finite"),
        ("old-npz", "unknown format"),
        ("fifo", "not a regular file"),
        ("folder", "not a regular file"),
    ],
)
def test_each_damage_kind_is_rejected_counted_and_recomputable(tmp_path: Path, kind: str, reason: str) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.put(key("a"), entry(0))
    cache.put(key("b"), entry(1))
    damage(kind, cache.path(key("a")), cache.path(key("b")))
    assert cache.get(key("a")) is None
    assert list(cache.rejected) == [next(r for r in cache.rejected if reason in r)]
    assert sum(cache.rejected.values()) == 1
    if kind not in ("folder",):  # the damaged file is gone; a fresh put is served again
        assert not cache.path(key("a")).exists()
        cache.put(key("a"), entry(0))
        again = cache.get(key("a"))
        assert again is not None and np.array_equal(again.vector, entry(0).vector)  # type: ignore[arg-type]


def test_read_names_the_file_and_why_for_a_reader_that_must_not_recompute(tmp_path: Path) -> None:
    """The Ray driver reads back what a worker wrote: absence and damage are errors there, never a miss."""
    cache = EmbeddingCache(tmp_path)
    entry = CachedEmbedding(np.ones(4, dtype=np.float32) / 2, [{"status": "applied"}])
    cache.put("k1", entry)
    assert np.array_equal(cache.read("k1").vector, entry.vector)
    with pytest.raises(CacheEntryRejectedError, match="no such entry"):
        cache.read("k2")
    cache.path("k2").parent.mkdir(parents=True, exist_ok=True)
    cache.path("k2").write_bytes(cache.path("k1").read_bytes())  # a swapped file
    with pytest.raises(CacheEntryRejectedError, match="another key"):
        cache.read("k2")
    assert cache.path("k2").exists() and not cache.rejected  # read neither removes nor counts: the caller decides
