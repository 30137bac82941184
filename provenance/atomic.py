"""Atomic file writes: write to a temporary file in the target folder, flush, fsync, then rename over the target.

A reader (or a resumed run) therefore sees either the old file or the complete new one, never a partial write.
A command that writes at the end of a long step checks its output folder first (``check_writable_folder``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from audit.errors import InputError


@contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success it replaces ``target``, on error it is removed.

    For writers that take a path (parquet, PNG): ``with atomic_path(p) as tmp: table.to_parquet(tmp)``.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with tmp.open("rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_bytes(target: Path, data: bytes) -> None:
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(target: Path, text: str) -> None:
    atomic_write_bytes(target, text.encode("utf-8"))


def check_writable_folder(folder: Path, source: Path) -> None:
    """Raise an InputError about ``source`` unless files can be created in ``folder`` (made with its parents
    when absent, as ``atomic_path`` does).

    Probed by creating and removing a temporary file in ``folder`` or, when it does not exist yet, in its
    nearest existing ancestor, where it would be made: a file in the way, a read-only mount or ``/proc`` is
    refused before any work is done, and nothing is left behind.
    """
    folder = Path(folder)
    existing = folder
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        where = "it is" if existing == folder else f"{existing} is"
        raise InputError(str(source), f"cannot write here: {where} not a folder")
    try:
        fd, name = tempfile.mkstemp(prefix=".write-probe.", suffix=".tmp", dir=existing)
    except OSError as error:
        where = "" if existing == Path(source) else f" ({existing})"
        raise InputError(str(source), f"cannot write here: {error.strerror}{where}") from error
    os.close(fd)
    os.unlink(name)
