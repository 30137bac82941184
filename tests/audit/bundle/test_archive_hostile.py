"""Archives shaped by an attacker, and honest ones in shapes the runner does not write (issue 44, point 7).

A crafted name that would unpack beside the bundle, an absolute tar name and a file that is both a tar and a zip
never PASS; a corrupt deflate stream is one line; a zip member whose declared size hides what it inflates to is
never inflated past its bound (measured with tracemalloc); a zip written member by member without folder entries or
Unix file types passes, as the folder does.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import struct
import tarfile
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audit.bundle import source as bundle_source
from audit.verify import AuditRequest, verify
from schemas import InputError
from tests.provenance.synthetic_bundle import SyntheticBundle


def _files(bundle: SyntheticBundle) -> list[tuple[str, bytes]]:
    return [
        (p.relative_to(bundle.root).as_posix(), p.read_bytes()) for p in sorted(bundle.root.rglob("*")) if p.is_file()
    ]


def _zip(path: Path, members: list[tuple[str, bytes]], method: int = zipfile.ZIP_DEFLATED) -> Path:
    """Each member written by ``writestr`` (no folder entries; the Unix mode carries no file type)."""
    with zipfile.ZipFile(path, "w", method) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return path


def _verdict(bundle: SyntheticBundle, archive: Path) -> tuple[str, set[str]]:
    report = verify(AuditRequest(bundle.root / "results.csv", bundle=archive, key=bundle.public_key))
    problems = {case["problem"] for flag in report["flags"] for case in flag["details"].get("failures", [])}
    return report["verdict"], problems


def _cli(bundle: SyntheticBundle, archive: Path) -> tuple[int, str]:
    from audit.cli import app

    result = CliRunner().invoke(app, ["verify", str(bundle.root / "results.csv"), "--bundle", str(archive)])
    return result.exit_code, result.stderr.strip()


@pytest.mark.parametrize("prefix", ["", "interbias-bundle-v1/"], ids=["root", "release"])
def test_a_zip_written_member_by_member_without_folder_entries_passes(
    bundle: SyntheticBundle, tmp_path: Path, prefix: str
) -> None:
    archive = _zip(tmp_path / "bundle.zip", [(prefix + name, data) for name, data in _files(bundle)])
    assert all(not info.is_dir() and info.external_attr >> 16 == 0o600 for info in zipfile.ZipFile(archive).infolist())
    assert _verdict(bundle, archive) == ("pass", set())


def test_a_zip_with_folder_entries_passes(bundle: SyntheticBundle, tmp_path: Path) -> None:
    members = _files(bundle)
    folders = sorted({name.rsplit("/", 1)[0] + "/" for name, _ in members if "/" in name})
    archive = _zip(tmp_path / "bundle.zip", [(folder, b"") for folder in folders] + members)
    assert _verdict(bundle, archive) == ("pass", set())


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ("../beside.txt", "unsafe member name: a '..', '.' or empty segment"),
        ("interbias-bundle-v1/../../beside.txt", "unsafe member name: a '..', '.' or empty segment"),
        ("/tmp/beside.txt", "unsafe member name: an absolute path, a drive or a backslash"),
        ("..\\beside.txt", "unsafe member name: an absolute path, a drive or a backslash"),
    ],
    ids=["dot-dot", "dot-dot-through-the-bundle", "absolute", "backslash"],
)
def test_a_member_that_would_unpack_beside_the_bundle_is_refused(
    bundle: SyntheticBundle, tmp_path: Path, extra: str, problem: str
) -> None:
    members = [("interbias-bundle-v1/" + name, data) for name, data in _files(bundle)]
    archive = _zip(tmp_path / "bundle.zip", [*members, (extra, b"#!/bin/sh\n")])
    verdict, problems = _verdict(bundle, archive)
    assert verdict == "fail" and problem in problems


@pytest.mark.parametrize(
    ("extra", "data", "problem"),
    [
        ("/", b"", "unsafe member name: an absolute path, a drive or a backslash"),
        ("0/", b"x", "a folder entry that holds 1 bytes"),
        ("provenance/", b"hidden", "a folder entry that holds 6 bytes"),
    ],
    ids=["folder-named-root", "folder-with-bytes", "bundle-folder-with-bytes"],
)
def test_a_folder_entry_named_root_or_holding_bytes_is_refused(
    bundle: SyntheticBundle, tmp_path: Path, extra: str, data: bytes, problem: str
) -> None:
    """A zip folder entry "/" (unpacked: the filesystem's root) or one that carries bytes (unpacked, they vanish):
    found by the archive fuzzing, each passed as the archive's own top folder or a plain folder."""
    archive = _zip(tmp_path / "bundle.zip", [(extra, data), *_files(bundle)])
    assert zipfile.ZipFile(archive).getinfo(extra).is_dir()
    verdict, problems = _verdict(bundle, archive)
    assert verdict == "fail" and problem in problems


def test_a_tar_of_absolute_names_is_one_line(bundle: SyntheticBundle, tmp_path: Path) -> None:
    archive = tmp_path / "bundle.tar"
    with tarfile.open(archive, "w") as packed:
        for name, data in _files(bundle):
            info = tarfile.TarInfo("/" + name)  # tarfile strips a leading / only when it makes the name itself
            info.size = len(data)
            packed.addfile(info, io.BytesIO(data))
    with tarfile.open(archive) as packed:
        assert packed.getnames()[0].startswith("/")
    code, line = _cli(bundle, archive)
    assert code == 2 and "\n" not in line
    assert "no provenance/statement.json in the archive under a safe name (member '/" in line
    assert line.endswith("an absolute path, a drive or a backslash): expected the archive of one bundle")


def test_an_absolute_tar_name_beside_the_bundle_is_refused(bundle: SyntheticBundle, tmp_path: Path) -> None:
    archive = tmp_path / "bundle.tar"
    with tarfile.open(archive, "w") as packed:
        for name, data in [*_files(bundle), ("/etc/cron.d/beside", b"* * * * * root true\n")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            packed.addfile(info, io.BytesIO(data))
    verdict, problems = _verdict(bundle, archive)
    assert verdict == "fail" and problems == {"unsafe member name: an absolute path, a drive or a backslash"}


@pytest.mark.parametrize("suffix", ["zip", "tar"])
def test_a_file_that_is_both_a_tar_and_a_zip_is_one_line(bundle: SyntheticBundle, tmp_path: Path, suffix: str) -> None:
    """The zip holds the signed bundle, the tar in front of it something else: each tool would unpack another."""
    signed = _zip(tmp_path / "signed.zip", _files(bundle)).read_bytes()
    other = io.BytesIO()
    with tarfile.open(fileobj=other, mode="w") as packed:
        info = tarfile.TarInfo("results.csv")
        info.size = 4
        packed.addfile(info, io.BytesIO(b"x,y\n"))
    archive = tmp_path / f"bundle.{suffix}"
    archive.write_bytes(other.getvalue() + signed)
    assert zipfile.is_zipfile(archive) and tarfile.is_tarfile(archive)
    code, line = _cli(bundle, archive)
    assert code == 2 and "\n" not in line
    assert line.endswith(
        "not a bundle archive: it is both a tar and a zip archive (tar and unzip would see different files)"
    )


def test_a_zip_after_other_data_is_one_line(bundle: SyntheticBundle, tmp_path: Path) -> None:
    archive = tmp_path / "bundle.zip"
    archive.write_bytes(b"\x1f\x8b" + bytes(600) + _zip(tmp_path / "signed.zip", _files(bundle)).read_bytes())
    code, line = _cli(bundle, archive)
    assert code == 2 and "its zip archive starts after other data" in line and "\n" not in line


def test_a_corrupt_deflate_stream_is_one_line(bundle: SyntheticBundle, tmp_path: Path) -> None:
    archive = _zip(tmp_path / "bundle.zip", _files(bundle))
    info = zipfile.ZipFile(archive).getinfo("results.csv")
    data = bytearray(archive.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start : start + 24] = bytes(byte ^ 0xFF for byte in data[start : start + 24])
    archive.write_bytes(bytes(data))
    with pytest.raises(zlib.error):  # what zipfile itself raises on it
        zipfile.ZipFile(archive).read("results.csv")
    code, line = _cli(bundle, archive)
    assert code == 2 and "\n" not in line
    assert "not a readable zip or tar archive: Error -3 while decompressing data" in line


ZEROS = 64 << 20  # what the hidden member inflates to (its bzip2 stream is about 100 bytes)


def _declare(path: Path, name: str, size: int) -> None:
    """Patch the uncompressed size the zip declares for ``name``, in its local header and its central directory."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info, position = archive.getinfo(name), archive.start_dir
    data[info.header_offset + 22 : info.header_offset + 26] = size.to_bytes(4, "little")
    while True:
        position = data.index(b"PK\x01\x02", position)
        length, extra, comment = struct.unpack("<HHH", data[position + 28 : position + 34])
        if data[position + 46 : position + 46 + length] == name.encode():
            data[position + 24 : position + 28] = size.to_bytes(4, "little")
            break
        position += 46 + length + extra + comment
    path.write_bytes(bytes(data))


def _peak_bytes(path: Path) -> int:
    """The peak of Python and NumPy allocations while the archive is listed and read."""
    tracemalloc.start()
    with contextlib.suppress(InputError):  # what it says is asserted elsewhere; here only what it costs
        bundle_source.BundleArchive(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def test_a_member_whose_declared_size_hides_what_it_inflates_to_is_never_inflated(
    bundle: SyntheticBundle, tmp_path: Path
) -> None:
    """zipfile returns no more than the declared size but inflates a bzip2 or LZMA chunk whole: 64 MiB of zeros
    declared as 1,000 bytes cost 141 MiB of allocations before it was cut (a 4 GiB one, gigabytes). Only stored and
    deflate members (inflated within the bound) are read."""
    archive = tmp_path / "bundle.zip"
    _zip(archive, _files(bundle))
    info = zipfile.ZipInfo("notes.bin")
    info.compress_type, info.external_attr = zipfile.ZIP_BZIP2, 0o100644 << 16  # a regular file, as `zip` writes
    with zipfile.ZipFile(archive, "a") as packed:
        packed.writestr(info, bytes(ZEROS))
    _declare(archive, "notes.bin", 1000)
    assert zipfile.ZipFile(archive).getinfo("notes.bin").file_size == 1000
    assert _peak_bytes(archive) < 16 << 20
    verdict, problems = _verdict(bundle, archive)
    assert verdict == "fail"
    assert "compressed with zip method 12, not stored or deflate (not read)" in problems


def test_a_member_declared_at_4_gib_is_refused_on_its_declaration(bundle: SyntheticBundle, tmp_path: Path) -> None:
    archive = _zip(tmp_path / "bundle.zip", [*_files(bundle), ("notes.bin", bytes(1 << 20))])
    _declare(archive, "notes.bin", (4 << 30) - 1)
    assert _peak_bytes(archive) < 16 << 20
    code, line = _cli(bundle, archive)
    assert code == 2 and "\n" not in line
    assert line.endswith(f"bytes, more than {bundle_source.MAX_ARCHIVE_BYTES}")


def test_the_bounds_keep_a_bundle_read_into_memory_under_2_gb() -> None:
    assert bundle_source.MAX_MEMBER_BYTES <= bundle_source.MAX_ARCHIVE_BYTES <= 1 << 30


def _extended_header(size: int) -> bytes:
    """One PAX extended header block declaring ``size`` bytes of attributes (none follow)."""
    info = tarfile.TarInfo("././@PaxHeader")
    info.size = size
    block = bytearray(info.tobuf(tarfile.USTAR_FORMAT))
    block[156:157] = tarfile.XHDTYPE
    block[148:156] = b"        "
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


@pytest.mark.parametrize("suffix", ["tar", "tar.gz"])
def test_a_tar_header_declaring_gigabytes_is_refused_before_it_is_read(
    bundle: SyntheticBundle, tmp_path: Path, suffix: str
) -> None:
    """tarfile reads a PAX or GNU long-name header whole, allocating what it declares: 1.5 GiB here."""
    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w") as archive:
        for name, data in _files(bundle):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    body = _extended_header(3 << 29) + packed.getvalue()
    archive_path = tmp_path / f"bundle.{suffix}"
    archive_path.write_bytes(gzip.compress(body) if suffix.endswith("gz") else body)
    assert _peak_bytes(archive_path) < 16 << 20
    code, line = _cli(bundle, archive_path)
    assert code == 2 and "\n" not in line
    assert line.endswith(f"an extended tar header declares {3 << 29} bytes, more than {bundle_source.MAX_HEADER_BYTES}")
