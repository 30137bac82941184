"""`audit scores` reading and joining a VoxCeleb1-H-sized trial list and score file, against pandas' C CSV reader.

Usage: ``python benchmarks/bench_scores.py [--trials 552536] [--utterances 145000] [--repeats 3] [--whole]``. A
synthetic VoxCeleb-format list (``<1|0> idNNNNN/video/NNNNN.wav ...``, each utterance in several trials, as in the
real lists) and a VoxSRC score file of the same pairs are written first. Timed (best CPU seconds of ``--repeats``):
the audit's readers (streamed in blocks, every bad line still named), the join with its duplicate and mismatch
accounting, and the speaker ids; beside ``pandas.read_csv`` of the two files (the floor: parsing without any
check). With ``--whole``, also the whole ``audit scores`` command (its bootstrap intervals included) in a child
process, its wall and CPU seconds and peak memory beside the same child reading the two files with
``pandas.read_csv``. The ratios to that floor are the figures to watch; no target is asserted.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from audit.scores.files import read_score_file
from audit.scores.scoring import join, speakers_of
from audit.scores.trial_lists import read_trial_list


def _best_cpu(action: Callable[[], Any], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        action()
        best = min(best, time.process_time() - start)
    return best


def _write(folder: Path, n_trials: int, n_utterances: int) -> tuple[Path, Path]:
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


def _child(code: str) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak resident GB of ``python -c code`` run alone in a child process (the
    child reports its own peak, so two children never share one)."""
    report = (
        "\nimport resource; r = resource.getrusage(resource.RUSAGE_SELF)\nprint(r.ru_utime + r.ru_stime, r.ru_maxrss)"
    )
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code + report], check=True, capture_output=True, text=True)
    wall = time.perf_counter() - start
    cpu, peak_kib = done.stdout.split()[-2:]
    return wall, float(cpu), int(peak_kib) / 1e6  # ru_maxrss is in KiB on Linux


def whole(trials: Path, scores: Path) -> None:
    """``audit scores`` end to end beside ``pandas.read_csv`` of the same files, each in a fresh child process."""
    floor = _child(
        "import pandas as pd\n"
        f"pd.read_csv({str(trials)!r}, sep=' ', header=None); pd.read_csv({str(scores)!r}, sep=' ', header=None)"
    )
    audit = _child(f"from audit.scores.scoring import audit_scores\naudit_scores({str(trials)!r}, {str(scores)!r})")
    print("whole command (child processes):")
    for name, (wall, cpu, gigabytes) in (("pandas.read_csv (floor)", floor), ("audit scores", audit)):
        print(f"  {name:<30} {wall:7.1f} s wall {cpu:7.1f} s CPU  peak {gigabytes:5.2f} GB")
    print(f"  ratio to the floor: {audit[0] / floor[0]:.1f}x wall, {audit[2] / floor[2]:.1f}x memory")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=552_536)
    parser.add_argument("--utterances", type=int, default=145_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--whole", action="store_true", help="also time the whole command in a child process")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        trials_path, scores_path = _write(Path(folder), args.trials, args.utterances)
        trial_list, score_file = read_trial_list(trials_path), read_score_file(scores_path)
        joined = join(trial_list, score_file)
        seconds = {
            "pandas.read_csv (floor)": _best_cpu(
                lambda: (
                    pd.read_csv(trials_path, sep=" ", header=None),
                    pd.read_csv(scores_path, sep=" ", header=None),
                ),
                args.repeats,
            ),
            "read trial list + score file": _best_cpu(
                lambda: (read_trial_list(trials_path), read_score_file(scores_path)), args.repeats
            ),
            "join": _best_cpu(lambda: join(trial_list, score_file), args.repeats),
            "speakers": _best_cpu(lambda: speakers_of(joined.trials, None, None), args.repeats),
        }
        floor = seconds["pandas.read_csv (floor)"]
        print(f"{args.trials} trials, {args.utterances} utterances; best CPU seconds of {args.repeats}:")
        for name, value in seconds.items():
            print(f"  {name:<30} {value:6.2f} s  ({value / floor:.1f}x the floor)")
        if args.whole:
            whole(trials_path, scores_path)


if __name__ == "__main__":
    main()
