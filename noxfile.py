"""Project sessions: reproduce (the whole loop), tests, lint, bench.

Every package the project needs is installed from here (Python) or from
``configs/system-packages.txt`` (Debian packages, installed when running as root).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests", "lint"]

ROOT = Path(__file__).parent
PYTHON = "3.11"
SYSTEM_PACKAGES = ROOT / "configs" / "system-packages.txt"


def _missing_system_packages() -> list[str]:
    """Debian packages from SYSTEM_PACKAGES that dpkg does not report as installed."""
    wanted = [
        line.split("#")[0].strip() for line in SYSTEM_PACKAGES.read_text().splitlines() if line.split("#")[0].strip()
    ]
    status = Path("/var/lib/dpkg/status").read_text(errors="replace") if shutil.which("dpkg") else ""
    return [name for name in wanted if f"Package: {name}\nStatus: install ok installed" not in status]


def install_system_packages(session: nox.Session) -> None:
    """apt-get the corpus and codec packages the runner needs, once."""
    missing = _missing_system_packages()
    if not missing:
        return
    if os.geteuid() != 0:
        session.error(f"missing Debian packages (install as root): {' '.join(missing)}")
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    session.run("apt-get", "update", "-qq", external=True, env=env)
    session.run("apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing, external=True, env=env)


def install_runner(session: nox.Session) -> None:
    install_system_packages(session)
    session.install("-e", ".[runner,conversion,ray,test]")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The whole test suite (audit, provenance, runner)."""
    install_runner(session)
    session.run("pytest", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff and mypy over the packages."""
    session.install("-e", ".[dev]")
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


@nox.session(python=PYTHON)
def container(session: nox.Session) -> None:
    """Build the pinned image and run the reproduce loop in it with GPUs (Docker + NVIDIA Container Toolkit)."""
    session.install("-e", ".", "docker>=7.1")
    default = ["--config", "configs/default.toml", "--out", "out/container"]
    session.run("python", "-m", "runner.container", *(session.posargs or default))
