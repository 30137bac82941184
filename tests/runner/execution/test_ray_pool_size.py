"""The default size of each encoder label's actor pool on Ray, from hand-counted clusters (no cluster started)."""

from __future__ import annotations

from typing import Any

from runner.execution.ray import CPU_ACTORS_PER_LABEL, gpu_slots, pool_size


def nodes(*resources: tuple[float, float]) -> list[dict[str, Any]]:
    return [{"cpus": cpus, "gpus": gpus} for cpus, gpus in resources]


def test_gpu_pools_share_the_gpu_slots_between_the_labels() -> None:
    cluster = nodes((16, 4), (16, 4), (8, 1))  # 9 GPUs on three nodes
    assert gpu_slots(cluster, 1.0) == 9 and gpu_slots(cluster, 0.5) == 18
    assert gpu_slots(cluster, 0.75) == 5 + 5 + 1  # an actor is never split across nodes: 4 / 0.75 -> 5 per node
    assert pool_size(cluster, 2, 1.0, chunks=1000) == 4  # 9 slots // 2 labels
    assert pool_size(cluster, 12, 0.5, chunks=1000) == 1  # 18 // 12
    assert pool_size(cluster, 3, 0.25, chunks=1000) == 12  # 36 // 3: GPU pools have no cap but the slots


def test_cpu_pools_share_the_cpus_with_a_cap_and_at_least_one_actor() -> None:
    assert pool_size(nodes((1, 0), (1, 0)), 2, 0.0, chunks=100) == 1  # 2 CPUs // 2 labels
    assert pool_size(nodes((8, 0)), 2, 0.0, chunks=100) == 4
    assert pool_size(nodes((64, 0)), 2, 0.0, chunks=100) == CPU_ACTORS_PER_LABEL == 4  # a model copy per actor
    assert pool_size(nodes((2, 0)), 12, 0.0, chunks=100) == 1  # more labels than CPUs: still one each


def test_no_pool_is_larger_than_the_run_has_chunks() -> None:
    assert pool_size(nodes((16, 8)), 1, 1.0, chunks=3) == 3
    assert pool_size(nodes((16, 8)), 1, 1.0, chunks=0) == 1
