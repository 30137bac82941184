"""The default bundle's per-draw statistics, this tree against another (issue 43 point 6): CPU seconds and the
largest difference between their numbers.

Synthetic inputs of the default's shape (7 speakers, 2 of them development speakers, 1,000 two-way draws): the
calibration-transfer section of 136 records of 182 bona fide evaluation trials each (maps on 2 development
speakers: held fixed, as in the default), the same section with maps refitted per draw (8 records, 500 development
trials of 20 development speakers) and the intervals of 4 spoof cells of 180 trials. Each tree runs in its own
process (``PYTHONPATH``), the two alternately, ``--repeats`` times; a process loads its compiled loops on a small
input first, then measures each part (``time.process_time``: every thread's CPU) and prints it as it finishes.
The numbers of the two trees (every estimate and interval bound of every row) are compared at the end.

    python benchmarks/bench_calibration_draws.py --against /work/main [--repeats 2] [--quick]
    python benchmarks/bench_calibration_draws.py --against /work/main --fit-order  # the refit's own precision
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

DRAWS, QUICK_DRAWS = 1000, 200
SPEAKERS = [f"spk{index}" for index in range(7)]
DEV, EVALUATION = SPEAKERS[:2], SPEAKERS[2:]


def _trials(rng: np.random.Generator, speakers: list[str], size: int, shift: float) -> tuple[np.ndarray, ...]:
    """``size`` trials among ``speakers``: a third targets, scores N(2 - shift, 1) and N(0, 1) to 4 decimals."""
    enrol = rng.choice(speakers, size)
    labels = rng.random(size) < 1 / 3
    others = np.array([rng.choice([s for s in speakers if s != e]) for e in enrol])
    test = np.where(labels, enrol, others)
    scores = np.round(rng.normal(np.where(labels, 2.0 - shift, 0.0), 1.0), 4)
    return scores, labels, enrol.astype(object), test.astype(object)


def _inputs(quick: bool) -> dict[str, Any]:
    from audit.metrics import LinearCalibration, SpoofingSet
    from audit.statistics import SpeakerDraws, SpoofingInput
    from audit.statistics.calibration import CalibrationInput, DevelopmentTrials

    rng = np.random.default_rng(43)
    dev = DevelopmentTrials(*_trials(rng, DEV, 200, 0.0), prior=0.5, platt=True)
    refit_speakers = [f"dev{index}" for index in range(20)]
    refit_dev = DevelopmentTrials(*_trials(rng, refit_speakers, 500, 0.0), prior=0.5, platt=True)
    fit = LinearCalibration(2.1, -2.3, 0.5)
    n_default, n_refit, n_cells = (20, 3, 2) if quick else (136, 8, 4)
    costs = (0.05, 1.0, 1.0)
    default = [
        CalibrationInput({"record_id": f"r{index}"}, fit, *_trials(rng, EVALUATION, 182, index % 5 / 2), costs, dev)
        for index in range(n_default)
    ]
    refit = [
        CalibrationInput({"record_id": f"f{i}"}, fit, *_trials(rng, EVALUATION, 182, i % 4 / 2), costs, refit_dev)
        for i in range(n_refit)
    ]
    cells = []
    for index in range(n_cells):
        kinds = rng.choice([0, 1, 2], 180, p=[0.4, 0.3, 0.3])
        enrol = rng.choice(EVALUATION, 180)
        others = np.array([rng.choice([s for s in EVALUATION if s != e]) for e in enrol])
        test = np.where(kinds == 0, others, enrol).astype(object)
        asv = np.round(rng.normal(np.select([kinds == 1, kinds == 2], [2.0, 1.0 + index / 4], 0.0), 1.0), 4)
        cm = np.round(rng.normal(np.where(kinds == 2, -1.0, 1.0), 1.0), 4)
        cells.append(SpoofingInput({"cell": f"c{index}"}, SpoofingSet(asv, cm, kinds, enrol.astype(object), test, 0)))
    columns = [part for record in default + refit for part in (record.enrol_speaker, record.test_speaker)]
    columns += [refit_dev.enrol_speaker, refit_dev.test_speaker, dev.enrol_speaker, dev.test_speaker]
    columns += [part for cell in cells for part in (cell.evaluated.enrol_speaker, cell.evaluated.test_speaker)]
    draws = SpeakerDraws.of(columns, QUICK_DRAWS if quick else DRAWS, 7)
    return {"default": default, "refit": refit, "cells": cells, "draws": draws, "refit_dev": refit_dev}


def _child(out: Path, quick: bool) -> None:
    """Measure every part in this process's tree and write its CPU seconds and numbers to ``out``."""
    from audit.statistics import spoofing_intervals
    from audit.statistics.calibration import calibration_transfer, refitted_maps

    inputs = _inputs(quick)
    draws = inputs["draws"]
    calibration_transfer(inputs["default"][:1] + inputs["refit"][:1], draws, 0.95)  # load the compiled loops
    spoofing_intervals(inputs["cells"][:1], draws, 0.95)
    parts = {
        "calibration, maps held fixed": lambda: calibration_transfer(inputs["default"], draws, 0.95),
        "calibration, maps refitted": lambda: calibration_transfer(inputs["refit"], draws, 0.95),
        "  of which the refit (Newton)": lambda: refitted_maps(inputs["refit_dev"], draws),
        "spoof cells' intervals": lambda: spoofing_intervals(inputs["cells"], draws, 0.95),
    }
    results = {}
    for name, run in parts.items():
        started = time.process_time()
        value = run()
        results[name] = (time.process_time() - started, value)
        print(f"  {Path(os.environ['PYTHONPATH']).name:>14} {name:32} {results[name][0]:7.3f} s CPU", flush=True)
    out.write_bytes(pickle.dumps(results))


