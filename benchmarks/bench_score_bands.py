"""What a DET band costs `audit scores --out` beside the intervals it shares its draws with.

Usage: ``python benchmarks/bench_score_bands.py [--trials N] [--resamples R] [--quick]``. Synthetic trials (1,251
speakers, 1 % targets, scores to 5 decimals, two-way speaker codes); one call of the three EER variants' bracketed
loops (``audit.metrics.weighted_eers``, what the intervals cost) beside one ``audit.statistics.pointwise_band`` on the
same draws, CPU seconds, each after a warm-up call (the kernels compiled or loaded). ``--quick``: 20,000 trials.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from audit.metrics import weighted_eers
from audit.statistics import draw_cluster_weights, pointwise_band


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1_000_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="20,000 trials: a check that the script runs")
    args = parser.parse_args()
    n, speakers = (20_000 if args.quick else args.trials), 1251
    rng = np.random.default_rng(0)
    enrol, test = rng.integers(0, speakers, n), rng.integers(0, speakers, n)
    labels = rng.random(n) < 0.01
    test[labels] = enrol[labels]
    scores = np.round(rng.normal(labels * 2.0, 1.0), 5)
    partners = np.where(test == enrol, speakers, test)
    weights = draw_cluster_weights(speakers, args.resamples, 0)
    print(f"{n:,} trials, {args.resamples} two-way draws; load average {os.getloadavg()[0]:.2f}", flush=True)
    for name, call in (
        ("three EER variants (the intervals)", lambda k: weighted_eers(scores[:k], labels[:k].astype(np.int64),
                                                                       enrol[:k], weights, partners[:k])),
        ("DET band (pointwise_band)", lambda k: pointwise_band(scores[:k], labels[:k], weights, enrol[:k],
                                                               partners[:k], 0.95)),
    ):  # fmt: skip
        call(1000)  # warm-up: kernels loaded
        start = time.process_time()
        call(n)
        print(f"{name:40s} {time.process_time() - start:6.2f} s CPU", flush=True)


if __name__ == "__main__":
    main()
