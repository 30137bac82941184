"""Coverage of the audit's 95 % intervals per EER variant and speaker count: the table of DESIGN.md section 4.

Usage: ``python benchmarks/coverage_table.py [--speakers 7,15,30,60] [--datasets 1000] [--resamples 1000]
[--workers 2] [--json]``. Each dataset is ``audit.statistics.CoverageDesign`` with speaker effects on both sides
of non-target trials, speaker-by-condition effects and unequal trials per speaker (8 targets and 16 non-targets
per speaker on average, each count drawn within +-60 %), truth in closed form. Per variant (``interp``,
``legacy``, ``rocch``) and speaker count it prints the coverage of the intervals the audit gives (bias-corrected
for a single EER, percentile for IE and the subgroup gap) with its Monte-Carlo standard error, and the
percentile interval's coverage of the single EER on the same draws beside it (the interval the bias correction
replaced). ``--json`` prints the rows as JSON, the literal of ``audit.statistics.coverage.MEASURED_COVERAGE``.
Not a timing: a statistics check too large for the test suite (about 6 minutes on 2 cores at the defaults).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from audit.statistics.coverage import CoverageDesign, simulated_coverage
from schemas.eer_method import EER_METHODS

DESIGN = {"targets_per_speaker": 8, "nontargets_per_speaker": 16, "count_spread": 0.6}
CHUNK = 50  # datasets per task: the tasks' seeds are disjoint, their counts are summed


def _chunk(task: tuple[int, str, int, int, int]) -> dict[str, Any]:
    n_speakers, method, start, n_datasets, n_resamples = task
    design = CoverageDesign(n_speakers, **DESIGN)  # type: ignore[arg-type]
    seed = 1_000_003 * n_speakers + start
    return simulated_coverage(design, n_datasets=n_datasets, n_resamples=n_resamples, eer_method=method, seed=seed)  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speakers", default="7,15,30,60", help="comma-separated speaker counts")
    parser.add_argument("--datasets", type=int, default=1000, help="simulated datasets per cell")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples per dataset")
    parser.add_argument("--workers", type=int, default=2, help="processes")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--quick", action="store_true", help="7 and 15 speakers, 50 data sets, 100 resamples")
    args = parser.parse_args()
    if args.quick:
        args.speakers, args.datasets, args.resamples = "7,15", 50, 100
    speakers = [int(value) for value in args.speakers.split(",")]
    tasks = [
        (n, method, start, min(CHUNK, args.datasets - start), args.resamples)
        for n in speakers
        for method in EER_METHODS
        for start in range(0, args.datasets, CHUNK)
    ]
    results: list[dict[str, Any]] = []
    started = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        for at, result in enumerate(pool.map(_chunk, tasks)):  # in order: a cell is done at its last chunk
            results.append(result)
            if at + 1 == len(tasks) or tasks[at + 1][:2] != tasks[at][:2]:
                elapsed = time.perf_counter() - started
                print(f"done: {tasks[at][0]} speakers, {tasks[at][1]} ({elapsed:.0f} s)", file=sys.stderr, flush=True)
    rows: list[dict[str, Any]] = []
    for n in speakers:
        for method in EER_METHODS:
            parts = [r for t, r in zip(tasks, results, strict=True) if t[:2] == (n, method)]
            total = sum(part["n_datasets"] for part in parts)

            def rate(kind: str, name: str, parts: list[dict[str, Any]] = parts, total: int = total) -> float:
                return sum(part[kind][name] * part["n_datasets"] for part in parts) / total

            row = {"eer_method": method, "n_speakers": n, "n_datasets": total, "n_resamples": args.resamples}
            for name in ("clean", "ie", "gap"):
                p = rate("coverage", name)
                row[name] = round(p, 3)
                row[f"{name}_se"] = round((p * (1.0 - p) / total) ** 0.5, 3)
            row["clean_percentile"] = round(rate("coverage_percentile", "clean"), 3)
            rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print("| variant | speakers | datasets | single EER (BC) | single EER, percentile | IE | gap |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| `{row['eer_method']}` | {row['n_speakers']} | {row['n_datasets']:,} | {row['clean']:.3f} "
            f"({row['clean_se']:.3f}) | {row['clean_percentile']:.3f} | {row['ie']:.3f} ({row['ie_se']:.3f}) | "
            f"{row['gap']:.3f} ({row['gap_se']:.3f}) |"
        )


if __name__ == "__main__":
    main()
