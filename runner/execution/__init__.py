"""Where a run's embeddings are computed: the work (jobs), this machine's executor (local), a Ray cluster's (ray),
what takes each side from the cache or gives it to one of them (embedder), and the encoders' torch threads
(threads)."""

from runner.execution.embedder import Embedder
from runner.execution.jobs import Degraded, DegradeJob, EmbedJob, EmbedWork, Executor, degrade, embed_realised
from runner.execution.local import LocalExecutor
from runner.execution.ray import RayExecutor
from runner.execution.threads import ThreadPolicy, available_cores, cgroup_quota

__all__ = [
    "DegradeJob",
    "Degraded",
    "EmbedJob",
    "EmbedWork",
    "Embedder",
    "Executor",
    "LocalExecutor",
    "RayExecutor",
    "ThreadPolicy",
    "available_cores",
    "cgroup_quota",
    "degrade",
    "embed_realised",
]
