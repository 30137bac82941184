"""Re-scoring throughput: ``audit.metrics.point.grouped_metrics`` on 12 M per-trial scores in 4,068 records.

Side by side with its floor (one ``np.argsort`` of all the scores) and with its peer (a per-record
``sklearn.metrics.roc_curve`` loop that computes the legacy EER alone). DESIGN.md section 8 asks for at most
2x the floor and at least 3x faster than the peer. Times are wall clock and CPU (process) time: on a shared
machine the CPU time is the stable figure (all three contenders are single-threaded).

Usage: ``python benchmarks/bench_rescore.py [--trials 12000000] [--records 4068] [--scores float32|float64]
[--repeats 1] [--json]``. ``float32`` scores are cosines as the runner writes them (float32 arithmetic,
stored as float64): their order codes come straight from the bits. ``float64`` are full-precision doubles:
``audit.metrics.point`` packs them exactly, bucket by bucket, at the cost of one more sort of the scores. The
sklearn loop gets its records already split (in its favour). The best of ``--repeats`` runs is shown.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import numpy as np
from sklearn.metrics import roc_curve

from audit.metrics.point import grouped_metrics


def _best_seconds(action: Callable[[], object], repeats: int) -> dict[str, float]:
    """Best wall-clock and best CPU seconds over ``repeats`` runs."""
    wall = cpu = float("inf")
    for _ in range(repeats):
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        action()
        wall = min(wall, time.perf_counter() - start_wall)
        cpu = min(cpu, time.process_time() - start_cpu)
    return {"wall": wall, "cpu": cpu}


def _trials(n_trials: int, n_records: int, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random records (about equal sizes), a quarter targets, target cosines higher than non-target ones."""
    rng = np.random.default_rng(20261130)
    record_index = rng.integers(0, n_records, n_trials)
    labels = (rng.random(n_trials) < 0.25).astype(np.int8)
    scores = rng.normal(0.1 + 0.4 * labels, 0.15)
    if kind == "float32":
        scores = scores.astype(np.float32).astype(np.float64)
    return scores, labels, record_index


def _sklearn_legacy_loop(per_record: list[tuple[np.ndarray, np.ndarray]]) -> list[float]:
    eers = []
    for scores, labels in per_record:
        fpr, tpr, _ = roc_curve(labels, scores)
        fnr = 1 - tpr
        best = np.nanargmin(np.abs(fnr - fpr))
        eers.append((fpr[best] + fnr[best]) / 2)
    return eers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=12_000_000)
    parser.add_argument("--records", type=int, default=4068)
    parser.add_argument("--scores", choices=["float32", "float64"], default="float32")
    parser.add_argument("--repeats", type=int, default=1, help="runs per contender; the best is shown")
    parser.add_argument("--json", action="store_true", help="also print one JSON line with the figures")
    parser.add_argument("--quick", action="store_true", help="200,000 trials in 68 records")
    args = parser.parse_args()
    if args.quick:
        args.trials, args.records = 200_000, 68
    scores, labels, record_index = _trials(args.trials, args.records, args.scores)
    order = np.argsort(record_index, kind="stable")
    bounds = np.cumsum(np.bincount(record_index, minlength=args.records))[:-1]
    per_record = list(zip(np.split(scores[order], bounds), np.split(labels[order], bounds), strict=True))
    grouped = grouped_metrics(scores, labels, record_index, args.records)
    peer = np.asarray(_sklearn_legacy_loop(per_record))
    mismatches = int(np.count_nonzero(grouped["eer_legacy"] != peer))
    print(f"{args.trials:,} {args.scores} scores in {args.records:,} records          wall      cpu", flush=True)
    contenders = {
        "argsort_floor": lambda: np.argsort(scores),
        "grouped_metrics": lambda: grouped_metrics(scores, labels, record_index, args.records),
        "sklearn_legacy_loop": lambda: _sklearn_legacy_loop(per_record),
    }
    seconds: dict[str, dict[str, float]] = {}
    for name, contender in contenders.items():
        seconds[name] = value = _best_seconds(contender, args.repeats)
        print(f"  {name:34s} {value['wall']:7.2f} s {value['cpu']:7.2f} s", flush=True)
    ratios = {
        clock: {
            "grouped_over_argsort": seconds["grouped_metrics"][clock] / seconds["argsort_floor"][clock],
            "sklearn_over_grouped": seconds["sklearn_legacy_loop"][clock] / seconds["grouped_metrics"][clock],
        }
        for clock in ("wall", "cpu")
    }
    print(
        f"  grouped / argsort (target <= 2)    {ratios['wall']['grouped_over_argsort']:7.2f} x "
        f"{ratios['cpu']['grouped_over_argsort']:7.2f} x"
    )
    print(
        f"  sklearn loop / grouped (target >= 3) {ratios['wall']['sklearn_over_grouped']:5.2f} x "
        f"{ratios['cpu']['sklearn_over_grouped']:7.2f} x"
    )
    print(f"  legacy EERs differing from the sklearn loop: {mismatches} of {args.records}")
    if args.json:
        figures = {
            "trials": args.trials,
            "records": args.records,
            "scores": args.scores,
            "seconds": seconds,
            "ratios": ratios,
            "legacy_mismatches": mismatches,
        }
        print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()
