"""Atomic file writes: write to a temporary file in the target folder, flush, fsync, then rename over the target.

A reader (or a resumed run) therefore sees either the old file or the complete new one, never a partial write.
A command that writes at the end of a long step checks its output folder first (``check_writable_folder``).
Only a kill between the temporary file's creation and its rename leaves one behind: it is named
``.<target name>.<random>.tmp`` (``is_temporary``), never a bundle file, and ``remove_temporaries`` clears them
when a run resumes. The final file's mode follows the process umask (``0o666 & ~umask``), as ``open()`` would
give, unless the caller asks for another (a private key: ``0o600``). A write that fails (a full disk, a read-only
folder) raises ``OSError`` naming the target file.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from schemas import InputError

__all__ = [
    "FOLDER_FLAGS",
    "TEMP_SUFFIX",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_text",
    "check_writable_folder",
    "current_umask",
    "is_temporary",
    "remove_temporaries",
    "write_files_into",
]

TEMP_SUFFIX = ".tmp"
_TEMP_NAME = re.compile(r"^\..+\.[A-Za-z0-9_]+\.tmp$")
_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process umask: from /proc where Linux shows it, else by setting it and putting it back (a lock keeps
    this process's threads from seeing the brief change)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def is_temporary(name: str) -> bool:
    """Whether a file name is one of ``atomic_path``'s temporary files."""
    return bool(_TEMP_NAME.match(name))


def remove_temporaries(folder: Path) -> list[Path]:
    """Remove the temporary files a killed writer left under ``folder``; returns what was removed."""
    removed = []
    for path in sorted(Path(folder).rglob(f".*{TEMP_SUFFIX}")):
        if is_temporary(path.name) and path.is_file() and not path.is_symlink():
            path.unlink()
            removed.append(path)
    return removed


@contextmanager
def atomic_path(target: Path, *, mode: int | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success it replaces ``target``, on error it is removed.

    For writers that take a path (parquet, PNG): ``with atomic_path(p) as tmp: table.to_parquet(tmp)``.
    ``mode`` defaults to what the umask allows for a new file.
    """
    target = Path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TEMP_SUFFIX, dir=target.parent)
        os.close(fd)
    except OSError as error:
        raise OSError(error.errno, error.strerror or str(error), str(target)) from error
    tmp = Path(name)
    try:
        try:
            yield tmp
            with tmp.open("rb+") as handle:
                os.fsync(handle.fileno())
            os.chmod(tmp, (0o666 & ~current_umask()) if mode is None else mode)
            os.replace(tmp, target)
        except OSError as error:
            raise OSError(error.errno, error.strerror or str(error), str(target)) from error
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_bytes(target: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``target`` whole or not at all (a temporary file renamed into place)."""
    with atomic_path(target, mode=mode) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(target: Path, text: str) -> None:
    """Write ``text`` as UTF-8 to ``target`` whole or not at all."""
    atomic_write_bytes(target, text.encode("utf-8"))


def check_writable_folder(folder: Path, source: Path | str) -> None:
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
        kind = "a dangling link, " if existing.is_symlink() and not existing.exists() else ""
        raise InputError(str(source), f"cannot write here: {where} {kind}not a folder")
    try:
        fd, name = tempfile.mkstemp(prefix=".write-probe.", suffix=".tmp", dir=existing)
    except OSError as error:
        where = "" if existing == Path(source) else f" ({existing})"
        raise InputError(str(source), f"cannot write here: {error.strerror}{where}") from error
    os.close(fd)
    os.unlink(name)


FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def write_files_into(folder: Path, files: Mapping[str, bytes], *, removed: Iterable[str] = ()) -> None:
    """Write each ``relative name -> bytes`` of ``files`` under ``folder`` atomically, and unlink each name of
    ``removed``, never through a link.

    ``folder`` (made when absent) and every subfolder of a name are opened without following a link (a link there
    is an ``OSError`` ``ELOOP``/``ENOTDIR`` naming it); each file is written as a temporary beside its target and
    renamed onto it relative to that folder's descriptor, so a link in the target's place is replaced, its target
    never written. Modes follow the umask, as ``atomic_path`` gives them.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    root = _open_folder(folder)
    try:
        for name, data in files.items():
            *parents, leaf = name.split("/")
            with _subfolder(root, folder, parents) as descriptor:
                _replace_in(descriptor, leaf, data, folder / name)
        for name in removed:
            *parents, leaf = name.split("/")
            with _subfolder(root, folder, parents) as descriptor, contextlib.suppress(FileNotFoundError):
                os.unlink(leaf, dir_fd=descriptor)
    finally:
        os.close(root)


def _open_folder(path: Path, parent: int | None = None, name: str | None = None) -> int:
    """A descriptor of the folder ``path`` (``name`` in the folder ``parent`` when given), never through a link."""
    try:
        return (
            os.open(name, FOLDER_FLAGS, dir_fd=parent) if parent is not None and name else os.open(path, FOLDER_FLAGS)
        )
    except OSError as error:
        raise OSError(error.errno, f"{error.strerror} (a link or not a folder)", str(path)) from error


@contextmanager
def _subfolder(root: int, folder: Path, parents: list[str]) -> Iterator[int]:
    """The descriptor of ``folder/<parents...>``, each level made when absent and opened without following links."""
    opened: list[int] = []
    descriptor, path = root, folder
    try:
        for part in parents:
            path = path / part
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, dir_fd=descriptor)
            descriptor = _open_folder(path, descriptor, part)
            opened.append(descriptor)
        yield descriptor
    finally:
        for item in opened:
            os.close(item)


def _replace_in(folder: int, name: str, data: bytes, shown: Path) -> None:
    temporary = f".{name}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        handle = os.open(temporary, flags, 0o666, dir_fd=folder)  # the umask applies, as open() gives
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(handle, view) :]
            os.fsync(handle)
        finally:
            os.close(handle)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise OSError(error.errno, error.strerror or str(error), str(shown)) from error
