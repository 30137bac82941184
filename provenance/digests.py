"""Streamed BLAKE3 + SHA-256 digests of files, byte strings and folders.

Files are read in fixed-size chunks so that a 10 GB checkpoint needs one chunk of memory. A folder's digest is
the digest of a canonical listing of its regular files (relative POSIX path, size and both digests, sorted), so
two folders with the same content have the same digest whatever their location or file order.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from pathlib import Path

import blake3

CHUNK_SIZE = 1 << 20


@dataclass(frozen=True)
class Digest:
    """The two digests the project records for every artefact, and its size in bytes."""

    sha256: str
    blake3: str
    size: int

    def as_dict(self) -> dict[str, str | int]:
        return asdict(self)


def bytes_digest(data: bytes) -> Digest:
    """Digest of an in-memory byte string."""
    return Digest(hashlib.sha256(data).hexdigest(), blake3.blake3(data).hexdigest(), len(data))


def file_digest(path: Path, chunk_size: int = CHUNK_SIZE) -> Digest:
    """Digest of one file, streamed in chunks of ``chunk_size`` bytes."""
    sha = hashlib.sha256()
    b3 = blake3.blake3()
    size = 0
    with Path(path).open("rb") as handle:
        while chunk := handle.read(chunk_size):
            sha.update(chunk)
            b3.update(chunk)
            size += len(chunk)
    return Digest(sha.hexdigest(), b3.hexdigest(), size)


def tree_listing(folder: Path) -> list[tuple[str, Digest]]:
    """Every regular file under ``folder`` with its digest, sorted by relative POSIX path."""
    root = Path(folder)
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return [(p.relative_to(root).as_posix(), file_digest(p)) for p in files]


def tree_digest(folder: Path) -> Digest:
    """Digest of a folder: the digest of its canonical listing (see module docstring)."""
    lines = [f"{name}\t{d.size}\t{d.sha256}\t{d.blake3}\n" for name, d in tree_listing(folder)]
    return bytes_digest("".join(lines).encode())


def path_digest(path: Path) -> Digest:
    """Digest of a file, or of a folder's canonical listing."""
    return tree_digest(path) if Path(path).is_dir() else file_digest(path)
