"""`audit verify` end to end on a benchmark-sized results table, against the interpreter's own start-up.

Usage: ``python benchmarks/bench_verify.py [--repeats 5] [--keep DIR] [--quick] [--python PATH]``. A synthetic table of
4,068 rows (17 experiments x 12 encoder labels, with factorial designs, gender subgroups, an emotion matrix and partial
provenance, like the benchmark's) is written first; then ``audit verify TABLE`` runs as a fresh subprocess (imports
included, the way a reviewer runs it, bytecode cached as an install has it: ``installed.py``), beside ``python -c pass``
(starting Python at all) and ``import pandas, pandera`` (the floor of a table audit); also with ``--json`` and with
``--out DIR`` (the report and its figures). The targets (DESIGN.md section 8, issue 43 point 3): under 1 s wall on idle
cores, under 1.5 s with ``--out``; the median and the best of ``--repeats`` runs are shown, each command's line as it
finishes. ``--quick``: one run per command.
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from installed import installed_env

from audit.table.checks import BENCHMARK_EXPERIMENTS

TARGETS_S = {"audit verify TABLE": 1.0, "audit verify TABLE --out DIR": 1.5}  # wall seconds on idle cores
N_ROWS = 4068
SPEAKER = ("CAM++", "ECAPA-TDNN", "ECAPA-TDNN-Large", "ResNet34", "RawNet3", "TitaNet", "x-vector")
SSL = ("wavlm-base", "wavlm-large", "hubert-base", "wav2vec2-base", "data2vec-base")
FACTORIAL = {"E13": ("age", "codec"), "E14": ("emotion", "noise"), "E17": ("drift", "codec")}
CROSS_CORPUS = {"E15": ("pathology", "codec"), "E18": ("accent", "codec")}


def benchmark_rows(rng: np.random.Generator) -> list[dict[str, object]]:
    """4,068 synthetic rows shaped like the benchmark's results table."""
    rows: list[dict[str, object]] = []
    plain = [e for e in BENCHMARK_EXPERIMENTS if e not in {"E01", "E16", *FACTORIAL, *CROSS_CORPUS}]
    models = [(m, "speaker") for m in SPEAKER] + [(m, "ssl") for m in SSL]

    def add(experiment: str, model: str, family: str, corpus: str, condition: str, **extra: object) -> None:
        digest = f"{rng.integers(1 << 62):016x}" * 4 if rng.random() < 0.46 else ""
        rows.append({
            "record_id": f"bench-{len(rows):05d}", "experiment": experiment, "model": model,
            "model_family": family, "corpus": corpus, "condition": condition,
            "eer": round(float(rng.uniform(0.02, 0.48)), 4),
            "n_target": int(rng.integers(100, 5000)), "n_nontarget": int(rng.integers(1000, 20000)),
            "checkpoint_blake3": digest, "run_id": "bench-run", **extra,
        })  # fmt: skip

    for model, family in models:
        for enrol in ("neutral", "happy", "angry", "fearful"):
            for test in ("neutral", "happy", "angry", "fearful"):
                add(
                    "E01",
                    model,
                    family,
                    "RAVDESS",
                    f"{enrol}->{test}",
                    enrol_condition=enrol,
                    test_condition=test,
                )
        for condition in ["clean"] + [
            f"{noise} snr={snr}" for noise in ("babble", "music", "white") for snr in (10, 5, 0)
        ]:
            for gender in ("F", "M"):
                add("E16", model, family, "VoxCeleb1", condition, subgroup=f"gender={gender}")
        for experiment, (factor_a, factor_b) in {**FACTORIAL, **CROSS_CORPUS}.items():
            for level_a in ("none", "a1", "a2", "a3", "a4"):
                for level_b in ("none", "b1", "b2", "b3"):
                    clean = level_a == "none" and level_b == "none"
                    corpus = "VoxCeleb1" if clean and experiment in CROSS_CORPUS else "CommonVoice"
                    add(experiment, model, family, corpus, f"{factor_a}={level_a} {factor_b}={level_b}",
                        factor_a=factor_a, level_a=level_a, factor_b=factor_b, level_b=level_b,
                        trial_list_id=f"tl-{experiment}" if experiment == "E14" else "")  # fmt: skip
    per_plain_cell = (N_ROWS - len(rows)) / (len(plain) * len(models))
    for i, experiment in enumerate(plain):
        for j, (model, family) in enumerate(models):
            cell = i * len(models) + j
            n = int((cell + 1) * per_plain_cell) - int(cell * per_plain_cell)
            for k in range(n):
                add(experiment, model, family, "EARS", f"condition-{k}")
    return rows


def write_table(path: Path, rows: list[dict[str, object]]) -> None:
    columns = list(dict.fromkeys(key for row in rows for key in row))
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(rows)


def timed(command: list[str], repeats: int, expect: set[int]) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU (user + system) seconds of ``repeats`` fresh runs of ``command``.

    CPU time is shown beside wall-clock time because on a shared machine the wall clock also counts the time
    other processes hold the cores. The exit status must be in ``expect``.
    """
    wall, cpu = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, check=False, env=installed_env())
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode not in expect:
            raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per command")
    parser.add_argument("--keep", type=Path, help="write the table here instead of a temporary folder")
    parser.add_argument("--quick", action="store_true", help="one run per command")
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="the interpreter the commands run with (default this one), e.g. a reviewer's light install: a venv with "
        "`pip install .` and no extra (the test extra installs hypothesis, which pandera imports when it validates)",
    )
    args = parser.parse_args()
    if args.quick:
        args.repeats = 1
    with tempfile.TemporaryDirectory() as folder:
        table = (args.keep or Path(folder)) / "bench-results.csv"
        table.parent.mkdir(parents=True, exist_ok=True)
        rows = benchmark_rows(np.random.default_rng(2026))
        write_table(table, rows)
        python = args.python
        commands = {
            "python -c pass": ([python, "-c", "pass"], {0}),
            "python -c 'import pandas, pandera'": ([python, "-c", "import pandas, pandera.pandas"], {0}),
            "python -c 'import audit.verify'": ([python, "-c", "import audit.verify"], {0}),
            "audit verify TABLE": ([python, "-m", "audit.cli", "verify", str(table)], {0, 1}),
            "audit verify TABLE --json": (
                [python, "-m", "audit.cli", "verify", str(table), "--json"],
                {0, 1},
            ),
            "audit verify TABLE --out DIR": (
                [python, "-m", "audit.cli", "verify", str(table), "--out", str(Path(folder) / "report")],
                {0, 1},
            ),
        }
        print(f"table: {len(rows)} rows, {table.stat().st_size / 1e6:.2f} MB; {args.repeats} runs each", flush=True)
        print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; {python}", flush=True)
        print(f"{'command':<36} {'wall median s':>13} {'wall best s':>11} {'CPU median s':>12}", flush=True)
        medians = {}
        for name, (command, expect) in commands.items():
            wall, cpu = timed(command, args.repeats, expect)
            medians[name] = statistics.median(wall)
            print(f"{name:<36} {medians[name]:>13.3f} {min(wall):>11.3f} {statistics.median(cpu):>12.3f}", flush=True)
    floor_s = medians["python -c 'import pandas, pandera'"]
    for name, target in TARGETS_S.items():
        verdict = "meets" if medians[name] < target else "MISSES"
        print(f"{name}: {medians[name]:.3f} s wall median, {verdict} its {target} s target", flush=True)
    above = medians["audit verify TABLE"] - floor_s
    print(f"audit verify TABLE minus importing pandas and pandera alone: {above:+.3f} s")


if __name__ == "__main__":
    main()
