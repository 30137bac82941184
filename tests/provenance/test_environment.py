"""Environment capture: git state against git itself, packages against importlib, torch when present."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from provenance.environment import capture_environment
from schemas.errors import InputError

IMAGE = "sha256:" + "ab" * 32


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "t@example.org")
    _git(tmp_path, "config", "user.name", "t")
    (tmp_path / "a.txt").write_text("one\n")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "commit", "-q", "-m", "one")
    return tmp_path


def test_clean_repo_and_run_facts(repo: Path) -> None:
    env = capture_environment(seeds={"global": 7}, command_line=["interbias", "run"], image_digest=IMAGE, repo=repo)
    assert env["git"]["commit"] == _git(repo, "rev-parse", "HEAD").decode().strip()
    assert env["git"]["dirty"] is False and env["git"]["uncommitted_diff"] is None
    assert env["seeds"] == {"global": 7} and env["command_line"] == ["interbias", "run"]
    assert env["container_image"] == IMAGE
    assert env["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    assert env["python"]["executable"] == Path(sys.executable).name  # its name: no machine's folder is recorded
    assert env["distributions"]["packages"]["numpy"] == importlib.metadata.version("numpy")
    assert env["machine"]["cpu"]["logical_cores"] > 0
    torch = env["torch"]
    if torch["available"] and torch["imported"]:
        import torch as torch_module

        assert torch["version"] == torch_module.__version__
        assert torch["determinism"]["use_deterministic_algorithms"] == (
            torch_module.are_deterministic_algorithms_enabled()
        )
        assert torch["determinism"]["num_threads"] == torch_module.get_num_threads()
    json.dumps(env)  # serialisable as is


@pytest.mark.every_install  # skipped on the light install: it needs torch installed
def test_a_process_that_never_imported_torch_records_its_version_without_importing_it(repo: Path) -> None:
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    code = (
        "import json, sys; from provenance.environment import capture_environment; "
        "print(json.dumps([capture_environment(seeds=[1], command_line=['x'])['torch'], 'torch' in sys.modules]))"
    )
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    torch, imported = json.loads(result.stdout)
    assert imported is False and torch["imported"] is False
    assert torch["version"] == importlib.metadata.version("torch") and "determinism" not in torch


def test_dirty_diff_digest_is_the_digest_of_git_diff(repo: Path) -> None:
    (repo / "a.txt").write_text("two\n")
    env = capture_environment(seeds=[1], command_line=["x"], repo=repo)
    diff = _git(repo, "diff", "HEAD", "--binary")
    assert env["git"]["dirty"] is True
    assert env["git"]["uncommitted_diff"]["sha256"] == hashlib.sha256(diff).hexdigest()
    (repo / "new.txt").write_text("untracked\n")
    with_untracked = capture_environment(seeds=[1], command_line=["x"], repo=repo)
    assert with_untracked["git"]["untracked_files"] == 1
    assert with_untracked["git"]["uncommitted_diff"] != env["git"]["uncommitted_diff"]


def test_not_a_repository_is_said_plainly(tmp_path: Path) -> None:
    env = capture_environment(seeds=[1], command_line=["x"], repo=tmp_path / "nowhere")
    assert env["git"]["available"] is False and env["git"]["reason"]
    assert env["container_image"]["available"] is False


def test_malformed_image_digest_is_refused(repo: Path) -> None:
    with pytest.raises(InputError, match="image digest"):
        capture_environment(seeds=[1], command_line=["x"], image_digest="latest", repo=repo)


@pytest.mark.parametrize(
    "digest",
    [
        IMAGE,
        f"interbias-sv@{IMAGE}",
        f"docker.io/pytorch/pytorch@{IMAGE}",
        f"registry.example.org:5000/team/interbias-sv@{IMAGE}",
    ],
)
def test_both_digest_forms_are_recorded_as_given(repo: Path, digest: str) -> None:
    env = capture_environment(seeds=[1], command_line=["x"], image_digest=digest, repo=repo)
    assert env["container_image"] == digest


@pytest.mark.parametrize(
    "digest",
    [
        "sha256:" + "AB" * 32,  # upper-case hex
        "sha256:" + "ab" * 31,  # short
        f"interbias-sv:latest@sha256:{'ab' * 31}",
        f"Interbias@{IMAGE}",  # repository path must be lower case
        f"@{IMAGE}",
        f"name@{IMAGE}\n",
        "interbias-sv:latest",
    ],
)
def test_malformed_digests_of_either_form_are_refused(repo: Path, digest: str) -> None:
    with pytest.raises(InputError, match="image digest"):
        capture_environment(seeds=[1], command_line=["x"], image_digest=digest, repo=repo)


@pytest.mark.runner
def test_onnxruntime_providers_and_execution_are_recorded(repo: Path) -> None:
    import onnxruntime

    execution = {"rawnet3": {"device": "cpu", "provider": "CPUExecutionProvider"}}
    env = capture_environment(seeds=[1], command_line=["x"], repo=repo, device="cpu", dtype="bf16", execution=execution)
    assert env["onnxruntime"]["available_providers"] == onnxruntime.get_available_providers()
    assert env["onnxruntime"]["version"] == onnxruntime.__version__
    assert env["execution"] == {"requested_device": "cpu", "requested_dtype": "bf16", "encoders": execution}
    bare = capture_environment(seeds=[1], command_line=["x"], repo=repo)
    assert bare["execution"]["requested_device"]["available"] is False
    assert bare["execution"]["requested_dtype"]["available"] is False


def test_importing_the_light_packages_does_not_import_torch() -> None:
    code = (
        "import sys, provenance.environment, provenance.manifest, provenance.dsse, audit.bundle.verification; "
        "sys.exit('torch' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parents[2]).returncode == 0
