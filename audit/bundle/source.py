"""Where a bundle's files are read from: its folder, or the archive it was downloaded as (``.zip``, ``.tar``,
``.tar.gz``/``.tgz``), read in place, never unpacked to disk.

Both give the verification steps the same three things: the bytes of a bundle-relative name (a regular file only),
why a name leaves the bundle through a link, and every entry of the bundle with what is wrong with it. An archive's
members are held to the rules a folder's files are: a link, a device, an absolute or ``..`` name, a name held twice
or a member larger than the bounds below is an entry with a problem, never read; the bundle is the folder of the
archive that holds ``provenance/statement.json`` (a release archive wraps it in one top-level folder), and members
outside it are not part of it, though every name in the archive must be safe (unpacked, a crafted name would land
beside the bundle or anywhere). A file that is both a zip and a tar (each tool would see another bundle) is refused,
and a zip member is read only stored or deflated, whose output is bounded while it streams (zipfile inflates bzip2
and LZMA members whole, whatever size they declare). The archive's own digest goes into the report.
"""

from __future__ import annotations

import lzma
import os
import posixpath
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from provenance import Digest, file_digest
from schemas import (
    PROVENANCE_DIR,
    REPORT_DIR,
    RESULTS_FILE,
    STATEMENT_FILE,
    BundleFileError,
    InputError,
    read_bundle_file,
    unsafe_name_reason,
)

ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz")
MAX_MEMBER_BYTES = 512 << 20  # one member, uncompressed: a paper-scale bundle's largest file is a few MB
MAX_ARCHIVE_BYTES = 1 << 30  # all members of the bundle, uncompressed (held in memory while it is verified)
# What a damaged archive raises while it is listed or read (a corrupt deflate stream: zlib.error).
UNREADABLE = (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError, RuntimeError, zlib.error, lzma.LZMAError)
MAX_HEADER_BYTES = 1 << 20  # a tar's PAX or GNU long-name header, which tarfile reads whole: a real one is ~100 bytes
ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}  # inflated within a bound


@dataclass(frozen=True)
class Entry:
    """One entry of a bundle (outside ``report/``): its bundle-relative name and, if it may not be read, why."""

    name: str
    problem: str | None = None


class BundleFolder:
    """A bundle as a folder on disk (links never followed, FIFOs and devices never opened)."""

    archive: Digest | None = None

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.label = str(root)
        self._resolved: dict[Path, Path] = {}  # each folder's real path, found once (a bundle has a few folders)

    def read(self, name: str) -> bytes:
        return read_bundle_file(self.root, name)

    def link_escape(self, name: str) -> str | None:
        """Why ``name`` leaves the bundle through a link, or None: its real path (``Path.resolve``) lies outside
        the bundle's. The folders' real paths are found once; a name whose last part is not a link is its folder's
        real path and that part (thousands of subjects, two ``resolve`` calls each, cost a third of a second)."""
        root = self._real(self.root)
        path = self.root / name
        real = path.resolve() if path.is_symlink() else self._real(path.parent) / path.name
        return None if real.is_relative_to(root) else "resolves (through a link) outside the bundle"

    def _real(self, folder: Path) -> Path:
        if folder not in self._resolved:
            self._resolved[folder] = folder.resolve()
        return self._resolved[folder]

    def entries(self) -> list[Entry]:
        """Every file and link under the bundle outside report/, links not followed."""
        found = []
        root = self.root.resolve()
        for folder, dirs, files in os.walk(self.root):
            relative = Path(folder).relative_to(self.root)
            if relative.parts and relative.parts[0] == REPORT_DIR:
                dirs.clear()
                continue
            links = [name for name in dirs if (Path(folder) / name).is_symlink()]
            for name in sorted(files + links):
                path = Path(folder) / name
                outside = path.is_symlink() and not path.resolve().is_relative_to(root)
                found.append(
                    Entry((relative / name).as_posix(), "link pointing outside the bundle" if outside else None)
                )
        return found


@dataclass(frozen=True)
class _Member:
    """What an archive says of one name under the bundle's root."""

    raw: str  # the name in the archive
    kind: str  # "file", "link", "folder" or "other" (a device, FIFO or socket)
    size: int  # declared, uncompressed
    target: str | None = None  # a link's target, where the archive records it
    count: int = 1  # members that carry the name
    method: str | None = None  # a zip member's compression, when it is not one read within a bound


def _zip_kind(info: zipfile.ZipInfo) -> str:
    """A zip member's kind from its Unix mode, where one is recorded (no file type bits: a plain file, as
    ``ZipFile.writestr`` and tools that record no Unix mode write them)."""
    unix = info.external_attr >> 16
    if info.is_dir() or stat.S_ISDIR(unix):
        return "folder"
    if stat.S_IFMT(unix) == 0 or stat.S_ISREG(unix):
        return "file"
    return "link" if stat.S_ISLNK(unix) else "other"


