"""Reading a user's input file only when it is a regular file.

A FIFO blocks a plain ``open`` forever, ``/dev/zero`` never ends and a socket cannot be opened at all, so the
path is checked before it is opened and the opened descriptor is checked again (a file swapped in between is
still caught). Anything else is an :class:`~schemas.errors.InputError`: one line, exit 2.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from schemas import InputError, read_if_regular

__all__ = [
    "open_regular_file",
    "read_regular_file",
]

_KINDS = (
    (stat.S_ISDIR, "is a directory"),
    (stat.S_ISFIFO, "is a named pipe (FIFO), not a regular file"),
    (stat.S_ISSOCK, "is a socket, not a regular file"),
    (stat.S_ISCHR, "is a character device, not a regular file"),
    (stat.S_ISBLK, "is a block device, not a regular file"),
)


def _not_regular(path: Path, mode: int, what: str) -> InputError:
    kind = next((text for test, text in _KINDS if test(mode)), "is not a regular file")
    return InputError(str(path), f"{kind} (expected {what})")


def open_regular_file(path: Path, what: str) -> BinaryIO:
    """``path`` opened for reading (symlinks followed) if it is a regular file, checked on the opened descriptor; a
    file too large to hold in memory is read through this, in chunks."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode  # a socket cannot even be opened: say what it is
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode, what)
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError as error:
        raise InputError(str(path), f"no such file (expected {what})") from error
    except OSError as error:
        raise InputError(str(path), f"cannot be read: {error.strerror} (expected {what})") from error
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):  # swapped in after the check
        os.close(descriptor)
        raise _not_regular(path, mode, what)
    os.set_blocking(descriptor, True)
    return os.fdopen(descriptor, "rb")


def read_regular_file(path: Path, what: str) -> bytes:
    """The bytes of ``path`` (symlinks followed) if it is a regular file; ``what`` names the expected content."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode  # a socket cannot even be opened: say what it is
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode, what)
        mode, data = read_if_regular(path, follow_links=True)
    except FileNotFoundError as error:
        raise InputError(str(path), f"no such file (expected {what})") from error
    except OSError as error:
        raise InputError(str(path), f"cannot be read: {error.strerror} (expected {what})") from error
    if data is None:
        raise _not_regular(path, mode, what)
    return data
