"""Per-speaker EERs of the speakers under stress (``audit.statistics.menagerie.speaker_eers``): coverage of their 95 %
bias-corrected intervals by simulation with known truth, per EER variant.

Usage (from the repository root): ``PYTHONPATH=. python benchmarks/bench_speaker_eers.py [--datasets 100]
[--resamples 400] [--methods rocch,interp] [--json]``. The generator of tests/audit/statistics/test_speaker_eers.py:
12 speakers, each with 20 target trials (10 test utterances with their own effects, two enrolment utterances) and 44
non-targets (4 against every other speaker), speaker effects on both sides; the truth is each speaker's population
EER from the normal marginals. Coverage is the share of speaker intervals holding it, with its Monte-Carlo SE (the
speakers of one data set share its draws, so the SE is a little optimistic).
"""

from __future__ import annotations

import argparse
import json
import math
import time

from schemas import EerMethod
from tests.audit.statistics.test_speaker_eers import coverage


def measure(method: str, datasets: int, resamples: int) -> dict[str, object]:
    start = time.perf_counter()
    rate, total = coverage(datasets, resamples, 2000, EerMethod(method))
    return {
        "method": method,
        "datasets": datasets,
        "intervals": total,
        "resamples": resamples,
        "coverage": round(rate, 3),
        "mc_se": round(math.sqrt(rate * (1 - rate) / total), 3),
        "seconds": round(time.perf_counter() - start, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=400)
    parser.add_argument("--methods", default="rocch,interp")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="10 data sets of 100 resamples: a run check")
    args = parser.parse_args()
    if args.quick:
        args.datasets, args.resamples = 10, 100
    rows = []
    for method in args.methods.split(","):
        rows.append(row := measure(method, args.datasets, args.resamples))
        if not args.json:  # a line per variant as it finishes
            print(
                f"{row['method']}: coverage {row['coverage']} (MC SE {row['mc_se']}) over {row['intervals']} speaker "
                f"intervals, {row['datasets']} data sets, {row['resamples']} resamples, {row['seconds']} s",
                flush=True,
            )
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
