"""The digest index: unchanged files are not re-read, any change is re-hashed, a damaged index is ignored.

Oracle: hashlib's SHA-256 and blake3 over the file bytes, computed here without ``provenance.digests``.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import blake3
import pytest

import provenance.digests
from provenance.digests import DigestIndex, digest_index, file_digest, file_digests, tree_digest


def oracle(path: Path) -> tuple[str, str]:
    data = path.read_bytes()
    return hashlib.sha256(data).hexdigest(), blake3.blake3(data).hexdigest()


def files(folder: Path, count: int) -> list[Path]:
    paths = []
    for number in range(count):
        path = folder / f"f{number:03d}.bin"
        path.write_bytes(os.urandom(1000 + 37 * number))
        paths.append(path)
    return paths


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Record entries at once (the racy-ctime guard is tested on its own below)."""
    monkeypatch.setattr(provenance.digests, "RACY_SECONDS", 0.0)


def test_parallel_digests_match_the_oracle_in_order(tmp_path: Path) -> None:
    paths = files(tmp_path, 40)
    got = file_digests(paths, workers=4)
    assert [(d.sha256, d.blake3) for d in got] == [oracle(p) for p in paths]
    assert [d.size for d in got] == [p.stat().st_size for p in paths]


def test_unchanged_files_are_answered_from_the_saved_index(tmp_path: Path, settled: None) -> None:
    paths = files(tmp_path, 10)
    index = DigestIndex.open(tmp_path / "index" / "digests.json")
    with digest_index(index):
        first = file_digests(paths)
    assert (index.hits, index.hashed) == (0, 10)
    index.save()
    reopened = DigestIndex.open(tmp_path / "index" / "digests.json")
    with digest_index(reopened):
        again = file_digests(paths)
        folder = tree_digest(tmp_path / "index")  # files outside the list are hashed as usual
    assert again == first and (reopened.hits, reopened.hashed) == (10, 1)
    assert folder == tree_digest(tmp_path / "index")


@pytest.mark.parametrize("change", ["same-size-rewrite", "append", "replace-by-rename", "touch-back"])
def test_any_change_is_hashed_again(tmp_path: Path, settled: None, change: str) -> None:
    path = files(tmp_path, 1)[0]
    index = DigestIndex()
    with digest_index(index):
        file_digest(path)
        stat = path.stat()
        time.sleep(0.05)  # past the file system's timestamp granularity
        if change == "same-size-rewrite":
            path.write_bytes(os.urandom(stat.st_size))
        elif change == "append":
            with path.open("ab") as handle:
                handle.write(b"x")
        elif change == "replace-by-rename":
            (tmp_path / "new").write_bytes(os.urandom(stat.st_size))
            os.replace(tmp_path / "new", path)
        else:  # content changed, then size and mtime put back: the ctime still moves
            path.write_bytes(os.urandom(stat.st_size))
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        digest = file_digest(path)
    assert (digest.sha256, digest.blake3) == oracle(path) and index.hashed == 2


def test_a_file_changed_within_the_racy_window_is_not_recorded(tmp_path: Path) -> None:
    path = files(tmp_path, 1)[0]  # just written: its ctime is within RACY_SECONDS of now
    index = DigestIndex()
    with digest_index(index):
        file_digest(path)
    assert index.entries == {}


@pytest.mark.parametrize("damage", [b"", b"garbage", b"0" * 64 + b"\n{}", None])
def test_a_damaged_index_is_ignored(tmp_path: Path, settled: None, damage: bytes | None) -> None:
    path = files(tmp_path, 1)[0]
    stored = tmp_path / "digests.json"
    index = DigestIndex.open(stored)
    with digest_index(index):
        file_digest(path)
    index.save()
    data = stored.read_bytes()
    # None: a valid-looking index whose recorded digest was altered (its self-digest no longer matches)
    stored.write_bytes(data.replace(oracle(path)[1].encode(), b"f" * 64) if damage is None else damage)
    reopened = DigestIndex.open(stored)
    assert reopened.entries == {}
    with digest_index(reopened):
        assert file_digest(path).blake3 == oracle(path)[1]
