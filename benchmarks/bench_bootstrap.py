"""Speaker-cluster bootstrap throughput: ``audit.statistics.bootstrap_contrast``.

1,000 resamples of one contrast over 4 x 50,000 trials, two-way (enrolment and test speakers both resampled;
DESIGN.md section 8: under 5 s on 2 cores).

Usage: ``python benchmarks/bench_bootstrap.py [--trials 50000] [--speakers 1000] [--resamples 1000]
[--eer-method interp|legacy] [--repeats 1] [--json]``. Scores are float32 cosines with a speaker effect on
targets; the four terms share labels and enrolment speakers, as in a bundle. Wall clock and CPU (process)
time are both shown: on a shared machine the CPU time is the stable figure. The best of ``--repeats`` runs is shown.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from audit.statistics.contrasts import ContrastInput, bootstrap_contrast
from audit.table.contrasts import TERMS


def _contrast(n_trials: int, n_speakers: int) -> ContrastInput:
    rng = np.random.default_rng(20261130)
    clusters = rng.integers(0, n_speakers, n_trials)
    labels = (rng.random(n_trials) < 0.25).astype(np.int8)
    test = np.where(labels == 1, clusters, (clusters + rng.integers(1, n_speakers, n_trials)) % n_speakers)
    speaker_effect = rng.normal(0.0, 0.05, n_speakers)[clusters]
    scores = {
        term: rng.normal(0.1 + (0.4 - 0.05 * shift + speaker_effect) * labels, 0.15)
        .astype(np.float32)
        .astype(np.float64)
        for shift, term in enumerate(TERMS)
    }
    return ContrastInput({"benchmark": "bootstrap"}, "bench", scores, labels, clusters, test_speakers=test)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=50_000)
    parser.add_argument("--speakers", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--eer-method", choices=["interp", "legacy", "rocch"], default="interp")
    parser.add_argument("--repeats", type=int, default=1, help="runs; the best is shown")
    parser.add_argument("--json", action="store_true", help="also print one JSON line with the figures")
    parser.add_argument("--quick", action="store_true", help="5,000 trials, 100 speakers, 100 resamples")
    args = parser.parse_args()
    if args.quick:
        args.trials, args.speakers, args.resamples = 5_000, 100, 100
    contrast = _contrast(args.trials, args.speakers)
    wall = cpu = float("inf")
    for _ in range(args.repeats):
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        summary = bootstrap_contrast(contrast, n_resamples=args.resamples, seed=1, eer_method=args.eer_method)
        wall = min(wall, time.perf_counter() - start_wall)
        cpu = min(cpu, time.process_time() - start_cpu)
        print(f"  run: {time.perf_counter() - start_wall:6.2f} s wall", flush=True)
    ie = summary["estimates"]["ie"]
    print(
        f"{args.resamples:,} resamples of one contrast, 4 x {args.trials:,} trials, "
        f"{args.speakers:,} speakers, {args.eer_method} EER"
    )
    print(f"  wall {wall:6.2f} s   cpu {cpu:6.2f} s   (target < 5 s)")
    print(f"  IE {ie['estimate']:+.4f}  95 % interval [{ie['low']:+.4f}, {ie['high']:+.4f}]")
    if args.json:
        figures = {
            "trials_per_term": args.trials,
            "speakers": args.speakers,
            "resamples": args.resamples,
            "eer_method": args.eer_method,
            "seconds": {"wall": wall, "cpu": cpu},
        }
        print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()
