"""Embedding cache: each (utterance audio, operator chain realisation, checkpoint) is embedded once.

The key is a digest of everything the embedding depends on: the audio's BLAKE3, the chain id, the digest of the
material the chain's operators read (music folder, babble table), the run seed and utterance id (they fix the
random realisation of the chain), the encoder's cache key (checkpoint digest, dtype and options) and the device
class the encoder ran on (``cpu``, or the CUDA device's name and capability: a GPU's vectors differ from the
CPU's in the last digits, and vectors of different devices never meet in one run). An entry
holds the embedding, or none when an operator failed, and the operator outcomes, so that a rerun or a resumed
run needs no encoder forward pass and can still count every operator outcome. An entry without a vector for a
side the encoder could not embed (too short, silent, out of memory) ends its outcomes with the encoder's, so that a
rerun counts that failure too.

An entry verifies itself: it carries the key it was written under and the BLAKE3 of its payload. ``get`` returns
an entry only when both match; a swapped, truncated, empty or garbled file is rejected (the file is removed and
the reason counted in ``EmbeddingCache.rejected``) and the caller recomputes it. Entries are written atomically,
so a killed run leaves only complete entries. Any process (a pool worker, a Ray task) may ``put`` and ``get``
entries of one cache folder concurrently: a write is a rename of a complete file.

Entry layout (``<root>/<key[:2]>/<key>.emb``)::

    interbias-embedding 2\\n
    BLAKE3 of everything below, 64 hex digits\\n
    {"dim": D | null, "key": KEY, "outcomes": [...]}\\n   (JSON, one line)
    D float32 little-endian values (none when dim is null)

A non-finite value is rejected too: encoders return L2-normalised rows, so a NaN is damage, never an embedding.
"""

from __future__ import annotations

import contextlib
import json
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from provenance import atomic_write_bytes, derived_digest, derived_id, joined
from schemas import Error

MAGIC = b"interbias-embedding 2\n"
SUFFIX = ".emb"
_VECTOR_DTYPE = np.dtype("<f4")
_DIGEST_HEX = 64


class CacheEntryRejectedError(Error):
    """A cache entry that does not verify; the message says why (it is counted, never shown as a crash)."""


ENCODER_OUTCOME = "encoder"  # the key that tells the encoder's outcome from the operators'


def encoder_outcome(label: str, reason: str) -> dict[str, Any]:
    """The outcome an entry ends with when encoder ``label`` could not embed the side (``reason``)."""
    return {ENCODER_OUTCOME: label, "status": "failed", "reason": reason}


@dataclass(frozen=True)
class CachedEmbedding:
    """An embedding (None when its chain failed, or the encoder could not embed the side) and the outcome of each
    operator of the chain, followed in the second case by the encoder's (``encoder_outcome``)."""

    vector: np.ndarray | None
    outcomes: list[dict[str, Any]]

    @property
    def operator_outcomes(self) -> list[dict[str, Any]]:
        return [outcome for outcome in self.outcomes if ENCODER_OUTCOME not in outcome]

    @property
    def encoder_failure(self) -> str | None:
        """Why the encoder could not embed the side, or None (embedded, or no vector because the chain failed)."""
        return next((str(o["reason"]) for o in self.outcomes if ENCODER_OUTCOME in o), None)


def embedding_key(
    *,
    audio_blake3: str,
    chain_id: str,
    seed: int,
    utt_id: str,
    encoder_key: str,
    device_class: str,
    material: str = "",
) -> str:
    """The cache key of one embedding; ``material`` is the digest of the files the chain's operators read,
    ``device_class`` what the encoder ran on (``runner.encoders.device.device_class``)."""
    parts = [audio_blake3, chain_id, str(seed), utt_id, encoder_key, material, device_class]
    return derived_id(joined(*parts), 40)


def encode_entry(key: str, entry: CachedEmbedding) -> bytes:
    """The bytes of a self-verifying entry written under ``key``."""
    vector = b"" if entry.vector is None else np.asarray(entry.vector, dtype=_VECTOR_DTYPE).reshape(-1).tobytes()
    dim = None if entry.vector is None else len(vector) // _VECTOR_DTYPE.itemsize
    header = json.dumps({"dim": dim, "key": key, "outcomes": entry.outcomes}, sort_keys=True, allow_nan=False)
    payload = header.encode() + b"\n" + vector
    return MAGIC + derived_digest(payload).encode() + b"\n" + payload


