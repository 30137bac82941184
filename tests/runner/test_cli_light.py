"""``interbias`` on the light install and its help: one line naming the [runner] extra instead of a traceback,
``--version``, and the exit codes in every command's ``--help``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
# torch and soundfile made unimportable, as on an install without the [runner] extra.
WITHOUT_RUNNER_EXTRA = """
import sys

class Unimportable:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {"torch", "soundfile"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, Unimportable())
from runner.cli import app
app(sys.argv[1:], prog_name="interbias")
"""


@pytest.mark.slow
@pytest.mark.parametrize("args", [["run", "c.toml", "--out", "o"], ["reproduce", "--dry-run"], ["corpus", "build"]])
def test_without_the_runner_extra_one_line_names_it(tmp_path: Path, args: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_RUNNER_EXTRA, *args], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "pip install 'interbias-sv[runner]'" in lines[0]
    assert "no module named 'soundfile'" in lines[0] or "no module named 'torch'" in lines[0]


@pytest.mark.parametrize(
    ("module", "commands"),
    [
        (
            "runner.cli",
            [[], ["run"], ["rehearse"], ["reproduce"], ["corpus"], ["corpus", "build"], ["corpus", "check"]],
        ),
        ("audit.cli", [[], ["verify"], ["scores"], ["keygen"]]),
    ],
)
def test_every_help_states_the_exit_codes_and_version_is_offered(module: str, commands: list[list[str]]) -> None:
    app = __import__(module, fromlist=["app"]).app
    runner = CliRunner()
    for command in commands:
        result = runner.invoke(app, [*command, "--help"], terminal_width=200)
        assert result.exit_code == 0, (command, result.output)
        assert "Exit codes: 0" in result.output, command
    version = runner.invoke(app, ["--version"])
    assert version.exit_code == 0
    assert version.stdout.startswith(("audit (interbias-sv) ", "interbias (interbias-sv) "))


def test_reproduce_reads_its_claims_before_running(tmp_path: Path) -> None:
    from runner.cli import app

    runner = CliRunner()
    good = runner.invoke(app, ["reproduce", "--dry-run", "--claims", str(ROOT / "examples" / "claims.toml")])
    assert good.exit_code == 0, good.output
    assert "and 8 claims of" in good.stderr + good.stdout
    bad = tmp_path / "claims.toml"
    bad.write_text('[[claim]]\nid = "x"\n')
    refused = runner.invoke(app, ["reproduce", "--dry-run", "--claims", str(bad)])
    assert refused.exit_code == 2
    assert refused.stderr.strip() == f"error: {bad}: [[claim]] number 1: missing 'table'"


def test_reproduce_builds_the_default_corpus_and_its_world_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default configuration names its corpus and the WORLD proxy made from it (D05): a dry run says it would
    build both into the cache (nothing is built)."""
    from runner.cli import app

    monkeypatch.setenv("INTERBIAS_CACHE", str(tmp_path / "cache"))
    result = CliRunner().invoke(app, ["reproduce", "--config", str(ROOT / "configs" / "default.toml"), "--dry-run"])
    assert result.exit_code == 0, result.output
    said = result.stderr + result.stdout
    assert f"would build (or reuse) the default corpus in {tmp_path / 'cache' / 'corpora' / 'asterisk'}" in said
    assert f"would build (or reuse) its WORLD proxy in {tmp_path / 'cache' / 'corpora' / 'world-proxy'}" in said
    assert not (tmp_path / "cache" / "corpora").exists()


@pytest.mark.parametrize("device", ["gpu", "cuda:x", "cpu:0", ""])
def test_a_device_that_is_none_is_refused_as_an_option_value(device: str) -> None:
    """One usage line naming the option, before any configuration or encoder is read."""
    from runner.cli import app

    result = CliRunner().invoke(app, ["run", str(ROOT / "configs" / "default.toml"), "--out", "x", "--device", device])
    text = " ".join(result.output.replace("\u2502", " ").split())  # rich's error box, unwrapped
    assert result.exit_code == 2
    assert f"Invalid value for '--device': {device!r} is not a device: expected cpu, cuda or cuda:N" in text


@pytest.mark.parametrize(("module", "program"), [("audit", "audit"), ("runner", "interbias")])
def test_python_dash_m_runs_each_command_line(module: str, program: str) -> None:
    """For an environment whose scripts folder is not on PATH."""
    done = subprocess.run([sys.executable, "-m", module, "--version"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.startswith(f"{program} (interbias-sv) "), done.stderr
