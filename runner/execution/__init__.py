"""Where a run's embeddings are computed: the work (jobs), this machine's executor (local), a Ray cluster's (ray),
and what takes each side from the cache or gives it to one of them (embedder)."""

from runner.execution.embedder import Embedder
from runner.execution.jobs import Degraded, DegradeJob, EmbedJob, EmbedWork, Executor, degrade, embed_realised
from runner.execution.local import LocalExecutor
from runner.execution.ray import RayExecutor

__all__ = [
    "DegradeJob",
    "Degraded",
    "EmbedJob",
    "EmbedWork",
    "Embedder",
    "Executor",
    "LocalExecutor",
    "RayExecutor",
    "degrade",
    "embed_realised",
]
