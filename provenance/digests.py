"""Streamed BLAKE3 + SHA-256 digests of files, byte strings and folders.

Files are read in fixed-size chunks so that a 10 GB checkpoint needs one chunk of memory. A folder's digest is
the digest of a canonical listing of its regular files (relative POSIX path, size and both digests, sorted), so
two folders with the same content have the same digest whatever their location or file order.

A run re-reads the same corpus, music and checkpoint files every time. Inside ``with digest_index(index):``,
``file_digest`` (and so ``tree_digest`` and ``file_digests``) first asks the ``DigestIndex``: a file whose
(real path, size, mtime_ns, inode, ctime_ns) is unchanged since it was hashed is not read again. Any write to a
file changes its ctime, which no user can set, so a stale entry cannot match; an entry is recorded only once the
file's ctime is older than ``RACY_SECONDS`` (a file changed again within the same clock tick would otherwise
keep its old signature). The index file verifies itself (a BLAKE3 of its entries on its first line): a damaged
one is ignored and rebuilt. Verifiers (``audit``) never open an index: they always hash.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from pathlib import Path

import blake3

from provenance.atomic import atomic_write_bytes
from provenance.canonical import canonical_json

__all__ = [
    "CHUNK_SIZE",
    "RACY_SECONDS",
    "Digest",
    "DigestIndex",
    "bytes_digest",
    "digest_index",
    "file_digest",
    "file_digests",
    "path_digest",
    "tree_digest",
    "tree_listing",
]

CHUNK_SIZE = 1 << 20
RACY_SECONDS = 2.0


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
    """Digest of one file, streamed in chunks of ``chunk_size`` bytes (through the active ``DigestIndex``)."""
    index = _ACTIVE_INDEX.get()
    return index.digest(path) if index is not None else _hash_file(path, chunk_size)


def file_digests(paths: Iterable[Path], workers: int | None = None) -> list[Digest]:
    """``file_digest`` of many files in threads (hashing releases the GIL), in the order given."""
    index = _ACTIVE_INDEX.get()
    one = index.digest if index is not None else _hash_file
    paths = list(paths)
    if len(paths) < 2:
        return [one(path) for path in paths]
    with ThreadPoolExecutor(workers or min(8, os.cpu_count() or 1)) as pool:
        return list(pool.map(one, paths))


def _hash_file(path: Path, chunk_size: int = CHUNK_SIZE) -> Digest:
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
    return [(p.relative_to(root).as_posix(), digest) for p, digest in zip(files, file_digests(files), strict=True)]


def tree_digest(folder: Path) -> Digest:
    """Digest of a folder: the digest of its canonical listing (see module docstring)."""
    lines = [f"{name}\t{d.size}\t{d.sha256}\t{d.blake3}\n" for name, d in tree_listing(folder)]
    return bytes_digest("".join(lines).encode())


def path_digest(path: Path) -> Digest:
    """Digest of a file, or of a folder's canonical listing."""
    return tree_digest(path) if Path(path).is_dir() else file_digest(path)


_Signature = tuple[int, int, int, int]


def _signature(stat: os.stat_result) -> _Signature:
    return (stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns)


@dataclass
class DigestIndex:
    """Digests of files by (real path, size, mtime_ns, inode, ctime_ns), kept in one JSON file. The real path
    (every link resolved) is the file's one key, however many links lead to it (a corpus of per-speaker links).

    ``hits`` and ``hashed`` count the lookups answered from the index and the files read.
    """

    path: Path | None = None
    entries: dict[str, list[int | str]] = field(default_factory=dict)
    hits: int = 0
    hashed: int = 0

    @classmethod
    def open(cls, path: Path) -> DigestIndex:
        """The index stored at ``path``; empty when there is none or it does not verify."""
        index = cls(Path(path))
        with contextlib.suppress(OSError, ValueError, UnicodeDecodeError):
            digest, _, body = Path(path).read_bytes().partition(b"\n")
            if blake3.blake3(body).hexdigest().encode() == digest:
                entries = json.loads(body)
                if isinstance(entries, dict):
                    index.entries = entries
        return index

    def digest(self, path: Path) -> Digest:
        """The file's digest: from the index when its signature is unchanged, otherwise hashed (and recorded)."""
        name = os.path.realpath(path)
        signature = _signature(os.stat(name))
        entry = self.entries.get(name)
        if entry is not None and tuple(entry[:4]) == signature:
            self.hits += 1
            return Digest(str(entry[4]), str(entry[5]), signature[0])
        digest = _hash_file(Path(name))
        self.hashed += 1
        if time.time_ns() - signature[3] > RACY_SECONDS * 1e9 and digest.size == signature[0]:
            self.entries[name] = [*signature, digest.sha256, digest.blake3]
        return digest

    def save(self) -> None:
        """Write the index atomically beside its old version (nothing to do without a path)."""
        if self.path is None:
            return
        body = canonical_json(self.entries)
        atomic_write_bytes(self.path, blake3.blake3(body).hexdigest().encode() + b"\n" + body)


_ACTIVE_INDEX: ContextVar[DigestIndex | None] = ContextVar("digest_index", default=None)


@contextlib.contextmanager
def digest_index(index: DigestIndex | None) -> Iterator[DigestIndex | None]:
    """Make ``file_digest`` consult ``index`` inside the block (this thread or task only); None: always hash."""
    token = _ACTIVE_INDEX.set(index)
    try:
        yield index
    finally:
        _ACTIVE_INDEX.reset(token)
