"""Capture the environment a run executed in, for ``environment.json`` in the bundle.

Everything a reviewer needs to judge whether a rerun can match: Python and every installed distribution, the
OS, CPU and memory, torch/CUDA/cuDNN/GPU/driver and the determinism settings when the run imported torch (its
installed version when it did not), the seeds, the command line, the git commit with a dirty flag and a digest of
the uncommitted diff, the container image digest passed in by the launcher (``sha256:<hex>`` or
``name@sha256:<hex>``, recorded as given), onnxruntime's version and execution providers, and the device the run
asked for with what each encoder ran on. onnxruntime is imported lazily, here only, and torch never, so that
``import provenance`` stays light.
Whatever cannot be determined is written as ``{"available": false, "reason": ...}``, never left out silently.
"""

from __future__ import annotations

import email.parser
import importlib.metadata
import importlib.util
import os
import platform
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from provenance.digests import bytes_digest, file_digest
from schemas import InputError

__all__ = [
    "IMAGE_DIGEST_PATTERN",
    "NVIDIA_DRIVER_FILE",
    "THREAD_ENV_VARS",
    "capture_environment",
    "check_image_digest",
    "installed_version",
]

# A bare content digest, or a repository digest reference as the engine lists it (``RepoDigests``):
# [registry[:port]/]path@sha256:<hex>, path components lowercase as the reference grammar requires.
IMAGE_DIGEST_PATTERN = re.compile(
    r"(?:(?:[a-zA-Z0-9.-]+(?::[0-9]+)?/)?[a-z0-9]+(?:[._-]+[a-z0-9]+)*(?:/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*@)?"
    r"sha256:[0-9a-f]{64}"
)
THREAD_ENV_VARS = (
    "CUBLAS_WORKSPACE_CONFIG",
    "CUDA_VISIBLE_DEVICES",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "PYTHONHASHSEED",
)
NVIDIA_DRIVER_FILE = Path("/proc/driver/nvidia/version")


def _unavailable(reason: str) -> dict[str, Any]:
    return {"available": False, "reason": reason}


def _name_and_version(dist: importlib.metadata.Distribution) -> tuple[str | None, str | None]:
    """The Name and Version headers of a distribution's metadata, as ``dist.metadata`` gives them; only the header
    block is parsed (the long description after it is most of what ``dist.metadata`` spends its time on)."""
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    headers = email.parser.HeaderParser().parsestr(text.partition("\n\n")[0])
    return headers["Name"], headers["Version"]


def _distributions() -> dict[str, Any]:
    """Installed distribution name -> version; names found twice (shadowed installs) are listed apart."""
    versions: dict[str, list[str | None]] = {}
    for dist in importlib.metadata.distributions():
        name, found = _name_and_version(dist)
        if name:
            versions.setdefault(re.sub(r"[-_.]+", "-", name).lower(), []).append(found)
    return {
        "packages": {name: found[0] for name, found in sorted(versions.items())},
        "duplicates": {name: found for name, found in sorted(versions.items()) if len(found) > 1},
    }


def _cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo, or what the platform module says."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _machine() -> dict[str, Any]:
    memory = _memory_bytes()
    return {
        "os": {"system": platform.system(), "release": platform.release(), "version": platform.version()},
        "libc": " ".join(platform.libc_ver()).strip(),
        "cpu": {"model": _cpu_model(), "architecture": platform.machine(), "logical_cores": os.cpu_count()},
        "memory_bytes": memory if memory is not None else _unavailable("sysconf gave no physical page count"),
    }


def _gpu_driver() -> str | dict[str, Any]:
    """The NVIDIA driver version from the kernel module, or nvidia-smi when that file is absent."""
    if NVIDIA_DRIVER_FILE.exists():
        return NVIDIA_DRIVER_FILE.read_text(errors="replace").splitlines()[0].strip()
    try:
        completed = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return _unavailable(f"no {NVIDIA_DRIVER_FILE} and nvidia-smi failed: {error}")
    return completed.stdout.strip().splitlines()[0] if completed.stdout.strip() else _unavailable("empty")


