"""Property-based rosters, configured folders and weight folders of every kind a file system holds (issue 44).

Whatever stands at a roster path, a configuration's roster, music or checkpoints-root key, or a weight folder and its
files (a regular file or folder, a FIFO, a character device, a dangling link, a link to any of them, nothing, a
path under a file), the invariants are: what it must be, honestly shaped, loads; anything else is one ``InputError``
naming the path (and the key, in a configuration), never a hang (a FIFO is never opened), never a read of a device,
never another exception.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runner.design import load_config
from runner.encoders.checkpoint import require_folder, require_regular_files
from runner.encoders.roster import load_roster
from runner.encoders.weights import WeightFile, WeightsPin, verify_installed
from schemas import InputError
from tests.fuzzing import examples

ROOT = Path(__file__).resolve().parents[3]
ROSTER = ROOT / "configs" / "encoders.toml"
DEFAULT = ROOT / "configs" / "default.toml"
FUZZ = settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
# The embedded default without its countermeasure, whose loader needs torch: the paths are what is under test.
DEFAULT_TEXT = re.sub(r"(?ms)^\[countermeasure\].*?(?=^\[)", "", DEFAULT.read_text())
KINDS = ("file", "folder", "fifo", "device", "dangling", "missing", "under-a-file")


def _place(folder: Path, name: str, kind: str, via_link: bool, content: bytes | None = None) -> Path:
    """``folder/name`` made as ``kind`` (a file holds ``content``), or a link to one made beside it."""
    target = folder / f".target-{name}" if via_link else folder / name
    if kind == "file":
        target.write_bytes(content or b"")
    elif kind == "folder":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "device":
        target = Path("/dev/null")  # a character device: nothing to make
        if not via_link:
            return target
    elif kind == "dangling":
        (folder / name).symlink_to(folder / "nothing-here")
        return folder / name
    elif kind == "missing":
        return folder / name
    elif kind == "under-a-file":
        (folder / "a-file").write_bytes(b"x")
        return folder / "a-file" / name
    if via_link:
        (folder / name).symlink_to(target)
    return folder / name


@pytest.mark.timeout(120)  # a FIFO opened for reading would block: the bound turns a hang into a failure
@FUZZ
@given(kind=st.sampled_from(KINDS), via_link=st.booleans(), where=st.sampled_from(["load", "config"]))
def test_property_a_roster_path_loads_only_as_a_regular_file(
    tmp_path_factory: pytest.TempPathFactory, kind: str, via_link: bool, where: str
) -> None:
    folder = tmp_path_factory.mktemp("roster")
    roster = _place(folder, "encoders.toml", kind, via_link, ROSTER.read_bytes())
    config = folder / "run.toml"
    config.write_text(DEFAULT_TEXT.replace('roster = "encoders.toml"', f'roster = "{roster}"'))
    try:
        if where == "load":
            load_roster(roster, folder / "checkpoints")
        else:
            load_config(config)
    except InputError as error:
        line = error.line()
        assert kind != "file", line
        assert "\n" not in line and str(roster) in line
        if where == "config":
            assert line.startswith(f"{config}: encoders.roster: "), line
        return
    assert kind == "file"


@pytest.mark.timeout(120)
@FUZZ
@given(
    kind=st.sampled_from(KINDS),
    via_link=st.booleans(),
    key=st.sampled_from(["music", "checkpoints_root", "corpus_root"]),
)
def test_property_a_configured_folder_loads_only_as_a_folder(
    tmp_path_factory: pytest.TempPathFactory, kind: str, via_link: bool, key: str
) -> None:
    """The music folder must be there; the checkpoints root and the corpus root may be made later, but what stands
    there already must be a folder."""
    folder = tmp_path_factory.mktemp("folder")
    path = _place(folder, "place", kind, via_link, b"not a folder")
    (folder / "encoders.toml").write_bytes(ROSTER.read_bytes())
    text = DEFAULT_TEXT
    text = {
        "music": text.replace('music = "/usr/share/asterisk/moh"', f'music = "{path}"'),
        "checkpoints_root": text.replace('checkpoints_root = "$INTERBIAS_CHECKPOINTS"', f'checkpoints_root = "{path}"'),
        "corpus_root": text.replace('root = "$INTERBIAS_CACHE/corpora/asterisk"', f'root = "{path}"'),
    }[key]
    config = folder / "run.toml"
    config.write_text(text)
    may_be_absent = key != "music" and kind in ("missing", "under-a-file")
    try:
        load_config(config)
    except InputError as error:
        assert not (kind == "folder" or may_be_absent), error.line()
        assert "\n" not in error.line() and str(path) in error.line(), error.line()
        return
    assert kind == "folder" or may_be_absent


WEIGHTS = {"model.ckpt": b"weights" * 100, "hyperparams.yaml": b"a: 1\n", "sub/label_encoder.txt": b"x 0\n"}


def _pin() -> WeightsPin:
    files = tuple(
        WeightFile(name, f"pkg/{name}", hashlib.sha256(data).hexdigest()) for name, data in sorted(WEIGHTS.items())
    )
    return WeightsPin("fake", "encoder", "pkg", "1.0", "pkg-1.0-py3-none-any.whl", "0" * 64, "up", "rev", "MIT",
                      "fake", files)  # fmt: skip


@pytest.mark.timeout(120)
@FUZZ
@given(
    name=st.sampled_from(sorted(WEIGHTS)),
    kind=st.sampled_from((*KINDS[:5], "changed", "extra", "missing")),
    via_link=st.booleans(),
)
def test_property_a_weight_folder_passes_only_as_pinned(
    tmp_path_factory: pytest.TempPathFactory, name: str, kind: str, via_link: bool
) -> None:
    """One pinned file replaced by another kind (or changed, or missing, or joined by an extra file): refused in one
    line by the check of an installed folder and by the loaders' checks, never opened where it is not a file."""
    folder = tmp_path_factory.mktemp("weights") / "fake"
    (folder / "sub").mkdir(parents=True)
    for other, data in WEIGHTS.items():
        if other != name:
            (folder / other).write_bytes(data)
    if kind == "changed":
        (folder / name).write_bytes(WEIGHTS[name] + b"!")
    elif kind == "extra":
        (folder / name).write_bytes(WEIGHTS[name])
        (folder / "sub" / "extra.bin").write_bytes(b"")
    elif kind != "missing":
        _place(folder / Path(name).parent, Path(name).name, kind, via_link, WEIGHTS[name])
    honest = kind == "file" and not via_link
    try:
        verify_installed(_pin(), folder)
    except InputError as error:
        assert not honest and "\n" not in error.line(), error.line()
    else:
        assert honest
    loaders_refuse = kind in ("folder", "fifo", "device", "dangling", "missing")
    try:
        require_folder(folder, "fake", sorted(WEIGHTS))
        require_regular_files(folder, "fake")
    except InputError as error:
        assert loaders_refuse and "\n" not in error.line(), error.line()
    else:
        assert not loaders_refuse
