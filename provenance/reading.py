"""Reading a user's input file only when it is a regular file.

A FIFO blocks a plain ``open`` forever, ``/dev/zero`` never ends and a socket cannot be opened at all, so the
path is checked before it is opened and the opened descriptor is checked again (a file swapped in between is
still caught). Anything else is an :class:`~schemas.errors.InputError`: one line, exit 2.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO, Literal

from schemas import InputError

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "checked_path",
    "open_regular_file",
    "read_regular_file",
]

# A document read whole (a configuration, a roster, a table, a key): far above any real one, far below memory.
MAX_DOCUMENT_BYTES = 256 << 20
CHUNK_BYTES = 1 << 20

_KINDS = (
    (stat.S_ISDIR, "is a directory"),
    (stat.S_ISFIFO, "is a named pipe (FIFO), not a regular file"),
    (stat.S_ISSOCK, "is a socket, not a regular file"),
    (stat.S_ISCHR, "is a character device, not a regular file"),
    (stat.S_ISBLK, "is a block device, not a regular file"),
)


def _kind(mode: int) -> str:
    return next((text for test, text in _KINDS if test(mode)), "is not a regular file")


def _not_regular(path: Path, mode: int, what: str) -> InputError:
    return InputError(str(path), f"{_kind(mode)} (expected {what})")


def _missing(path: Path, what: str, source: str | None, kind: str = "file") -> InputError:
    problem = "is a dangling link" if os.path.islink(path) else f"no such {kind}"
    return InputError(source or str(path), f"{problem} (expected {what})")


def checked_path(path: Path, kind: Literal["file", "folder"], what: str, *, source: str | None = None) -> Path:
    """``path`` if it is (links followed) a regular file or a folder, as ``kind`` asks; else one InputError naming
    ``source`` (an option and its value, say) or the path, what is there instead and ``what`` was expected. Checked
    before anything is opened: a FIFO would block, a device never end, a folder or a dangling link fail late with
    an error that blames the file system."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise _missing(path, what, source, kind) from None
    except OSError as error:
        raise InputError(source or str(path), f"cannot be read: {error.strerror} (expected {what})") from None
    if kind == "folder" and not stat.S_ISDIR(mode):
        problem = "is a file, not a folder" if stat.S_ISREG(mode) else _kind(mode).replace("regular file", "folder")
        raise InputError(source or str(path), f"{problem} (expected {what})")
    if kind == "file" and not stat.S_ISREG(mode):
        raise InputError(source or str(path), f"{_kind(mode)} (expected {what})")
    return path


def open_regular_file(path: Path, what: str) -> BinaryIO:
    """``path`` opened for reading (symlinks followed) if it is a regular file, checked on the opened descriptor; a
    file too large to hold in memory is read through this, in chunks."""
    path = checked_path(path, "file", what)  # a socket cannot even be opened: say what it is
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError as error:
        raise _missing(path, what, None) from error
    except OSError as error:
        raise InputError(str(path), f"cannot be read: {error.strerror} (expected {what})") from error
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):  # swapped in after the check
        os.close(descriptor)
        raise _not_regular(path, mode, what)
    os.set_blocking(descriptor, True)
    return os.fdopen(descriptor, "rb")


def read_regular_file(path: Path, what: str, *, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of ``path`` (symlinks followed) if it is a regular file of at most ``limit`` bytes; ``what`` names
    the expected content. A larger file is refused after ``limit + 1`` bytes, whatever its size claims."""
    chunks, total = [], 0
    with open_regular_file(path, what) as handle:
        try:  # in chunks: one read of limit + 1 bytes would allocate all of them whatever the file holds
            while total <= limit and (chunk := handle.read(min(CHUNK_BYTES, limit + 1 - total))):
                chunks.append(chunk)
                total += len(chunk)
        except OSError as error:
            raise InputError(str(path), f"cannot be read: {error.strerror} (expected {what})") from error
    if total > limit:
        raise InputError(str(path), f"larger than {limit} bytes (expected {what}); not read")
    return b"".join(chunks)