def _torch() -> dict[str, Any]:
    """torch, CUDA, cuDNN, GPUs and the determinism switches as this process has them. A process that never
    imported torch (a run whose embeddings all came from the cache) records the installed version only: importing
    torch here would cost seconds to describe settings that no computation of the run used."""
    if importlib.util.find_spec("torch") is None:
        return _unavailable("torch is not installed")
    if "torch" not in sys.modules:
        return {
            "available": True,
            "imported": False,
            "version": importlib.metadata.version("torch"),
            "reason": "not imported by this process: no computation used it (checkpoints.json holds each "
            "encoder's runtime when it was loaded)",
        }
    import torch

    cuda_available = torch.cuda.is_available()
    info: dict[str, Any] = {
        "available": True,
        "imported": True,
        "version": torch.__version__,
        "cuda_build": torch.version.cuda,
        "cudnn_version": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "cuda_available": cuda_available,
        "gpus": [torch.cuda.get_device_name(index) for index in range(torch.cuda.device_count())]
        if cuda_available
        else [],
        "gpu_driver": _gpu_driver() if cuda_available else _unavailable("CUDA is not available"),
        "determinism": {
            "use_deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
            "deterministic_warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
            "cudnn_enabled": torch.backends.cudnn.enabled,
            "cudnn_deterministic": torch.backends.cudnn.deterministic,
            "cudnn_benchmark": torch.backends.cudnn.benchmark,
            "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
            "cuda_matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
            "num_threads": torch.get_num_threads(),
            "num_interop_threads": torch.get_num_interop_threads(),
        },
    }
    return info


def _onnxruntime() -> dict[str, Any]:
    """onnxruntime's distribution, version and the execution providers this build offers."""
    if importlib.util.find_spec("onnxruntime") is None:
        return _unavailable("onnxruntime is not installed")
    import onnxruntime

    # Both distributions install the same ``onnxruntime`` package: which one is there decides the providers.
    names = [name for name in ("onnxruntime", "onnxruntime-gpu") if installed_version(name) is not None]
    return {
        "available": True,
        "version": onnxruntime.__version__,
        "distributions": names,
        "available_providers": list(onnxruntime.get_available_providers()),
    }


def installed_version(name: str) -> str | None:
    """The installed version of distribution ``name``, None when it is not installed (each caller says so its way)."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_image_digest(image_digest: str) -> str:
    """``image_digest`` itself if it is ``sha256:<64 hex>`` or ``name@sha256:<64 hex>``; else an InputError."""
    if not IMAGE_DIGEST_PATTERN.fullmatch(image_digest):
        raise InputError(
            "image digest",
            f"expected 'sha256:<64 lowercase hex>' or 'name@sha256:<64 lowercase hex>', got {image_digest!r}",
        )
    return image_digest


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, timeout=60, check=True).stdout


def _git_state(repo: Path) -> dict[str, Any]:
    """Commit, dirty flag, and a digest of the uncommitted diff (tracked changes plus untracked files)."""
    try:
        commit = _git(repo, "rev-parse", "HEAD").decode().strip()
        diff = _git(repo, "diff", "HEAD", "--binary")
        untracked = [
            name for name in _git(repo, "ls-files", "--others", "--exclude-standard", "-z").decode().split("\0") if name
        ]
    except (OSError, subprocess.SubprocessError) as error:
        return _unavailable(f"git state of {repo} could not be read: {error}")
    untracked_listing = "".join(
        f"{name}\t{file_digest(repo / name).blake3}\n" for name in sorted(untracked) if (repo / name).is_file()
    )
    dirty = bool(diff) or bool(untracked)
    return {
        "available": True,
        "commit": commit,
        "dirty": dirty,
        "untracked_files": len(untracked),
        # Digest of `git diff HEAD --binary`, then the untracked files' names and BLAKE3 digests.
        "uncommitted_diff": bytes_digest(diff + untracked_listing.encode()).as_dict() if dirty else None,
    }


def capture_environment(
    *,
    seeds: dict[str, int] | list[int],
    command_line: list[str],
    image_digest: str | None = None,
    repo: Path = Path(),
    device: str | None = None,
    dtype: str | None = None,
    execution: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The environment record written as ``environment.json`` (see module docstring for what it holds).

    ``device`` and ``dtype`` are what the run asked for; ``execution`` maps each encoder label to where and in
    what precision it ran (device, dtype, and the onnxruntime execution provider and node placement for exported
    graphs).
    """
    if image_digest is not None:
        check_image_digest(image_digest)
    return {
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": Path(sys.executable).name,  # its name only: the bundle never names a machine's folders
        },
        "distributions": _distributions(),
        "machine": _machine(),
        "torch": _torch(),
        "onnxruntime": _onnxruntime(),
        "execution": {
            "requested_device": device if device is not None else _unavailable("no device passed in"),
            "requested_dtype": dtype if dtype is not None else _unavailable("no dtype passed in"),
            "encoders": execution if execution is not None else _unavailable("no encoder runtimes passed in"),
        },
        "environment_variables": {name: os.environ.get(name) for name in THREAD_ENV_VARS},
        "seeds": seeds,
        "command_line": list(command_line),
        "git": _git_state(Path(repo)),
        "container_image": image_digest if image_digest is not None else _unavailable("no image digest passed in"),
    }
