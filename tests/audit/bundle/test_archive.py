"""A bundle as it is downloaded: a zip (Zenodo archives each release as one) or a tar.gz, verified in place.

The same verdicts and report as on the unpacked folder (compared whole, on a clean and on a damaged bundle), and the
members a folder could not hold, or should not, refused as the folder's rules refuse them.
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from audit.bundle import source as bundle_source
from audit.verify import AuditRequest, verify
from provenance.digests import file_digest
from tests.audit.bundle.bundle_checks import RECORD
from tests.provenance.synthetic_bundle import SyntheticBundle


def _zip(root: Path, path: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(root.rglob("*")):
            if file.is_file():
                archive.write(file, prefix + file.relative_to(root).as_posix())
    return path


def _tar(root: Path, path: Path, prefix: str = "") -> Path:
    with tarfile.open(path, "w:gz" if path.name.endswith("gz") else "w") as archive:
        archive.add(root, arcname=prefix.rstrip("/") or ".")
    return path


def _comparable(report: dict[str, Any]) -> str:
    """The report without what names where the bundle was read from."""
    trust = dict(report["trust"] or {})
    trust.pop("archive", None)
    return json.dumps({**report, "trust": trust}, sort_keys=True)


@pytest.mark.parametrize("pack", ["zip", "tar", "tar.gz", "release.zip"])
@pytest.mark.parametrize("damaged", [False, True], ids=["clean", "damaged"])
def test_an_archive_gives_the_folders_report(bundle: SyntheticBundle, tmp_path: Path, pack: str, damaged: bool) -> None:
    if damaged:
        scores = pd.read_parquet(bundle.root / "scores" / f"{RECORD}.parquet")
        scores.loc[0, "score"] = 9.0
        scores.to_parquet(bundle.root / "scores" / f"{RECORD}.parquet", index=False)
    table = tmp_path / "table.csv"
    shutil.copyfile(bundle.root / "results.csv", table)
    archive = tmp_path / f"bundle.{pack}"
    if pack.endswith("zip"):
        _zip(bundle.root, archive, "interbias-bundle-v1/" if pack.startswith("release") else "")
    else:
        _tar(bundle.root, archive)
    folder = verify(AuditRequest(table, bundle=bundle.root, key=bundle.public_key))
    packed = verify(AuditRequest(table, bundle=archive, key=bundle.public_key))
    assert folder["verdict"] == ("fail" if damaged else "pass")
    assert _comparable(packed) == _comparable(folder)
    digest = file_digest(archive)
    assert packed["trust"]["archive"] == {"path": str(archive), "sha256": digest.sha256, "blake3": digest.blake3}


def _hostile_tar(bundle: SyntheticBundle, path: Path, extra: tarfile.TarInfo, data: bytes = b"") -> Path:
    with tarfile.open(path, "w") as archive:
        archive.add(bundle.root, arcname=".")
        archive.addfile(extra, io.BytesIO(data) if data else None)
    return path


def _member(name: str, kind: bytes, **fields: Any) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    for key, value in fields.items():
        setattr(info, key, value)
    return info


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        (_member("./notes", tarfile.SYMTYPE, linkname="/etc/passwd"), "link pointing outside the bundle"),
        (_member("./dev0", tarfile.CHRTYPE, devmajor=1, devminor=3), "not a regular file (a device, FIFO or socket)"),
        (_member("./fifo", tarfile.FIFOTYPE), "not a regular file (a device, FIFO or socket)"),
        (_member("./a/../../escape.txt", tarfile.REGTYPE, size=3), "unsafe member name: a '..', '.' or empty segment"),
        (_member("./results.csv", tarfile.REGTYPE, size=3), "held 2 times in the archive"),
    ],
    ids=["symlink-out", "device", "fifo", "dot-dot", "duplicate"],
)
def test_members_a_bundle_may_not_hold_are_refused_by_name(
    bundle: SyntheticBundle, tmp_path: Path, extra: tarfile.TarInfo, problem: str
) -> None:
    archive = _hostile_tar(bundle, tmp_path / "bundle.tar", extra, b"abc" if extra.isreg() else b"")
    report = verify(AuditRequest(bundle.root / "results.csv", bundle=archive, key=bundle.public_key))
    assert report["verdict"] == "fail"
    problems = [case["problem"] for flag in report["flags"] for case in flag["details"].get("failures", [])]
    assert problem in problems


def test_an_archive_whose_bundle_would_unpack_beyond_the_bound_is_one_line(
    bundle: SyntheticBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Declared sizes are checked before a byte is decompressed (a few MB of zeros can declare gigabytes)."""
    archive = _zip(bundle.root, tmp_path / "bundle.zip")
    monkeypatch.setattr(bundle_source, "MAX_ARCHIVE_BYTES", 1000)
    from audit.cli import app

    result = CliRunner().invoke(app, ["verify", str(bundle.root / "results.csv"), "--bundle", str(archive)])
    assert result.exit_code == 2
    assert result.stderr.strip().endswith("bytes, more than 1000") and "\n" not in result.stderr.strip()


def test_a_member_larger_than_the_bound_is_never_read(
    bundle: SyntheticBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = _zip(bundle.root, tmp_path / "bundle.zip")
    monkeypatch.setattr(bundle_source, "MAX_MEMBER_BYTES", 20_000)  # the corpus table is larger
    report = verify(AuditRequest(bundle.root / "results.csv", bundle=archive, key=bundle.public_key))
    problems = {case["problem"] for flag in report["flags"] for case in flag["details"].get("failures", [])}
    assert any(problem.endswith("more than 20000 (not read)") for problem in problems)
    assert report["verdict"] == "fail"


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda b, p: p.write_bytes(b"PK\x03\x04 not a zip"), "not a readable zip or tar archive"),
        (lambda b, p: _zip(b.root / "scores", p), "no provenance/statement.json in the archive"),
        (
            lambda b, p: (_zip(b.root, p), zipfile.ZipFile(p, "a").writestr("copy/provenance/statement.json", "{}")),
            "2 provenance/statement.json in the archive",
        ),
    ],
    ids=["not-an-archive", "no-bundle", "two-bundles"],
)
def test_an_archive_that_holds_no_one_bundle_is_one_line(
    bundle: SyntheticBundle, tmp_path: Path, make: Any, problem: str
) -> None:
    archive = tmp_path / "bundle.zip"
    make(bundle, archive)
    from audit.cli import app

    result = CliRunner().invoke(app, ["verify", str(bundle.root / "results.csv"), "--bundle", str(archive)])
    assert result.exit_code == 2 and problem in result.stderr and len(result.stderr.strip().splitlines()) == 1
