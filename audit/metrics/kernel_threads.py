"""The threads of the compiled loops (``roc_kernels``, ``sum_kernels``): numba's threading layer, chosen here before
numba starts one, and how many threads the parallel loops run on. Each kernel module imports this one first."""

from __future__ import annotations

import os

import numba

# A bootstrap makes thousands of calls of a few ms: OpenMP's workers spin between them and, on a shared machine,
# took twice the CPU time for the same wall time (measured); numba's own work queue sleeps. A user's
# NUMBA_THREADING_LAYER still wins.
if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"  # type: ignore[attr-defined]


def workers() -> int:
    """Threads the parallel loops run on (``NUMBA_NUM_THREADS``, default the machine's cores)."""
    return int(numba.get_num_threads())


def set_workers(count: int) -> int:
    """Run the parallel loops on ``count`` threads from now on (in this thread, and in processes it forks); returns
    the count before. Here, not through numba directly: this module chooses the threading layer before numba starts
    one (OpenMP's would end every process forked after it)."""
    before = workers()
    numba.set_num_threads(count)
    return before
