"""Every path ``interbias`` opens is checked to be what it must be before it is read: a roster, configuration or
folder option that names a FIFO, ``/dev/zero``, a folder for a file, a file for a folder or a dangling link is one
line naming the option (or the configuration's key), exit 2, never a hang, never gigabytes, never the resume advice
of a file system failure (issue 44, point 3)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.cli import app

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "configs" / "default.toml"
MEMORY_BOUND = 1 << 30  # address space of the child: /dev/zero read whole would pass it at once


def _hostile(tmp_path: Path, kind: str) -> Path:
    """A path of the hostile ``kind`` under ``tmp_path``: fifo, zero (the device), folder, file, dangling."""
    path = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        return Path("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    elif kind == "file":
        path.write_text("not a folder\n")
    elif kind == "dangling":
        path.symlink_to(tmp_path / "absent")
    return path


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BOUND, MEMORY_BOUND))


def _interbias(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command line in a child bounded in time and memory: a hang or a runaway read fails the test, not CI."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "INTERBIAS_CACHE": str(cwd / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "runner.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
        preexec_fn=_limited,
    )


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "rerun the same command" not in lines[0] and "run failed" not in lines[0], lines[0]
    return lines[0]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "problem"),
    [
        ("fifo", "is a named pipe (FIFO), not a regular file"),
        ("zero", "is a character device, not a regular file"),
        ("folder", "is a directory"),
        ("dangling", "is a dangling link"),
    ],
)
def test_a_roster_that_is_not_a_regular_file_is_one_line_naming_the_option(
    tmp_path: Path, kind: str, problem: str
) -> None:
    roster = _hostile(tmp_path, kind)
    done = _interbias(["checkpoints", "install", "ecapa-tdnn", "--roster", str(roster), "--into", "ck"], tmp_path)
    assert done.returncode == 2, done.stderr
    assert _one_line(done.stderr) == f"error: --roster {roster}: {problem} (expected an encoder roster (TOML))"
    assert not (tmp_path / "ck").exists()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fifo", "zero", "folder", "dangling"])
def test_a_configurations_roster_that_is_not_a_regular_file_names_its_key(tmp_path: Path, kind: str) -> None:
    roster = _hostile(tmp_path, kind)
    config = tmp_path / "run.toml"
    config.write_text(DEFAULT.read_text().replace('roster = "encoders.toml"', f'roster = "{roster}"'))
    done = _interbias(["plan", str(config)], tmp_path)
    assert done.returncode == 2, done.stderr
    line = _one_line(done.stderr)
    assert line.startswith(f"error: {config}: encoders.roster: {roster}: "), line
    assert line.endswith("(expected a file)"), line


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fifo", "zero", "folder", "dangling"])
def test_a_configuration_that_is_not_a_regular_file_is_one_line(tmp_path: Path, kind: str) -> None:
    config = _hostile(tmp_path, kind)
    done = _interbias(["plan", str(config)], tmp_path)
    assert done.returncode == 2, done.stderr
    assert _one_line(done.stderr).startswith(f"error: {config}: "), done.stderr


@pytest.mark.parametrize(
    ("kind", "problem"),
    [
        ("file", "cannot write here: it is not a folder"),
        ("dangling", "cannot write here: it is a dangling link, not a folder"),
        ("fifo", "cannot write here: it is not a folder"),
    ],
)
def test_checkpoints_install_into_what_is_not_a_folder_is_one_line_naming_into(
    tmp_path: Path, kind: str, problem: str
) -> None:
    into = _hostile(tmp_path, kind)
    wheels = _hostile(tmp_path, "folder")
    result = CliRunner().invoke(app, ["checkpoints", "install", "ecapa-tdnn", "--into", str(into), "--find-links",
                                      str(wheels)])  # fmt: skip
    assert result.exit_code == 2, result.output
    assert _one_line(result.stderr) == f"error: --into {into}: {problem}"


def test_checkpoints_install_into_a_folder_under_a_file_names_the_file(tmp_path: Path) -> None:
    file = _hostile(tmp_path, "file")
    result = CliRunner().invoke(app, ["checkpoints", "install", "ecapa-tdnn", "--into", str(file / "sub")])
    assert result.exit_code == 2, result.output
    assert _one_line(result.stderr) == f"error: --into {file / 'sub'}: cannot write here: {file} is not a folder"


@pytest.mark.parametrize("kind", ["file", "dangling"])
def test_find_links_must_be_a_folder(tmp_path: Path, kind: str) -> None:
    wheels = _hostile(tmp_path, kind)
    result = CliRunner().invoke(
        app, ["checkpoints", "install", "ecapa-tdnn", "--into", str(tmp_path / "ck"), "--find-links", str(wheels)]
    )
    assert result.exit_code == 2, result.output
    line = _one_line(result.stderr)
    assert line.startswith(f"error: --find-links {wheels}: ") and line.endswith("(expected a folder of wheels)")
    assert not (tmp_path / "ck").exists()


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda s, p: s.replace('music = "/usr/share/asterisk/moh"', f'music = "{p}"'), "corpora.asterisk.music"),
        (
            lambda s, p: s.replace('root = "$INTERBIAS_CACHE/corpora/asterisk"', f'root = "{p}"'),
            "corpora.asterisk.root",
        ),
        (
            lambda s, p: s.replace('checkpoints_root = "$INTERBIAS_CHECKPOINTS"', f'checkpoints_root = "{p}"'),
            "encoders.checkpoints_root",
        ),
    ],
    ids=["music", "corpus-root", "checkpoints-root"],
)
@pytest.mark.parametrize("kind", ["file", "fifo", "dangling"])
def test_a_configured_folder_that_is_not_one_is_one_line_naming_its_key(
    tmp_path: Path, edit: Callable[[str, Path], str], key: str, kind: str
) -> None:
    from runner.design import load_config
    from schemas import InputError

    path = _hostile(tmp_path, kind)
    config = tmp_path / "run.toml"
    config.write_text(edit(DEFAULT.read_text(), path))
    (tmp_path / "encoders.toml").write_bytes((ROOT / "configs" / "encoders.toml").read_bytes())
    with pytest.raises(InputError) as caught:
        load_config(config)
    assert caught.value.line().startswith(f"{config}: {key}: {path}: "), caught.value.line()
    assert caught.value.line().endswith("(expected a folder)"), caught.value.line()


@pytest.mark.parametrize("kind", ["file", "dangling", "fifo"])
@pytest.mark.parametrize(
    ("command", "option"),
    [
        (["run", str(DEFAULT), "--out", "{path}"], "--out"),
        (["run", str(DEFAULT), "--out", "{tmp}/ok", "--cache", "{path}"], "--cache"),
        (["reproduce", "--dry-run", "--out", "{path}"], "--out"),
        (["corpus", "build", "--out", "{path}/sub"], "--out"),
    ],
    ids=["run-out", "run-cache", "reproduce-out", "corpus-out"],
)
def test_a_folder_to_write_that_cannot_be_one_is_one_line_naming_the_option(
    tmp_path: Path, kind: str, command: list[str], option: str
) -> None:
    path = _hostile(tmp_path, kind)
    args = [part.format(path=path, tmp=tmp_path) for part in command]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    line = _one_line(result.stderr)
    target = next(arg for arg, before in zip(args[1:], args, strict=False) if before == option)
    what = "it is" if target == str(path) else f"{path} is"
    link = "a dangling link, " if kind == "dangling" else ""
    assert line == f"error: {option} {target}: cannot write here: {what} {link}not a folder"
    assert not (tmp_path / "ok").exists()
