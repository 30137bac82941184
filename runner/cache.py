"""Embedding cache: each (utterance audio, operator chain realisation, checkpoint) is embedded once.

The key is a digest of the audio's BLAKE3, the chain id, the run seed and utterance id (they fix the random
realisation of the chain) and the encoder's cache key (checkpoint digest, dtype and options). An entry holds
the embedding, or none when an operator failed, and the operator outcomes, so that a rerun or a resumed run
needs no encoder forward pass and can still count every operator outcome. Entries are written atomically, so a
killed run leaves only complete entries.

An entry is self-verifying: it stores its own key and the BLAKE3 of its payload (key, outcomes, vector dtype,
shape and bytes). The cache may be a folder that other machines write (the Ray executor's workers), so a read
never trusts a file it has not checked: an entry under the wrong name, altered, truncated or in an older layout
is refused with its reason; ``get`` counts it in ``rejected`` and treats it as a miss, to be recomputed.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import blake3
import numpy as np

from provenance.atomic import atomic_write_bytes


@dataclass(frozen=True)
class CachedEmbedding:
    """An embedding (None when its chain failed) and the outcome of each operator of the chain."""

    vector: np.ndarray | None
    outcomes: list[dict[str, Any]]


class CacheEntryError(Exception):
    """A cache entry that is absent or does not verify; the message names the file and the reason."""

    def __init__(self, path: Path, reason: str, *, absent: bool = False) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.absent = absent


def embedding_key(*, audio_blake3: str, chain_id: str, seed: int, utt_id: str, encoder_key: str) -> str:
    parts = [audio_blake3, chain_id, str(seed), utt_id, encoder_key]
    return blake3.blake3("\x1f".join(parts).encode()).hexdigest()[:40]


def payload_digest(key: str, outcomes_json: str, vector: np.ndarray | None) -> str:
    """BLAKE3 of everything an entry asserts: its key, its outcomes and its vector (dtype, shape, bytes)."""
    hasher = blake3.blake3(key.encode() + b"\x1f" + outcomes_json.encode() + b"\x1f")
    if vector is not None:
        hasher.update(f"{vector.dtype.str}{vector.shape}".encode() + b"\x1f")
        hasher.update(np.ascontiguousarray(vector).tobytes())
    return hasher.hexdigest()


@dataclass
class EmbeddingCache:
    """A folder of ``<key[:2]>/<key>.npz`` entries; ``rejected`` lists the entries ``get`` refused, with why."""

    root: Path
    rejected: list[CacheEntryError] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.root = Path(self.root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.npz"

    def read(self, key: str) -> CachedEmbedding:
        """The verified entry of ``key``; ``CacheEntryError`` when it is absent or does not verify."""
        path = self.path(key)
        if not path.is_file():
            raise CacheEntryError(path, "no such entry", absent=True)
        try:
            with np.load(path, allow_pickle=False) as entry:
                arrays = {name: entry[name] for name in entry.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
            raise CacheEntryError(path, f"unreadable entry ({error})") from None
        missing = sorted({"key", "outcomes", "blake3"} - set(arrays))
        if missing:
            raise CacheEntryError(path, f"entry lacks {missing} (an older or foreign layout)")
        if str(arrays["key"]) != key:
            raise CacheEntryError(path, f"entry is for key {arrays['key']}, not {key}")
        vector = arrays.get("vector")
        if payload_digest(key, str(arrays["outcomes"]), vector) != str(arrays["blake3"]):
            raise CacheEntryError(path, "payload digest does not match (altered or damaged entry)")
        try:
            outcomes = json.loads(str(arrays["outcomes"]))
        except json.JSONDecodeError as error:
            raise CacheEntryError(path, f"outcomes are not JSON ({error})") from None
        return CachedEmbedding(vector, outcomes)

    def get(self, key: str) -> CachedEmbedding | None:
        """The verified entry, or None: absent, or refused (then recorded in ``rejected``)."""
        try:
            return self.read(key)
        except CacheEntryError as error:
            if not error.absent:
                self.rejected.append(error)
            return None

    def put(self, key: str, entry: CachedEmbedding) -> None:
        outcomes = json.dumps(entry.outcomes, sort_keys=True)
        vector = None if entry.vector is None else np.asarray(entry.vector, dtype=np.float32)
        arrays: dict[str, Any] = {
            "key": np.array(key),
            "outcomes": np.array(outcomes),
            "blake3": np.array(payload_digest(key, outcomes, vector)),
        }
        if vector is not None:
            arrays["vector"] = vector
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        atomic_write_bytes(self.path(key), buffer.getvalue())
