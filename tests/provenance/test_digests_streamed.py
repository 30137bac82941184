"""Streamed digests checked against hashlib and blake3 over the whole bytes, and published test vectors."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import blake3

from provenance.digests import CHUNK_SIZE, bytes_digest, file_digest


def test_file_larger_than_chunk_matches_whole_byte_digests(tmp_path: Path) -> None:
    data = os.urandom(2 * CHUNK_SIZE + 12_345)
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    digest = file_digest(path)
    assert digest.sha256 == hashlib.sha256(data).hexdigest()
    assert digest.blake3 == blake3.blake3(data).hexdigest()
    assert digest.size == len(data)


def test_small_chunks_read_in_pieces(tmp_path: Path) -> None:
    data = os.urandom(10_001)
    path = tmp_path / "odd.bin"
    path.write_bytes(data)
    assert file_digest(path, chunk_size=64) == file_digest(path)
    assert file_digest(path, chunk_size=64).sha256 == hashlib.sha256(data).hexdigest()


def test_published_vectors() -> None:
    # FIPS 180-2 "abc"; BLAKE3 reference test vector for the empty input.
    assert bytes_digest(b"abc").sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert bytes_digest(b"").blake3 == "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