def _fit_order(seeds: int = 5) -> None:
    """How far this tree's refitted maps move when only the order of the development trials (of their sums)
    changes: the precision to which the fit's numbers are defined, whatever computes them."""
    from audit.metrics import fit_logistic_calibration_draws

    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        labels = rng.random(500) < 1 / 3
        scores = np.round(rng.normal(labels * 2.0, 1.0), 4)
        speakers = rng.integers(0, 20, (2, 500))
        multiplicities = rng.multinomial(20, np.ones(20) / 20, DRAWS).astype(float)
        weights = multiplicities[:, speakers[0]] * multiplicities[:, speakers[1]]
        order = rng.permutation(500)
        for platt in (True, False):
            first = fit_logistic_calibration_draws(scores, labels, weights, 0.5, platt=platt)
            again = fit_logistic_calibration_draws(scores[order], labels[order], weights[:, order], 0.5, platt=platt)
            moved = np.maximum(np.abs(first[0] - again[0]), np.abs(first[1] - again[1]))
            print(f"seed {seed}, platt {platt}: trials permuted, the maps move by up to {np.nanmax(moved):.2e}; "
                  f"{int((moved > 1e-12).sum())} of {DRAWS} draws by more than 1e-12")  # fmt: skip


def _numbers(value: Any, path: str = "") -> dict[str, float]:
    """Every number in a result, by its path."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _numbers(item, f"{path}/{key}").items()}
    if isinstance(value, list | tuple):
        return {k: v for index, item in enumerate(value) for k, v in _numbers(item, f"{path}/{index}").items()}
    if isinstance(value, np.ndarray):
        return {f"{path}/{index}": float(item) for index, item in enumerate(value.ravel())}
    if isinstance(value, bool | str) or value is None:
        return {}
    return {path: float(value)} if isinstance(value, int | float | np.floating | np.integer) else {}


def _largest_difference(before: Any, after: Any) -> tuple[float, int]:
    """The largest absolute difference between two results' numbers (NaN matching NaN), and how many numbers."""
    old, new = _numbers(before), _numbers(after)
    if old.keys() != new.keys():
        raise SystemExit(f"the results differ in shape: {sorted(old.keys() ^ new.keys())[:5]}")
    largest = 0.0
    for key, value in old.items():
        if math.isnan(value) and math.isnan(new[key]):
            continue
        largest = max(largest, abs(value - new[key]) if value != new[key] else 0.0)
    return largest, len(old)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", type=Path, required=True, help="the other tree (e.g. a checkout of main)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_DRAWS} draws and fewer records")
    parser.add_argument("--fit-order", action="store_true", help="only: how far the refit moves with the trials' order")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fit_order:
        _fit_order()
        return
    if args.child:
        _child(args.child, args.quick)
        return
    here = Path(__file__).resolve().parents[1]
    trees = {"before": args.against.resolve(), "after": here}
    print(f"load average {os.getloadavg()[0]:.2f}; before = {trees['before']}, after = {trees['after']}", flush=True)
    seconds: dict[str, dict[str, list[float]]] = {tree: {} for tree in trees}
    values: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(args.repeats):
            for tree, root in trees.items():
                out = Path(folder) / f"{tree}.pkl"
                command = [sys.executable, str(Path(__file__).resolve()), "--against", str(root), "--child", str(out)]
                environment = dict(os.environ, PYTHONPATH=str(root))
                subprocess.run(command + (["--quick"] if args.quick else []), env=environment, check=True)
                results = pickle.loads(out.read_bytes())
                for name, (cpu, value) in results.items():
                    seconds[tree].setdefault(name, []).append(cpu)
                    values.setdefault(tree, {})[name] = value
            print(f"repeat {repeat + 1} done, load average {os.getloadavg()[0]:.2f}", flush=True)
    title = f"part (best of {args.repeats}, CPU s)"
    print(f"{title:36} {'before':>8} {'after':>8} {'ratio':>7}  largest difference")
    for name in seconds["before"]:
        before, after = min(seconds["before"][name]), min(seconds["after"][name])
        largest, count = _largest_difference(values["before"][name], values["after"][name])
        print(f"{name:36} {before:8.3f} {after:8.3f} {before / after:6.1f}x  {largest:.2e} over {count} numbers")


if __name__ == "__main__":
    main()
