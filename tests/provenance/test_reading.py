"""``provenance.reading``: the one home where a path is checked to be what it must be before it is read (issue 44).

Each kind a file system holds, where a file or a folder is expected, is refused in one line that names it; a file
read whole is bounded, at the bound exactly, and costs what it holds, not the bound (tracemalloc)."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from provenance.reading import checked_path, read_regular_file
from schemas import InputError


def _kind(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / kind
    if kind == "file":
        path.write_bytes(b"x")
    elif kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        return Path("/dev/zero")
    elif kind == "dangling":
        path.symlink_to(tmp_path / "nothing")
    elif kind == "link-to-folder":
        (tmp_path / "real").mkdir()
        path.symlink_to(tmp_path / "real")
    return path


@pytest.mark.parametrize(
    ("kind", "as_file", "as_folder"),
    [
        ("file", None, "is a file, not a folder"),
        ("folder", "is a directory", None),
        ("link-to-folder", "is a directory", None),
        ("fifo", "is a named pipe (FIFO), not a regular file", "is a named pipe (FIFO), not a folder"),
        ("device", "is a character device, not a regular file", "is a character device, not a folder"),
        ("dangling", "is a dangling link", "is a dangling link"),
        ("missing", "no such file", "no such folder"),
    ],
)
def test_every_kind_is_named_where_a_file_or_a_folder_is_expected(
    tmp_path: Path, kind: str, as_file: str | None, as_folder: str | None
) -> None:
    path = _kind(tmp_path, kind)
    for expected, problem in (("file", as_file), ("folder", as_folder)):
        if problem is None:
            assert checked_path(path, expected, "x") == path  # type: ignore[arg-type]
            continue
        with pytest.raises(InputError) as caught:
            checked_path(path, expected, "a thing", source=f"--opt {path}")  # type: ignore[arg-type]
        assert caught.value.line() == f"--opt {path}: {problem} (expected a thing)"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["fifo", "device", "folder", "dangling"])
def test_reading_what_is_no_regular_file_is_refused_before_a_byte(tmp_path: Path, kind: str) -> None:
    with pytest.raises(InputError):
        read_regular_file(_kind(tmp_path, kind), "a document")


def test_a_file_is_read_up_to_its_bound_and_refused_one_byte_beyond(tmp_path: Path) -> None:
    path = tmp_path / "doc"
    path.write_bytes(b"a" * 3000)
    assert read_regular_file(path, "a document", limit=3000) == b"a" * 3000
    with pytest.raises(InputError, match="larger than 2999 bytes \\(expected a document\\); not read"):
        read_regular_file(path, "a document", limit=2999)


def test_a_small_file_costs_what_it_holds_not_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "doc"
    path.write_bytes(b"a" * 100)
    tracemalloc.start()
    read_regular_file(path, "a document")  # the bound is 256 MiB
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 4 << 20
