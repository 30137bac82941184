"""Property-based archives of one signed synthetic bundle, verified in place by ``audit verify --bundle`` (issue 44).

Honest archives in any shape a packing tool writes (zip stored or deflated, members written from files or by name,
with or without folder entries, in any order, at the top or under one folder; tar plain or gzipped, ustar, GNU or
PAX, with or without a ``./`` prefix) PASS, with the report of the folder. Hostile ones (an extra member of any name,
a byte changed anywhere, the archive cut short) never PASS where they change what is unpacked, and whatever they
are: never a traceback, only the exit codes 0, 1 and 2, nothing written (no ``--out``: the archive is read in place,
never unpacked), and the audit's Python and NumPy allocations (tracemalloc) far below 2 GB. Memory is traced where an
archive can make the audit allocate (the hostile ones: a member of any size or name, a cut or flipped stream); an
honest archive's audit is traced once (tracing triples an audit's CPU: 0.8 -> 2.5 s on the synthetic bundle).
"""

from __future__ import annotations

import io
import json
import random
import tarfile
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from schemas import unsafe_name_reason
from tests.audit.bundle.test_fuzz_mutations import _snapshot
from tests.fuzzing import examples
from tests.provenance.synthetic_bundle import SyntheticBundle, build_bundle

FUZZ = settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
MEMORY_BOUND = 256 << 20  # far below the 2 GB invariant: this audit's traced allocations peak near 2 MiB


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> SyntheticBundle:
    return build_bundle(tmp_path_factory.mktemp("clean"), analysis="equivalence_margin = 0.05\nn_resamples = 20")


def _members(bundle: SyntheticBundle) -> list[tuple[str, bytes]]:
    files = sorted(path for path in bundle.root.rglob("*") if path.is_file())
    return [(path.relative_to(bundle.root).as_posix(), path.read_bytes()) for path in files]


SHAPES = st.fixed_dictionaries(
    {
        "pack": st.sampled_from(["zip-deflated", "zip-stored", "tar", "tar.gz", "tgz"]),
        "prefix": st.sampled_from(["", "interbias-bundle-v1/", "./"]),
        "folders": st.booleans(),
        "by_name": st.booleans(),  # zip: writestr (no Unix file type); tar: a bare TarInfo
        "format": st.sampled_from([tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT]),
        "order": st.randoms(use_true_random=False),
    }
)


def _pack(
    path: Path, members: list[tuple[str, bytes]], shape: dict[str, Any], extra: tuple[str, bytes] | None = None
) -> Path:
    """The members (and, with ``folders``, an entry per folder) in the archive shape ``shape`` names; ``extra`` is
    one more member under its name as given."""
    prefix = "" if shape["prefix"] == "./" and shape["pack"].startswith("zip") else shape["prefix"]
    named = [(prefix + name, data) for name, data in members]
    folders = sorted({name.rsplit("/", 1)[0] + "/" for name, _ in named if "/" in name}) if shape["folders"] else []
    entries: list[tuple[str, bytes | None]] = [(folder, None) for folder in folders] + list(named)
    shape["order"].shuffle(entries)
    entries += [extra] if extra is not None else []
    if shape["pack"].startswith("zip"):
        method = zipfile.ZIP_DEFLATED if shape["pack"] == "zip-deflated" else zipfile.ZIP_STORED
        with zipfile.ZipFile(path, "w", method) as archive:
            for name, data in entries:
                if shape["by_name"]:  # ZipFile.writestr(name): mode 0o600, no file type
                    archive.writestr(name, data or b"", compress_type=method)
                    continue
                info = zipfile.ZipInfo(name)  # as `zip` records a file's mode
                info.compress_type = method
                info.external_attr = (0o40755 if data is None else 0o100644) << 16
                archive.writestr(info, data or b"")
        return path
    mode = "w:gz" if shape["pack"] in ("tar.gz", "tgz") else "w"
    with tarfile.open(path, mode, format=shape["format"]) as archive:
        for name, data in entries:
            info = tarfile.TarInfo(name.rstrip("/"))
            if data is None:
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
            else:
                info.size = len(data)
                info.mode = 0o644 if not shape["by_name"] else info.mode
                archive.addfile(info, io.BytesIO(data))
    return path


