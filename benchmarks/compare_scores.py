"""Before/after check of `audit scores`: the JSON of two checkouts on the same files, every number to 1e-12.

Usage: ``python benchmarks/compare_scores.py --before CHECKOUT [--trials 1000000] [--data DIR] [--quick]
[-- EXTRA AUDIT OPTIONS]``. The trial list and score file of ``bench_scores.py`` (fixed seed) are written to
``--data`` (or a temporary folder) unless there already; then ``audit scores --json`` runs on them in this checkout
and in ``CHECKOUT``, each in a fresh process, and the two reports are compared leaf by leaf: numbers within 1e-12
(NaN equal to NaN), everything else equal, the paths of the checkouts aside. Each run's line is printed as it
finishes; the differences (at most 30) and their count last; exit 1 when there is one. ``--quick``: 100,000 trials.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_scores import HERE, write_files

TOLERANCE = 1e-12


def differences(before: Any, after: Any, path: str = "") -> list[str]:
    """Where two JSON documents differ: numbers beyond ``TOLERANCE``, other leaves unequal, keys or lengths."""
    if isinstance(before, dict) and isinstance(after, dict):
        found = [f"{path}/{key}: only in one" for key in sorted(set(before) ^ set(after))]
        return found + [line for key in sorted(set(before) & set(after))
                        for line in differences(before[key], after[key], f"{path}/{key}")]  # fmt: skip
    if isinstance(before, list) and isinstance(after, list):
        if len(before) != len(after):
            return [f"{path}: {len(before)} items against {len(after)}"]
        return [
            line
            for i, pair in enumerate(zip(before, after, strict=True))
            for line in differences(*pair, f"{path}[{i}]")
        ]
    numbers = (int, float)
    if isinstance(before, numbers) and isinstance(after, numbers) and not isinstance(before, bool):
        both_nan = isinstance(before, float) and isinstance(after, float) and math.isnan(before) and math.isnan(after)
        return [] if both_nan or abs(before - after) <= TOLERANCE else [f"{path}: {before!r} against {after!r}"]
    return [] if before == after else [f"{path}: {str(before)[:80]!r} against {str(after)[:80]!r}"]


def report(checkout: Path, trials: Path, scores: Path, extra: list[str]) -> dict[str, Any]:
    """``audit scores --json`` of ``checkout`` (its packages first on the path, run from its folder)."""
    started = time.perf_counter()
    command = [sys.executable, "-m", "audit.cli", "scores", str(trials), str(scores), "--json", *extra]
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=checkout, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{checkout}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
    print(f"  {checkout}: exit {done.returncode} in {time.perf_counter() - started:.1f} s", flush=True)
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the checkout to compare with (say, main)")
    parser.add_argument("--trials", type=int, default=1_000_000)
    parser.add_argument("--data", type=Path, help="a folder holding (or to hold) the two files")
    parser.add_argument("--quick", action="store_true", help="100,000 trials")
    parser.add_argument("extra", nargs="*", help="options passed to audit scores (after --)")
    args = parser.parse_args()
    trials_n = 100_000 if args.quick else args.trials
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.data or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        trials, scores = folder / "list_test_hard2.txt", folder / "scores.txt"
        if not (trials.exists() and scores.exists()):
            write_files(folder, trials_n, 145_000)
        print(f"audit scores --json {' '.join(args.extra)} on {trials}", flush=True)
        after = report(HERE.parent, trials, scores, args.extra)
        before = report(args.before.resolve(), trials, scores, args.extra)
    found = differences(before, after)
    print("\n".join(found[:30]) if found else f"identical: every number within {TOLERANCE:g}")
    print(f"{len(found)} difference(s)")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