def decode_entry(data: bytes, key: str) -> CachedEmbedding:
    """The entry in ``data`` if its payload digest matches and it was written under ``key``; otherwise
    ``CacheEntryRejectedError`` saying what is wrong."""
    if not data:
        raise CacheEntryRejectedError("empty file")
    if not data.startswith(MAGIC):
        raise CacheEntryRejectedError("not an embedding cache entry (unknown format)")
    digest, payload = data[len(MAGIC) : len(MAGIC) + _DIGEST_HEX], data[len(MAGIC) + _DIGEST_HEX + 1 :]
    if len(data) < len(MAGIC) + _DIGEST_HEX + 1 or derived_digest(payload).encode() != digest:
        raise CacheEntryRejectedError("payload digest mismatch (truncated or damaged)")
    header_bytes, _, vector = payload.partition(b"\n")
    try:
        header = json.loads(header_bytes)
        dim, written_key, outcomes = header["dim"], header["key"], header["outcomes"]
    except (UnicodeDecodeError, json.JSONDecodeError, TypeError, KeyError):
        raise CacheEntryRejectedError("unreadable header") from None
    if written_key != key:
        raise CacheEntryRejectedError("written under another key (swapped or misplaced file)")
    if not isinstance(outcomes, list) or not all(isinstance(o, dict) and "status" in o for o in outcomes):
        raise CacheEntryRejectedError("outcomes are not a list of operator outcomes")
    expected = 0 if dim is None else dim * _VECTOR_DTYPE.itemsize if isinstance(dim, int) and dim > 0 else -1
    if len(vector) != expected:
        raise CacheEntryRejectedError(f"payload holds {len(vector)} bytes, the header declares dim {dim}")
    values = None if dim is None else np.frombuffer(vector, dtype=_VECTOR_DTYPE).astype(np.float32)
    if values is not None and not np.isfinite(values).all():
        raise CacheEntryRejectedError("non-finite values in the embedding")
    return CachedEmbedding(values, outcomes)


@dataclass
class EmbeddingCache:
    """A folder of ``<key[:2]>/<key>.emb`` self-verifying entries.

    ``get(key)`` gives a verified entry or None (absent, or rejected and counted in ``rejected`` by reason);
    ``put(key, entry)`` writes one atomically.
    """

    root: Path
    rejected: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.root = Path(self.root)

    def path(self, key: str) -> Path:
        """Where the entry of ``key`` lives."""
        return self.root / key[:2] / f"{key}{SUFFIX}"

    def _load(self, key: str) -> CachedEmbedding:
        path = self.path(key)
        try:
            if not stat.S_ISREG(path.lstat().st_mode):  # a FIFO would block, a link may point anywhere
                raise CacheEntryRejectedError("not a regular file")
            return decode_entry(path.read_bytes(), key)
        except FileNotFoundError:
            raise
        except OSError as error:
            raise CacheEntryRejectedError(f"unreadable ({error.strerror})") from None

    def get(self, key: str) -> CachedEmbedding | None:
        """The verified entry of ``key``; None when there is none or it was rejected (then removed)."""
        try:
            return self._load(key)
        except FileNotFoundError:
            return None
        except CacheEntryRejectedError as rejection:
            self.rejected[str(rejection)] += 1
            with contextlib.suppress(OSError):  # a folder or a read-only cache: leave it, put() will say
                self.path(key).unlink()
            return None

    def read(self, key: str) -> CachedEmbedding:
        """The verified entry of ``key``, or ``CacheEntryRejectedError`` naming the file and why (absence included): for
        a reader that must not recompute, such as the Ray driver checking what a worker wrote."""
        try:
            return self._load(key)
        except FileNotFoundError:
            raise CacheEntryRejectedError(f"{self.path(key)}: no such entry") from None
        except CacheEntryRejectedError as rejection:
            raise CacheEntryRejectedError(f"{self.path(key)}: {rejection}") from None

    def put(self, key: str, entry: CachedEmbedding) -> None:
        """Write the entry of ``key`` (atomically: readers see the old entry or the new one)."""
        atomic_write_bytes(self.path(key), encode_entry(key, entry))
