"""containers/entrypoint.sh run outside the container, with the environment the image sets."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "containers" / "entrypoint.sh"
IMAGE_ENV = {"PYTHONHASHSEED": "0", "CUBLAS_WORKSPACE_CONFIG": ":4096:8", "SOURCE_DATE_EPOCH": "1700000000"}


def fake_interbias(folder: Path) -> Path:
    """A stand-in `interbias` on PATH that records the arguments it was given, one per line."""
    folder.mkdir(exist_ok=True)
    script = folder / "interbias"
    script.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@" > "$RECORD"\n')
    script.chmod(0o755)
    return folder


def run_entrypoint(arguments: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(ENTRYPOINT), *arguments], capture_output=True, text=True, env=env, timeout=60)


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, Path]:
    config = tmp_path / "run config.toml"  # a space, to check the quoting of what it prints
    config.write_text("[run]\n")
    return {"config": config, "out": tmp_path / "bundle", "bin": fake_interbias(tmp_path / "bin"),
            "record": tmp_path / "argv.txt"}  # fmt: skip


def environment(setup: dict[str, Path], **overrides: str) -> dict[str, str]:
    path = f"{setup['bin']}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin"
    return {"PATH": path, "RECORD": str(setup["record"]), **IMAGE_ENV, **overrides}


def test_dry_run_prints_the_command_and_hands_dry_run_on(setup: dict[str, Path]) -> None:
    digest = "sha256:" + "a" * 64
    arguments = [
        "--config",
        str(setup["config"]),
        "--out",
        str(setup["out"]),
        "--image-digest",
        digest,
        "--device",
        "cuda",
        "--dry-run",
    ]
    done = run_entrypoint(arguments, environment(setup))
    assert done.returncode == 0, done.stderr
    would_run = [line for line in done.stdout.splitlines() if line.startswith("entrypoint: would run: ")]
    assert len(would_run) == 1
    assert shlex.split(would_run[0].removeprefix("entrypoint: would run: ")) == [
        "interbias", "reproduce", *[a for a in arguments if a != "--dry-run"]
    ]  # fmt: skip
    assert "entrypoint: python: 3." in done.stdout
    assert "entrypoint: gpu: " in done.stdout
    assert "entrypoint: device: cuda" in done.stdout
    assert setup["record"].read_text().splitlines() == ["reproduce", *arguments]


def test_without_dry_run_it_runs_reproduce_and_prints_nothing_itself(setup: dict[str, Path]) -> None:
    arguments = ["--config", str(setup["config"]), "--out", str(setup["out"])]
    done = run_entrypoint(arguments, environment(setup))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert setup["record"].read_text().splitlines() == ["reproduce", *arguments]


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"CUBLAS_WORKSPACE_CONFIG": ":16:8"}, "CUBLAS_WORKSPACE_CONFIG is ':16:8' (expected ':4096:8')"),
        ({"PYTHONHASHSEED": "random"}, "PYTHONHASHSEED is 'random' (expected '0')"),
        (
            {"SOURCE_DATE_EPOCH": "yesterday"},
            "SOURCE_DATE_EPOCH is 'yesterday' (expected seconds since 1970)",
        ),
    ],
)
def test_wrong_determinism_setting_is_one_line_and_exit_2(
    setup: dict[str, Path], override: dict[str, str], message: str
) -> None:
    done = run_entrypoint(["--config", str(setup["config"]), "--out", str(setup["out"]), "--dry-run"],
                          environment(setup, **override))  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == f"entrypoint: environment variable {message}\n"
    assert not setup["record"].exists()


def test_unset_setting_and_bad_arguments(setup: dict[str, Path]) -> None:
    env = environment(setup)
    del env["CUBLAS_WORKSPACE_CONFIG"]
    done = run_entrypoint(["--config", str(setup["config"]), "--out", str(setup["out"])], env)
    assert (done.returncode, done.stderr) == (
        2, "entrypoint: environment variable CUBLAS_WORKSPACE_CONFIG is not set (expected ':4096:8')\n"
    )  # fmt: skip
    missing = setup["config"].parent / "missing.toml"
    done = run_entrypoint(["--config", str(missing), "--out", str(setup["out"])], environment(setup))
    assert (done.returncode, done.stderr) == (2, f"entrypoint: {missing}: configuration file not found\n")
    done = run_entrypoint([f"--config={setup['config']}"], environment(setup))
    assert (done.returncode, done.stderr) == (2, "entrypoint: no --out given (expected --out DIR)\n")


def test_output_under_a_file_is_refused(setup: dict[str, Path]) -> None:
    """The nearest existing folder above --out must be a writable folder (checked the same way as root)."""
    out = setup["config"] / "bundle"
    done = run_entrypoint(["--config", str(setup["config"]), "--out", str(out)], environment(setup))
    assert (done.returncode, done.stderr) == (
        2, f"entrypoint: {out}: output folder is not writable (checked {setup['config']})\n"
    )  # fmt: skip


@pytest.mark.slow
def test_dry_run_through_the_real_interbias_command(tmp_path: Path) -> None:
    """The entrypoint in front of the project's own `interbias reproduce --dry-run` (from this venv)."""
    interbias = shutil.which("interbias", path=str(Path(sys.executable).parent))
    assert interbias is not None, "the interbias console script is not installed beside this Python"
    config = ROOT / "configs" / "default.toml"
    env = {**os.environ, **IMAGE_ENV, "PATH": f"{Path(interbias).parent}{os.pathsep}{os.environ['PATH']}",
           "INTERBIAS_CACHE": str(tmp_path / "cache")}  # fmt: skip
    done = run_entrypoint(["--config", str(config), "--out", str(tmp_path / "bundle"), "--dry-run"], env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "entrypoint: would run: interbias reproduce --config" in done.stdout
    assert not (tmp_path / "bundle" / "results.csv").exists()
