"""The embedding cache refuses any entry it cannot verify (a cache folder other machines write is not trusted).

Oracles: entries rewritten by hand with numpy (a changed vector or outcome under the old digest, another key's
entry under this key's name, the layout before entries carried their key and digest, a truncated file).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

from runner.cache import CachedEmbedding, CacheEntryError, EmbeddingCache

KEY, OTHER = "ab" + "1" * 38, "cd" + "2" * 38
OUTCOMES = [{"operator": "white", "status": "applied", "reason": "white noise at 0 dB"}]


def rewrite(path: Path, **changes: object) -> None:
    """Save the entry again with some arrays changed (or removed when the change is None)."""
    with np.load(path, allow_pickle=False) as entry:
        arrays = {name: entry[name] for name in entry.files}
    for name, value in changes.items():
        if value is None:
            arrays.pop(name)
        else:
            arrays[name] = np.asarray(value)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    path.write_bytes(buffer.getvalue())


@pytest.fixture
def cache(tmp_path: Path) -> EmbeddingCache:
    cache = EmbeddingCache(tmp_path / "embeddings")
    cache.put(KEY, CachedEmbedding(np.array([0.6, 0.8], dtype=np.float32), OUTCOMES))
    cache.put(OTHER, CachedEmbedding(None, [{**OUTCOMES[0], "status": "failed"}]))
    return cache


def test_entries_round_trip_with_and_without_a_vector(cache: EmbeddingCache) -> None:
    entry = cache.read(KEY)
    assert entry.vector is not None and entry.vector.tolist() == pytest.approx([0.6, 0.8])
    assert entry.vector.dtype == np.float32 and entry.outcomes == OUTCOMES
    failed = cache.read(OTHER)
    assert failed.vector is None and failed.outcomes[0]["status"] == "failed"
    assert cache.get("ef" + "3" * 38) is None and cache.rejected == []  # a plain miss is not a rejection


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"vector": np.array([0.8, 0.6], dtype=np.float32)}, "payload digest does not match"),
        ({"vector": np.array([0.6, 0.8], dtype=np.float64)}, "payload digest does not match"),
        ({"vector": None}, "payload digest does not match"),  # a vector dropped: a failed chain it was not
        ({"outcomes": json.dumps([{**OUTCOMES[0], "status": "fallback"}])}, "payload digest does not match"),
        ({"key": OTHER}, f"entry is for key {OTHER}"),
        ({"key": None, "blake3": None}, "entry lacks ['blake3', 'key']"),
    ],
)
def test_an_altered_entry_is_refused_and_counted(cache: EmbeddingCache, change: dict[str, object], reason: str) -> None:
    rewrite(cache.path(KEY), **change)
    with pytest.raises(CacheEntryError, match=reason.replace("[", r"\[").replace("]", r"\]")):
        cache.read(KEY)
    assert cache.get(KEY) is None
    assert [error.path for error in cache.rejected] == [cache.path(KEY)]


def test_another_keys_entry_under_this_name_and_a_truncated_entry_are_refused(cache: EmbeddingCache) -> None:
    cache.path(KEY).write_bytes(cache.path(OTHER).read_bytes())
    with pytest.raises(CacheEntryError, match="entry is for key"):
        cache.read(KEY)
    cache.path(OTHER).write_bytes(cache.path(OTHER).read_bytes()[:50])
    with pytest.raises(CacheEntryError, match="unreadable entry"):
        cache.read(OTHER)
