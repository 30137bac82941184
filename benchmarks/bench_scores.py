"""`audit scores` on a VoxCeleb-format trial list and score file, beside a floor written independently.

Usage: ``python benchmarks/bench_scores.py [--trials 1000000] [--utterances 145000] [--resamples 1000] [--quick]
[--data DIR] [--before CHECKOUT]``. A synthetic VoxCeleb-format list (``<1|0> idNNNNN/video/NNNNN.wav ...``, each
utterance in several trials, as in the real lists) and a VoxSRC score file of the same pairs are written first (or
taken from ``--data``, where an earlier run left them). Then, each in a fresh child process and each printed as it
finishes:

- the floor: both files read by ``pyarrow.csv.read_csv``, one argsort of the scores and the EER of the sorted
  labels (no check, no join, no interval);
- ``audit scores`` as the command runs it (``audit_scores``: every line checked, the join with its findings, the
  three EERs with their two-way speaker-bootstrap intervals of ``--resamples`` draws), its kernels loaded from
  numba's cache first (a warm run);
- with ``--before CHECKOUT``, the same ``audit scores`` of another checkout (the code before a change), run the
  same way in the same session.

Wall and CPU seconds (all threads) and peak resident memory of each, and the ratios to the floor; the load
average is printed first, since the machine may be shared. ``--quick``: 100,000 trials and 200 resamples.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def write_files(folder: Path, n_trials: int, n_utterances: int) -> tuple[Path, Path]:
    """The trial list and the score file (fixed seed): labels from the speakers of two random utterances."""
    rng = np.random.default_rng(20261201)
    speaker_of = rng.integers(0, 1251, n_utterances)
    names = [f"id1{s:04d}/v{u % 97:02d}/{u:05d}.wav" for u, s in enumerate(speaker_of)]
    enrol = rng.integers(0, n_utterances, n_trials)
    test = rng.integers(0, n_utterances, n_trials)
    labels = (speaker_of[enrol] == speaker_of[test]).astype(int)
    scores = rng.normal(2.0 * labels, 1.0)
    trials, score_file = folder / "list_test_hard2.txt", folder / "scores.txt"
    with trials.open("w") as trial_lines, score_file.open("w") as score_lines:
        for start in range(0, n_trials, 1_000_000):  # a million lines at a time: 10 M never sit in memory at once
            part = slice(start, start + 1_000_000)
            trial_lines.write(
                "".join(
                    f"{lab} {names[e]} {names[t]}\n"
                    for lab, e, t in zip(labels[part], enrol[part], test[part], strict=True)
                )
            )
            score_lines.write(
                "".join(
                    f"{s:.5f} {names[e]} {names[t]}\n"
                    for s, e, t in zip(scores[part], enrol[part], test[part], strict=True)
                )
            )
    return trials, score_file


FLOOR = """
import numpy as np, pyarrow as pa, pyarrow.csv as pcsv
options = pcsv.ParseOptions(delimiter=" ")
read = pcsv.ReadOptions(autogenerate_column_names=True)
trials = pcsv.read_csv({trials!r}, read_options=read, parse_options=options)
scores = pcsv.read_csv({scores!r}, read_options=read, parse_options=options)
score = scores.column(0).to_numpy()
labels = trials.column(0).to_numpy()  # the same pairs in the same order: no join
order = np.argsort(-score, kind="stable")
ordered = labels[order]
misses = ordered.sum() - np.cumsum(ordered)  # targets above the threshold are accepted
false_alarms = np.cumsum(1 - ordered)
p_miss, p_fa = misses / ordered.sum(), false_alarms / (ordered.size - ordered.sum())
at = int(np.argmin(np.abs(p_miss - p_fa)))
print("floor EER", (p_miss[at] + p_fa[at]) / 2)
"""

AUDIT = """
from audit.metrics import prepare_kernels
prepare_kernels(print)
from audit.scores import ScoringConfig, audit_scores
report = audit_scores({trials!r}, {scores!r}, config=ScoringConfig(n_resamples={resamples}))
row = report["aggregates"]["metrics_per_group"][0]
print("audit EER", row["eer_legacy"], row.get("eer_legacy_low"), row.get("eer_legacy_high"),
      row.get("interval_not_computable", ""))
"""

REPORT = "\nimport resource; r = resource.getrusage(resource.RUSAGE_SELF)\nprint(r.ru_utime + r.ru_stime, r.ru_maxrss)"


def child(code: str, checkout: Path = HERE.parent) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds (all threads), peak resident GB and the output line of ``python -c code`` in a
    fresh child process importing ``checkout``'s packages (the child reports its own peak, so two children never
    share one)."""
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run(
        [sys.executable, "-c", code + REPORT], check=True, capture_output=True, text=True, env=env, cwd=checkout
    )
    wall = time.perf_counter() - start
    lines = done.stdout.strip().splitlines()
    cpu, peak_kib = lines[-1].split()
    return wall, float(cpu), int(peak_kib) / 1e6, lines[-2]  # ru_maxrss is in KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1_000_000)
    parser.add_argument("--utterances", type=int, default=145_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--data", type=Path, help="a folder holding (or to hold) the two files")
    parser.add_argument("--quick", action="store_true", help="100,000 trials, 200 resamples")
    parser.add_argument("--before", type=Path, help="another checkout whose audit scores runs too (before a change)")
    args = parser.parse_args()
    if args.quick:
        args.trials, args.resamples = 100_000, 200
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.data or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        trials, scores = folder / "list_test_hard2.txt", folder / "scores.txt"
        if not (trials.exists() and scores.exists()):
            started = time.perf_counter()
            write_files(folder, args.trials, args.utterances)
            print(f"wrote {args.trials:,} trials in {time.perf_counter() - started:.1f} s", flush=True)
        n_lines = sum(1 for _ in trials.open("rb"))
        print(f"{n_lines:,} trials, {args.resamples} resamples of the two-way speaker bootstrap", flush=True)
        audit = AUDIT.format(trials=str(trials), scores=str(scores), resamples=args.resamples)
        paths = [
            ("floor (pyarrow read + argsort + EER)", FLOOR.format(trials=str(trials), scores=str(scores)), HERE.parent),
            ("audit scores", audit, HERE.parent),
        ]
        if args.before is not None:
            paths.append((f"audit scores of {args.before}", audit, args.before.resolve()))
        floor = None
        for name, code, checkout in paths:
            wall, cpu, peak, line = child(code, checkout)
            floor = floor or (wall, cpu, peak)
            print(
                f"  {name:<38} {wall:7.1f} s wall {cpu:7.1f} s CPU  peak {peak:5.2f} GB  "
                f"{wall / floor[0]:4.1f}x {cpu / floor[1]:4.1f}x {peak / floor[2]:4.1f}x the floor  ({line})",
                flush=True,
            )
        print(f"load average after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
