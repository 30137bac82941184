"""A ranked record's point EER and bootstrap draws: ``eer`` + ``weighted_eer`` (two sorts, two sets of checks) against
``eer_and_draws`` (the point EER from the draws' sort, compiled: ``record_kernels.record_eer``), per record, in CPU time
(issue 43 point 2).

Usage (from the repository root): ``PYTHONPATH=. python benchmarks/bench_point_eer_sort.py [--records 200]
[--resamples 1000] [--quick]``. Records as the paper bundle's rankings hold them: 24 to 3,145 trials around a median of
137 (log-normal), float32 scores rounded to 3 decimals (ties), 40 speakers. Each call's best of 5 ``process_time``;
the median over records.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from audit.metrics import ResampleWeights, eer, eer_and_draws, weighted_eer
from audit.metrics.record_kernels import INTERP, LEGACY, ROCCH, record_eer
from audit.metrics.weighted_roc import SortedTrials
from schemas import EER_METHODS, EerMethod

FloatArray = NDArray[np.float64]

SPEAKERS = 40
METHOD_CODES = {EerMethod.INTERP: INTERP, EerMethod.LEGACY: LEGACY, EerMethod.ROCCH: ROCCH}  # the kernels' codes


def best_cpu(call: Callable[[], object], repeats: int = 5) -> float:
    """The least CPU seconds of ``repeats`` calls."""
    best = np.inf
    for _ in range(repeats):
        start = time.process_time()
        call()
        best = min(best, time.process_time() - start)
    return best


def record_times(
    scores: FloatArray, labels: NDArray[np.bool_], enrol: NDArray[np.int64], weights: ResampleWeights, method: EerMethod
) -> dict[str, float]:
    """One record's CPU seconds: the point EER by ``eer`` and from a sort made beforehand, then point + draws both
    ways."""
    trials = SortedTrials.of(scores, labels)
    return {
        "eer": best_cpu(lambda: eer(scores, labels, method)),
        "from the sort (compiled)": best_cpu(lambda: record_eer(trials.labels, trials.group_end, METHOD_CODES[method])),
        "eer + draws": best_cpu(
            lambda: (eer(scores, labels, method), weighted_eer(scores, labels, enrol, weights, method))
        ),
        "eer_and_draws": best_cpu(lambda: eer_and_draws(scores, labels, method, enrol, None, weights)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="10 records of 100 resamples: checks the script runs")
    args = parser.parse_args()
    n_records, rows = (10, 100) if args.quick else (args.records, args.resamples)
    rng = np.random.default_rng(0)
    weights = ResampleWeights.of(rng.multinomial(SPEAKERS, np.full(SPEAKERS, 1 / SPEAKERS), size=rows).astype(float))
    records = []
    for _ in range(n_records):
        n = int(np.clip(np.exp(rng.normal(np.log(137), 1.0)), 24, 3145))
        labels = rng.random(n) < 0.5
        labels[:2] = (True, False)
        scores = np.round(rng.normal(labels * 2.0, 1.0), 3).astype(np.float32).astype(np.float64)
        records.append((scores, labels, rng.integers(0, SPEAKERS, n)))
    for method in EER_METHODS:
        eer_and_draws(records[0][0], records[0][1], method, records[0][2], None, weights)  # compiles or loads
        per_record = [record_times(*record, weights, method) for record in records]
        medians = ", ".join(f"{name} {1e3 * np.median([t[name] for t in per_record]):.3f} ms" for name in per_record[0])
        print(f"{method} ({n_records} records, {rows} resamples; median CPU per record): {medians}")


if __name__ == "__main__":
    main()