def _polyglot(path: Path) -> str | None:
    """Why the zip ``path`` is also something else, or None: it must start with a zip record and not read as a
    tar (a zip's directory sits at its end, so any other file can carry one after its own contents)."""
    with path.open("rb") as handle:
        head = handle.read(tarfile.BLOCKSIZE)
    try:
        tarfile.TarInfo.frombuf(head, "utf-8", "surrogateescape")
        return "it is both a tar and a zip archive (tar and unzip would see different files)"
    except tarfile.TarError:
        pass
    if not head.startswith(b"PK"):
        return "its zip archive starts after other data (a polyglot or self-extracting file; expected a plain zip)"
    return None


class _HeaderTooLargeError(tarfile.TarError):
    """Not a ReadError: tarfile would take it for another compression to try, and word the failure of each."""


class _BoundedTarInfo(tarfile.TarInfo):
    """A tar header whose extended header (PAX, GNU long name or link) is refused above ``MAX_HEADER_BYTES`` before
    tarfile reads all it declares into memory at once (a compressed stream of zeros can declare gigabytes)."""

    def _proc_member(self, archive: tarfile.TarFile) -> tarfile.TarInfo:
        extended = (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE)
        if self.type in extended and self.size > MAX_HEADER_BYTES:
            declared = f"an extended tar header declares {self.size} bytes, more than {MAX_HEADER_BYTES}"
            raise _HeaderTooLargeError(declared)
        return super()._proc_member(archive)  # type: ignore[misc]


def _listing(path: Path) -> list[_Member]:
    """Every member of a zip or tar archive, folders too (tar: any compression tarfile reads)."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            return [
                _Member(info.filename, _zip_kind(info), info.file_size,
                        method=None if info.compress_type in ZIP_METHODS else f"method {info.compress_type}")
                for info in archive.infolist()
            ]  # fmt: skip
    with tarfile.open(path, "r:*", tarinfo=_BoundedTarInfo) as archive:
        return [
            _Member(info.name, "link" if info.issym() or info.islnk() else "file" if info.isreg() else
                    "folder" if info.isdir() else "other", info.size, info.linkname or None)
            for info in archive.getmembers()
        ]  # fmt: skip


def _bundle_root(label: str, listed: list[_Member]) -> str:
    """The folder of the archive that holds the bundle: the one with ``provenance/statement.json`` under a safe
    name (one under an absolute or ``..`` name is named as such)."""
    names = [member.raw.removeprefix("./") for member in listed if member.kind != "folder"]
    unsafe = [(name, reason) for name in names if (reason := unsafe_name_reason(name)) is not None]
    roots = {name[: -len(STATEMENT_FILE)] for name in names if name.endswith(STATEMENT_FILE)}
    roots = {root for root in roots if (root == "" or root.endswith("/")) and unsafe_name_reason(root + "x") is None}
    if len(roots) != 1:
        found = "no" if not roots else f"{len(roots)}"
        why = f" under a safe name (member {ascii(unsafe[0][0])[:120]}: {unsafe[0][1]})" if unsafe and not roots else ""
        raise InputError(label, f"{found} {STATEMENT_FILE} in the archive{why}: expected the archive of one bundle")
    return roots.pop()


def _read_members(path: Path, wanted: dict[str, _Member]) -> dict[str, bytes]:
    """The bytes of each wanted regular member (by its name in the archive), never more than it declared plus one
    byte: a header that lies about the size is caught, not followed."""
    contents: dict[str, bytes] = {}
    by_raw = {member.raw: (name, member) for name, member in wanted.items()}
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            for raw, (name, member) in by_raw.items():
                with archive.open(raw) as opened:
                    contents[name] = opened.read(member.size + 1)
        return contents
    with tarfile.open(path, "r:*", tarinfo=_BoundedTarInfo) as archive:
        for info in archive:  # one pass, in archive order: a compressed tar cannot seek back cheaply
            member_file = archive.extractfile(info) if info.name in by_raw and info.isreg() else None
            if member_file is not None:
                name, member = by_raw[info.name]
                with member_file:
                    contents.setdefault(name, member_file.read(member.size + 1))
    return contents


class BundleArchive:
    """A bundle inside an archive file, its members checked as a folder's files are and read once into memory."""

    def __init__(self, path: Path) -> None:
        path = Path(path)
        self.label = str(path)
        try:
            mode = path.stat().st_mode
        except OSError as error:
            raise InputError(self.label, f"cannot be read ({error.strerror})") from None
        if not stat.S_ISREG(mode):
            raise InputError(self.label, "not a regular file (expected a bundle folder or an archive of one)")
        self.archive: Digest | None = file_digest(path)
        try:
            if zipfile.is_zipfile(path) and (polyglot := _polyglot(path)) is not None:
                raise InputError(self.label, f"not a bundle archive: {polyglot}")
            listed = _listing(path)
            self.prefix = _bundle_root(self.label, listed)
            self.members, self.refused = self._sort(listed)
            readable = {name: m for name, m in self.members.items() if self._problem(name) is None}
            self.contents = _read_members(path, readable)
        except UNREADABLE as error:
            raise InputError(self.label, f"not a readable zip or tar archive: {error}") from None

    def _sort(self, listed: list[_Member]) -> tuple[dict[str, _Member], list[Entry]]:
        """The members under the bundle's root by bundle-relative name (outside report/), and those refused."""
        members: dict[str, _Member] = {}
        refused: list[Entry] = []
        for member in listed:
            name = member.raw.removeprefix("./")
            if member.kind == "folder":
                if member.size:  # unpacked, a folder's bytes are dropped unseen: the archive hides them
                    refused.append(Entry(ascii(member.raw)[:200], f"a folder entry that holds {member.size} bytes"))
                    continue
                name = name.removesuffix("/") or name  # a folder "/" keeps its name: absolute, refused below
                if name in ("", "."):  # the archive's own top folder
                    continue
            if (reason := unsafe_name_reason(name)) is not None:  # anywhere: unpacked, it would land anywhere
                refused.append(Entry(ascii(name)[:200], f"unsafe member name: {reason}"))
                continue
            if member.kind == "folder" or not name.startswith(self.prefix):
                continue  # a folder, or a file beside the bundle in the archive: not part of it
            name = name[len(self.prefix) :]
            if name.split("/")[0] == REPORT_DIR:
                continue
            if name in members:
                members[name] = replace(members[name], count=members[name].count + 1)
            else:
                members[name] = member
        total = sum(member.size for member in members.values() if member.kind == "file")
        if total > MAX_ARCHIVE_BYTES:
            raise InputError(self.label, f"its bundle unpacks to {total} bytes, more than {MAX_ARCHIVE_BYTES}")
        return members, refused

    def _problem(self, name: str) -> str | None:
        """Why the member ``name`` may not be read, or None."""
        member = self.members.get(name)
        if member is None:
            return "missing"
        if member.count > 1:
            return f"held {member.count} times in the archive"
        if member.kind == "link":
            return "a link"
        if member.kind != "file":
            return "not a regular file"
        if member.method is not None:
            return f"compressed with zip {member.method}, not stored or deflate (not read)"
        if member.size > MAX_MEMBER_BYTES:
            return f"{member.size} bytes, more than {MAX_MEMBER_BYTES} (not read)"
        return None

    def read(self, name: str) -> bytes:
        if (reason := unsafe_name_reason(name)) is not None:
            raise BundleFileError(name, f"unsafe name: {reason}")
        if (problem := self._problem(name)) is not None:
            raise BundleFileError(name, problem)
        data = self.contents[name]
        if len(data) != self.members[name].size:
            raise BundleFileError(name, f"holds {len(data)} bytes where the archive declares {self.members[name].size}")
        return data

    def link_escape(self, name: str) -> str | None:
        member = self.members.get(name)
        if member is None or member.kind != "link":
            return None
        if member.target is None:  # a zip records no target: a link is refused either way
            return "a link in a zip archive (its target unknown)"
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(name), member.target))
        outside = PurePosixPath(member.target).is_absolute() or joined == ".." or joined.startswith("../")
        return "resolves (through a link) outside the bundle" if outside else None

    def entries(self) -> list[Entry]:
        found = list(self.refused)
        for name, member in sorted(self.members.items()):
            problem = None
            if member.count > 1:
                problem = f"held {member.count} times in the archive"
            elif member.kind == "link" and self.link_escape(name) is not None:
                problem = "link pointing outside the bundle"
            elif member.kind == "other":
                problem = "not a regular file (a device, FIFO or socket)"
            elif member.method is not None:
                problem = self._problem(name)
            found.append(Entry(name, problem))
        return found


