"""DET bands (``audit.statistics.det_bands``): pointwise coverage by simulation with known truth, and their cost beside
the EER draws the statistics already make on the same record.

Usage (from the repository root): ``PYTHONPATH=. python benchmarks/bench_det_bands.py [--speakers 30,60]
[--datasets 1000] [--resamples 1000] [--cost-trials 100000] [--json]``. Coverage: per design (speakers, 10 target
and 10 non-target trials each; scores a target ``m + u_s + e``, a non-target ``-m + c_s + c_t + e``, speaker effects
on both sides, the generator of tests/audit/statistics/test_det_bands.py), the share of data sets whose 95 % band
covers the population's miss rate at false-alarm rates 0.05, 0.1 and 0.2 (the truth from the normal marginals), with
its Monte-Carlo SE. Cost: on one record of ``--cost-trials`` trials (half targets) over 300 speakers, the time of
``det_band`` beside that of the interp EER of every draw (``weighted_eers``), the same draws, after a warm-up (the
compiled loops are compiled).
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

from audit.metrics import weighted_eers
from audit.statistics.contrasts import SpeakerDraws
from audit.statistics.det_bands import det_band
from schemas import EerMethod
from tests.audit.statistics.test_det_bands import OPERATING_POINTS, band_coverage, simulate


def coverage(speakers: int, datasets: int, resamples: int) -> dict[str, object]:
    start = time.perf_counter()
    rates = band_coverage(datasets, speakers, 10, resamples, seed=1000 + speakers)
    return {
        "speakers": speakers,
        "datasets": datasets,
        "resamples": resamples,
        "coverage": {f"{p:g}": round(float(r), 3) for p, r in zip(OPERATING_POINTS, rates, strict=True)},
        "mc_se": {
            f"{p:g}": round(math.sqrt(r * (1 - r) / datasets), 3) for p, r in zip(OPERATING_POINTS, rates, strict=True)
        },
        "seconds": round(time.perf_counter() - start, 1),
    }


def cost(trials: int, resamples: int) -> dict[str, object]:
    record = simulate(np.random.default_rng(9), 300, trials // 600)
    draws = SpeakerDraws.of([record.enrol_speaker, record.test_speaker], resamples, 3)
    codes = draws.codes(record.enrol_speaker, record.test_speaker)

    def eers() -> None:
        weighted_eers(record.scores, record.labels, codes[0], draws.weights, codes[1], (EerMethod.INTERP,))

    def band() -> None:
        det_band(record, draws, 0.95)

    timings = {}
    for name, run in (("eer_draws", eers), ("det_band", band)):
        run()  # warm-up: compiled loops, codes
        best = math.inf
        for _ in range(3):
            start = time.perf_counter()
            run()
            best = min(best, time.perf_counter() - start)
        timings[name] = round(best, 3)
    return {"trials": record.scores.size, "resamples": resamples, "seconds": timings,
            "ratio": round(timings["det_band"] / timings["eer_draws"], 2)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speakers", default="30,60")
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--cost-trials", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="30 speakers, 40 data sets, 200 resamples: a run check")
    args = parser.parse_args()
    if args.quick:
        args.speakers, args.datasets, args.resamples, args.cost_trials = "30", 40, 200, 10_000
    results = {
        "cost": cost(args.cost_trials, args.resamples),
        "coverage": [],
    }
    if not args.json:
        print(results["cost"], flush=True)
    for speakers in (int(n) for n in args.speakers.split(",")):
        row = coverage(speakers, args.datasets, args.resamples)
        results["coverage"].append(row)  # type: ignore[attr-defined]
        if not args.json:
            print(row, flush=True)
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
