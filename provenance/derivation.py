"""Derived digests, ids and random streams: one rule for every value the toolkit derives from other values.

A derivation hashes bytes with BLAKE3: the canonical JSON of a value (``provenance.canonical``) or named parts
joined by the unit separator (``joined``: U+001F never occurs in an id, a digest, a label or a seed). From that
digest come:

- ``derived_digest``: the full hex digest (cache keys, fingerprints, the digest of a weight-free encoder);
- ``derived_id``: its first ``length`` hex digits (run ids, chain ids, trial-list ids, embedding cache keys);
- ``derived_seed`` / ``derived_rng``: the first 16 bytes of the digest read as a little-endian integer (128 bits of
  entropy), the seed of a ``numpy.random.default_rng`` stream (trial sampling, operator realisations).

The same bytes always give the same id and the same stream, on any machine and in any process.
"""

from __future__ import annotations

import blake3
import numpy as np

__all__ = [
    "SEED_BYTES",
    "SEPARATOR",
    "derived_digest",
    "derived_id",
    "derived_rng",
    "derived_seed",
    "joined",
]

SEPARATOR = "\x1f"
SEED_BYTES = 16


def joined(*parts: str) -> bytes:
    """The bytes a derivation from named parts hashes: the parts joined by U+001F, UTF-8."""
    return SEPARATOR.join(parts).encode()


def derived_digest(data: bytes) -> str:
    """The BLAKE3 hex digest of ``data``."""
    return blake3.blake3(data).hexdigest()


def derived_id(data: bytes, length: int = 16) -> str:
    """The first ``length`` hex digits of the BLAKE3 digest of ``data``."""
    return derived_digest(data)[:length]


def derived_seed(data: bytes) -> int:
    """A 128-bit seed from ``data``: the first 16 bytes of its BLAKE3 digest, little-endian."""
    return int.from_bytes(blake3.blake3(data).digest()[:SEED_BYTES], "little")


def derived_rng(data: bytes) -> np.random.Generator:
    """A random stream that depends only on ``data`` (``default_rng`` of ``derived_seed``)."""
    return np.random.default_rng(derived_seed(data))
