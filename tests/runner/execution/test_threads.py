"""The encoders' thread policy: the cores counted from a planted affinity mask and cgroup quota (hand-computed),
what ``apply`` puts in force, and real embeddings unchanged by the thread count (within fp32 reassociation)."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from runner.execution import ThreadPolicy, available_cores, cgroup_quota
from tests.runner.real_weights import weights_absent

ROOT = Path(__file__).resolve().parents[3]


def plant(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_cgroup_v2_quota_is_the_smallest_over_the_own_cgroup_and_its_parents(tmp_path: Path) -> None:
    root = plant(tmp_path / "fs", {"cpu.max": "max 100000\n", "a/cpu.max": "300000 100000\n", "a/b/cpu.max": "max\n"})
    proc = plant(tmp_path, {"cgroup": "0::/a/b\n"}) / "cgroup"
    assert cgroup_quota(root, proc) == 3.0
    (root / "a" / "b" / "cpu.max").write_text("150000 100000\n")
    assert cgroup_quota(root, proc) == 1.5


def test_cgroup_v1_quota_of_the_cpu_controller(tmp_path: Path) -> None:
    job = {"cpu,cpuacct/job/cpu.cfs_quota_us": "250000\n", "cpu,cpuacct/job/cpu.cfs_period_us": "100000\n"}
    root = plant(tmp_path / "fs", job)
    proc = plant(tmp_path, {"cgroup": "5:memory:/other\n4:cpu,cpuacct:/job\n"}) / "cgroup"
    assert cgroup_quota(root, proc) == 2.5
    (root / "cpu,cpuacct" / "job" / "cpu.cfs_quota_us").write_text("-1\n")  # v1's "no quota"
    assert cgroup_quota(root, proc) is None
    assert cgroup_quota(tmp_path / "absent", tmp_path / "absent-cgroup") is None


@pytest.mark.parametrize(
    ("mask", "quota", "cores"),
    [({0, 1, 2, 3}, None, 4), ({0, 1, 2, 3}, 1.5, 1), ({0, 1}, 3.0, 2), (set(range(8)), 3.0, 3), ({5}, 0.5, 1)],
)
def test_available_cores_is_the_mask_capped_by_the_quota_rounded_down(mask: set[int], quota: float, cores: int) -> None:
    assert available_cores(mask, quota) == cores


def test_the_policy_of_a_machine_from_planted_affinity_and_quota(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(6)))
    root = plant(tmp_path / "fs", {"cpu.max": "400000 100000\n"})
    proc = plant(tmp_path, {"cgroup": "0::/\n"}) / "cgroup"
    policy = ThreadPolicy.for_this_machine(root, proc)
    assert (policy.threads, policy.wait_policy) == (4, "PASSIVE")
    assert policy.source == "6 CPUs in the affinity mask, cgroup quota 4 cores"
    assert ThreadPolicy.for_this_machine(tmp_path / "none", proc).threads == 6
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # the user's choice is kept
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert ThreadPolicy.for_this_machine(root, proc) == ThreadPolicy(3, "ACTIVE", "OMP_NUM_THREADS")


def test_apply_sets_the_wait_policy_and_the_loader_torchs_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    described = ThreadPolicy(3, "PASSIVE", "planted").apply()
    assert described == {"torch_threads": 3, "omp_wait_policy": "PASSIVE", "threads_from": "planted"}
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE" and "OMP_NUM_THREADS" not in os.environ
    asked: list[object] = []
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(set_num_threads=asked.append))
    load = ThreadPolicy(3, "PASSIVE", "planted").loader(lambda spec, device: asked.append((spec, device)) or "model")
    assert load("spec", "cpu") == "model" and asked == [3, ("spec", "cpu")]  # the count before the load


@pytest.mark.runner
@pytest.mark.slow
def test_real_embeddings_do_not_depend_on_the_thread_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ECAPA-TDNN and CAM++ on real speech at 1 thread and at the machine's policy: the same vectors up to fp32
    reassociation (the embedding cache key leaves the thread count out on purpose)."""
    torch = pytest.importorskip("torch")
    soundfile = pytest.importorskip("soundfile")
    import pandas as pd

    from runner.corpora.asterisk import build_default_corpus
    from runner.design import default_checkpoints_root
    from runner.encoders import load_roster

    specs = {s.label: s for s in load_roster(ROOT / "configs" / "encoders.toml", default_checkpoints_root())}
    labels = ("ecapa-tdnn", "campplus-zh-en")
    if not all(specs[label].checkpoint.is_dir() for label in labels):
        weights_absent(f"no installed weights for {labels}")
    build_default_corpus(tmp_path, max_per_speaker=1, progress=False)
    waves = [soundfile.read(tmp_path / p, dtype="float32")[0] for p in pd.read_csv(tmp_path / "utterances.csv")["path"]]
    for name in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY"):
        monkeypatch.delenv(name, raising=False)
    before = torch.get_num_threads()
    try:
        for label in labels:
            encoder = specs[label].load()
            ThreadPolicy(1, "PASSIVE", "test").loader(lambda spec, device: None)(specs[label], "cpu")
            one = np.asarray(encoder.embed(waves, 16_000), dtype=np.float64)
            ThreadPolicy.for_this_machine().loader(lambda spec, device: None)(specs[label], "cpu")
            assert torch.get_num_threads() == available_cores(quota=cgroup_quota())
            policy = np.asarray(encoder.embed(waves, 16_000), dtype=np.float64)
            cosine = np.sum(one * policy, 1) / np.linalg.norm(one, axis=1) / np.linalg.norm(policy, axis=1)
            assert np.max(np.abs(one - policy)) < 1e-4 and np.min(cosine) > 1 - 1e-6, label
    finally:
        torch.set_num_threads(before)
