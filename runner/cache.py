"""Embedding cache: each (utterance audio, operator chain realisation, checkpoint) is embedded once.

The key is a digest of the audio's BLAKE3, the chain id, the run seed and utterance id (they fix the random
realisation of the chain) and the encoder's cache key (checkpoint digest, dtype and options). An entry holds
the embedding, or none when an operator failed, and the operator outcomes, so that a rerun or a resumed run
needs no encoder forward pass and can still count every operator outcome. Entries are written atomically, so a
killed run leaves only complete entries.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
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


def embedding_key(*, audio_blake3: str, chain_id: str, seed: int, utt_id: str, encoder_key: str) -> str:
    parts = [audio_blake3, chain_id, str(seed), utt_id, encoder_key]
    return blake3.blake3("\x1f".join(parts).encode()).hexdigest()[:40]


class EmbeddingCache:
    """A folder of ``<key[:2]>/<key>.npz`` entries."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.npz"

    def get(self, key: str) -> CachedEmbedding | None:
        path = self._path(key)
        if not path.is_file():
            return None
        with np.load(path, allow_pickle=False) as entry:
            outcomes = json.loads(str(entry["outcomes"]))
            vector = entry["vector"] if "vector" in entry.files else None
        return CachedEmbedding(vector, outcomes)

    def put(self, key: str, entry: CachedEmbedding) -> None:
        arrays: dict[str, Any] = {"outcomes": np.array(json.dumps(entry.outcomes, sort_keys=True))}
        if entry.vector is not None:
            arrays["vector"] = np.asarray(entry.vector, dtype=np.float32)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        atomic_write_bytes(self._path(key), buffer.getvalue())
