"""How many threads the encoders' torch runs and how its idle threads wait (issue 43 point 5).

torch's default is one OpenMP thread per CPU of the affinity mask, and its OpenMP (GNU libgomp) lets a thread that
waits at a barrier spin before it sleeps. On cores that other jobs hold, a spinning thread burns the time slice
its peer needs, so a run's CPU seconds per embedding grew with the load. The runner therefore runs torch with one
thread per core it may actually use (the affinity mask, capped by a cgroup CPU quota, which the mask does not show
in a container) and with ``OMP_WAIT_POLICY=PASSIVE`` (waiting threads sleep at once); ``benchmarks/
bench_shared_cores.py`` measured both, idle and beside a competing load (``benchmarks/RESULTS.md``). A variable the
user set (``OMP_NUM_THREADS``, ``OMP_WAIT_POLICY``) is kept. The wait policy is read once, when libgomp loads with
torch: a run sets it before torch is imported (a process that imported torch before, such as a test session, keeps
libgomp's default; its operator workers, started later, still inherit the variable).
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.encoders import EncoderHandle, EncoderSpec

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")
WAIT_POLICY = "PASSIVE"


def _ancestors(root: Path, own: str) -> list[Path]:
    """``root/own`` and every folder above it up to ``root``."""
    folders = [root]
    for part in (p for p in own.strip("/").split("/") if p):
        folders.append(folders[-1] / part)
    return folders


def _quota(folder: Path) -> float | None:
    """The CPU quota in cores set in ``folder`` (cgroup v2 ``cpu.max`` or v1 ``cpu.cfs_quota_us``), None without."""
    v2 = folder / "cpu.max"
    if v2.is_file():
        quota, _, period = v2.read_text().partition(" ")
        return None if quota.strip() == "max" else int(quota) / int(period)
    v1 = folder / "cpu.cfs_quota_us"
    if v1.is_file():
        quota_us = int(v1.read_text())
        return None if quota_us < 0 else quota_us / int((folder / "cpu.cfs_period_us").read_text())
    return None


def cgroup_quota(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> float | None:
    """The smallest CPU quota, in cores, over this process's cgroup and those above it (v2 unified, or v1's
    ``cpu`` controller); None where none is set or the files are not there."""
    own: dict[str, str] = {}
    if proc_cgroup.is_file():
        for line in proc_cgroup.read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                own[controller] = path
    folders = _ancestors(root, own.get("", "/"))
    for mount in ("cpu", "cpu,cpuacct"):
        folders += _ancestors(root / mount, own.get("cpu", "/"))
    quotas = [quota for quota in map(_quota, folders) if quota is not None]
    return min(quotas) if quotas else None


def available_cores(affinity: set[int] | None = None, quota: float | None = None) -> int:
    """The cores this process may actually use: its affinity mask's size, capped by the quota rounded down (a
    thread more than the quota allows is throttled), and at least one."""
    mask = len(affinity if affinity is not None else os.sched_getaffinity(0))
    return max(1, min(mask, math.floor(quota)) if quota is not None else mask)


def _installed_torch() -> Any:
    """torch (imported here if it is installed and not yet imported), or None where it is not installed."""
    if "torch" in sys.modules:
        return sys.modules["torch"]
    return importlib.import_module("torch") if importlib.util.find_spec("torch") is not None else None


@dataclass(frozen=True)
class ThreadPolicy:
    """The encoders' torch threads and OpenMP wait policy, and where the thread count came from."""

    threads: int
    wait_policy: str
    source: str

    @classmethod
    def for_this_machine(cls, cgroup_root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> ThreadPolicy:
        """From the user's ``OMP_NUM_THREADS``/``OMP_WAIT_POLICY`` where set, else the available cores, passive."""
        named = os.environ.get("OMP_NUM_THREADS", "")
        wait = os.environ.get("OMP_WAIT_POLICY", WAIT_POLICY)
        if named.isdigit() and int(named) > 0:
            return cls(int(named), wait, "OMP_NUM_THREADS")
        mask, quota = os.sched_getaffinity(0), cgroup_quota(cgroup_root, proc_cgroup)
        source = f"{len(mask)} CPUs in the affinity mask" + (f", cgroup quota {quota:g} cores" if quota else "")
        return cls(available_cores(mask, quota), wait, source)

    def apply(self) -> dict[str, Any]:
        """Set the wait policy in this process's environment before torch is imported (libgomp reads it when it
        loads; the operator workers inherit it); returns ``describe()``."""
        os.environ.setdefault("OMP_WAIT_POLICY", self.wait_policy)
        return self.describe()

    def loader(self, load: Callable[[EncoderSpec, str], EncoderHandle]) -> Callable[[EncoderSpec, str], EncoderHandle]:
        """``load`` with torch's thread count set first, so that each encoder's record carries it; where torch is
        not installed (the light install's NumPy encoders) there is nothing to set. The variable
        ``OMP_NUM_THREADS`` is left alone: it is part of a stored record's key."""

        def threaded(spec: EncoderSpec, device: str) -> EncoderHandle:
            torch = _installed_torch()
            if torch is not None:
                torch.set_num_threads(self.threads)
            return load(spec, device)

        return threaded

    def describe(self) -> dict[str, Any]:
        """The policy as environment.json records it."""
        return {"torch_threads": self.threads, "omp_wait_policy": self.wait_policy, "threads_from": self.source}