BundleSource = BundleFolder | BundleArchive


def _folder_bundle_root(path: Path) -> Path:
    """The bundle in a folder, by the archive's rule (the folder holding ``provenance/statement.json``): the folder
    itself, or, where it holds neither ``provenance/`` nor ``results.csv``, its one subfolder that does, as unzipping
    a release archive (one top-level folder) leaves it; several such subfolders are one input line."""
    if (path / PROVENANCE_DIR).exists() or (path / RESULTS_FILE).exists():
        return path
    try:
        children = sorted(path.iterdir())
    except OSError as error:
        raise InputError(str(path), f"cannot be read ({error.strerror})") from None
    inner = [
        child for child in children if child.is_dir() and not child.is_symlink() and (child / STATEMENT_FILE).exists()
    ]
    if len(inner) > 1:
        names = ", ".join(child.name for child in inner[:3])
        raise InputError(str(path), f"{len(inner)} bundles in this folder ({names}): pass --bundle one of them")
    return inner[0] if inner else path


def open_bundle(path: Path) -> BundleSource:
    """A bundle folder (or the folder an archive of one was unpacked into), or an archive named by its suffix;
    anything else is one input line."""
    path = Path(path)
    if path.is_dir():
        return BundleFolder(_folder_bundle_root(path))
    if path.name.endswith(ARCHIVE_SUFFIXES):
        return BundleArchive(path)
    raise InputError(
        str(path), "bundle not found (expected the folder of results.csv, trials/, scores/, or a .zip/.tar.gz of it)"
    )