def _audit(bundle: SyntheticBundle, archive: Path, trace: bool = True) -> tuple[int, str, int]:
    """``audit verify --bundle ARCHIVE --key --json``: exit code, stdout, peak traced allocation (0 untraced)."""
    from audit.cli import app

    args = ["verify", str(bundle.root / "results.csv"), "--bundle", str(archive), "--key", str(bundle.public_key)]
    peak = 0
    if trace:
        tracemalloc.start()
    try:
        result = CliRunner().invoke(app, [*args, "--json"])
        if trace:
            _, peak = tracemalloc.get_traced_memory()
    finally:
        if trace:
            tracemalloc.stop()
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.stdout + result.stderr
    assert result.exit_code in (0, 1, 2)
    if result.exit_code == 2:
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    return result.exit_code, result.stdout, peak


SUFFIX = {"zip-deflated": "zip", "zip-stored": "zip", "tar": "tar", "tar.gz": "tar.gz", "tgz": "tgz"}


@pytest.mark.slow
@FUZZ
@given(shape=SHAPES)
def test_property_an_honest_archive_in_any_shape_passes(
    clean: SyntheticBundle, tmp_path_factory: pytest.TempPathFactory, shape: dict[str, Any]
) -> None:
    folder = tmp_path_factory.mktemp("honest")
    archive = _pack(folder / f"bundle.{SUFFIX[shape['pack']]}", _members(clean), shape)
    before = _snapshot(folder)
    code, stdout, _ = _audit(clean, archive, trace=False)
    assert code == 0, stdout[:3000]
    assert json.loads(stdout)["verdict"] == "pass"
    assert _snapshot(folder) == before


@pytest.mark.slow
def test_an_honest_archive_s_audit_allocates_far_below_its_bound(clean: SyntheticBundle, tmp_path: Path) -> None:
    shape = {"pack": "zip-deflated", "prefix": "interbias-bundle-v1/", "folders": True, "by_name": False,
             "format": tarfile.PAX_FORMAT, "order": random.Random(0)}  # fmt: skip
    code, _, peak = _audit(clean, _pack(tmp_path / "bundle.zip", _members(clean), shape))
    assert code == 0
    assert 0 < peak < MEMORY_BOUND


NAMES = st.one_of(
    st.sampled_from(["../beside.txt", "/etc/cron.d/x", "a/../../b", "..\\b", "./../c", "x/./y", "notes.txt"]),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=30),
)
HOSTILE = st.one_of(
    st.tuples(st.just("member"), NAMES, st.booleans()),
    st.tuples(st.just("flip"), st.floats(0, 1, exclude_max=True), st.integers(1, 255)),
    st.tuples(st.just("cut"), st.floats(0, 1, exclude_max=True)),
)


@pytest.mark.slow
@FUZZ
@given(shape=SHAPES, hostile=HOSTILE)
def test_property_a_hostile_archive_never_passes_by_what_it_hides(
    clean: SyntheticBundle, tmp_path_factory: pytest.TempPathFactory, shape: dict[str, Any], hostile: tuple
) -> None:
    folder = tmp_path_factory.mktemp("hostile")
    members = _members(clean)
    path = folder / f"bundle.{SUFFIX[shape['pack']]}"
    if hostile[0] == "member":
        name, beside = hostile[1], hostile[2]
        # at the archive's top (beside the bundle's folder) or inside the bundle's folder
        raw = name if beside else shape["prefix"].removeprefix("./") + name
        archive = _pack(path, members, shape, extra=(raw, b"x"))
        unsafe = unsafe_name_reason(raw.removeprefix("./")) is not None
    else:
        archive = _pack(path, members, shape)
        data = bytearray(archive.read_bytes())
        at = int(hostile[1] * len(data))
        if hostile[0] == "flip":
            data[at] ^= hostile[2]
        else:
            del data[at:]
        archive.write_bytes(bytes(data))
        unsafe = False
    before = _snapshot(folder)
    code, stdout, peak = _audit(clean, archive)
    if unsafe:
        assert code != 0, stdout[:2000]
    assert _snapshot(folder) == before
    assert peak < MEMORY_BOUND
