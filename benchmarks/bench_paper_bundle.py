"""`audit verify --bundle --key --out` end to end on a paper-scale bundle, and the time of each audit step.

Usage: ``python benchmarks/bench_paper_bundle.py [--keep DIR] [--scale 1.0] [--shape rehearsal|config]
[--lists same|config] [--against CHECKOUT [--pairs 3]] [--quick] [--default out/default] [--json]``. The bundle
is written to a temporary folder, or to ``--keep DIR`` and reused from there on later runs (whatever its shape: a
kept bundle is not rewritten). Two shapes, each about 12 M per-trial scores at scale 1, signed:

- ``--shape rehearsal`` (the default): ``runner.rehearsal.write_paper_bundle``, padded: 4,068 records, the runner's
  planner drawing one list per condition cell, cosines in float32 precision; ``--lists same``: every cell of a
  two-factor design on one list, 528 same-list contrasts; ``--lists config``: the configuration's own lists, whose
  population factors make population contrasts;
- ``--shape config``: ``runner.grid.write_grid_bundle``, 12 encoders x 339 records shaped on ``configs/full.toml``,
  one list per experiment (all terms of each interaction on it), float64 scores at full precision in zstd Parquet
  (issue 43 point 2's second shape; ``--lists`` does not apply).

Then:

1. ``audit verify DIR/results.csv --bundle DIR --key DIR.pub --out REPORT`` runs as a fresh subprocess (imports
   and report writing included, the way a reviewer runs it): wall-clock and CPU seconds, and the peak resident
   memory of the process (``getrusage`` of the children), against the targets of issue 11: under 20 s and 2 GB
   on the 2-core reference machine. CPU time is shown because on a shared machine the wall clock also counts the
   time other processes hold the cores (the load average is printed before each measurement). Beside it, the
   floor of issue 43 point 2, in a fresh subprocess too: every file of the bundle read and hashed (BLAKE3), the
   score column of every scores file decoded (pyarrow) and one argsort of all the scores; the audit's wall and CPU
   as multiples of the floor's, against the targets (under 10 s wall, within 2x the floor's CPU). With
   ``--against CHECKOUT`` (another checkout's root, e.g. made by ``git worktree add /tmp/base REV``), the same audit
   of this checkout and of that one (its ``PYTHONPATH`` and working folder), in turn: one unmeasured run of each
   (which also compiles the other checkout's kernels), then ``--pairs`` measured pairs, each run's line as it
   finishes, then both checkouts' medians and their multiples of the floor. This machine's speed drifts by a fifth
   within minutes, more than most changes move a single run: alternated pairs compare two checkouts fairly.
2. The same audit once more in this process with a timer around each public step function, grouped by step
   (signature, digests, binding, re-scoring, trial lists, trial utterances, operators, statistics, table audit,
   report): the share of each, and the binding check's share against its 10 % target. A step function that the
   audit no longer has is listed as not found, never silently dropped. ``--cprofile N`` profiles that run (CPU
   time, so other processes' load does not count) and lists its N costliest functions by own time, to find hot
   spots inside a step; the step times then include the profiler's overhead.
3. With ``--default DIR`` (default ``out/default``, the bundle of ``nox -s reproduce``) when that folder exists:
   ``audit verify`` of it end to end, against its 5 s target.

Each end-to-end run prints its line as it finishes. ``--quick``: a new bundle at 5 % of the trial budget (a check
that the script runs, not a figure to quote).
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import importlib
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runner.grid import write_grid_bundle
from runner.rehearsal import write_paper_bundle

TARGET_S, TARGET_RSS_GB, DEFAULT_TARGET_S, BINDING_SHARE = 20.0, 2.0, 5.0, 0.10
FLOOR_TARGET_S, FLOOR_RATIO = 10.0, 2.0  # issue 43 point 2: under 10 s wall, within 2x the floor in CPU
# The floor (issue 43 point 2), written independently of the audit: read and hash every file, decode every scores
# file's score column, one argsort of all the scores.
FLOOR = """
import sys
from pathlib import Path
import blake3, numpy as np, pyarrow as pa, pyarrow.parquet as pq
files, scores = 0, []
for path in sorted(Path(sys.argv[1]).rglob("*")):
    if path.is_file():
        data = path.read_bytes()
        blake3.blake3(data).hexdigest()
        files += 1
        if path.suffix == ".parquet":
            scores.append(pq.read_table(pa.BufferReader(data), columns=["score"]).column(0).to_numpy())
every = np.concatenate(scores)
order = np.argsort(every)
print(f"floor: {files} files read and hashed, {every.size} scores sorted")
"""

# Each audit step and the functions that make it (module where the line looks them up, function); a name that is
# absent is reported as such.
STEPS: dict[str, tuple[tuple[str, str], ...]] = {
    "table audit (no bundle)": (
        ("audit.verify", "select_rows"),
        ("audit.verify", "derive"),
        ("audit.verify", "recompute_aggregates"),
        ("audit.verify", "raise_flags"),
        ("audit.verify", "check_claims"),
    ),
    "signature": (
        ("audit.bundle.verification", "verify_signature"),
        ("audit.bundle.verification", "verify_statement"),
        ("audit.bundle.verification", "verify_statement_copy"),
    ),
    "digests": (
        ("audit.bundle.verification", "verify_subject_names"),
        ("audit.bundle.verification", "verify_subject_digests"),
        ("audit.bundle.verification", "verify_every_file_is_subject"),
    ),
    "parsing (schemas)": (("audit.bundle.verification", "load_files"),),
    "binding": (("audit.bundle.verification", "verify_rows"), ("audit.bundle.verification", "verify_table_binding")),
    "re-scoring": (
        ("audit.bundle.verification", "verify_scores_follow_trial_lists"),
        ("audit.bundle.verification", "verify_rescored_metrics"),
    ),
    "shared trial lists": (("audit.bundle.verification", "verify_shared_trial_lists"),),
    "trial utterances": (("audit.bundle.verification", "verify_trial_utterances"),),
    "operators": (("audit.bundle.verification", "verify_operator_outcomes"),),
    "statistics": (("audit.statistics", "statistics_of_bundle"),),  # audit.verify calls it through the face
    "report": (("reports", "artefact_evaluation_summary"), ("reports", "write_report")),
}
# Parts of a step, shown under it (their time is inside the step's): private names, for finding hot spots.
PARTS: dict[str, tuple[tuple[str, str], ...]] = {
    "statistics: gathering inputs": (
        ("audit.statistics.bundle", "contrast_input"),
        ("audit.statistics.bundle", "subgroup_settings"),
    ),
    "statistics: contrast bootstrap": (("audit.statistics.section", "draw_contrast"),),
    "statistics: matched coverage simulations": (("audit.statistics.section", "small_sample_warnings"),),
    "statistics: coupling simulation": (("audit.statistics.section", "coupling_under_additivity"),),
}
# Work the audit runs in forked processes beside the rest (audit.statistics.forked): its time shows only as the
# wait for it.
FORKED = "the subgroup settings' statistics (gaps, fixed threshold) and the report's figures"


def run_measured(command: list[str], checkout: Path | None = None) -> dict[str, Any]:
    """Wall-clock, CPU seconds and peak RSS of one subprocess (``ru_maxrss`` of the children: kilobytes on Linux),
    importing from ``checkout`` when given (its ``PYTHONPATH`` and working folder: ``python -m`` imports from there).

    The peak is the largest of any child waited for so far, so nothing else is run as a child before this.
    """
    environment = {**os.environ, "PYTHONPATH": str(checkout)} if checkout else None
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=environment, cwd=checkout)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {
        "command": " ".join(command),
        "exit": done.returncode,
        "first_line": (done.stdout.splitlines() or done.stderr.splitlines() or [""])[0],
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_rss_gb": after.ru_maxrss * 1024 / 1e9,
        "load_average_before": load,
    }


def _timed(
    function: Callable[..., Any], wall: dict[str, float], cpu: dict[str, float], step: str
) -> Callable[..., Any]:
    """``function`` adding its wall-clock and process CPU seconds (all threads) to ``step``."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start, start_cpu = time.perf_counter(), time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            wall[step] += time.perf_counter() - start
            cpu[step] += time.process_time() - start_cpu

    return wrapper


def step_times(bundle: Path, key: Path, out: Path, profile_top: int) -> dict[str, Any]:
    """Run the audit in this process with every step function wrapped by a timer (and profiled if asked)."""
    from audit.cli import audit_results
    from audit.verify import AuditRequest

    wall, cpu = {step: 0.0 for step in {**STEPS, **PARTS}}, {step: 0.0 for step in {**STEPS, **PARTS}}
    missing = []
    patched: list[tuple[Any, str, Any]] = []
    for step, functions in {**STEPS, **PARTS}.items():
        for module_name, name in functions:
            module = importlib.import_module(module_name)
            original = getattr(module, name, None)
            if original is None:
                if step != "binding" or name == "verify_rows":
                    missing.append(f"{module_name}.{name}")
                continue
            patched.append((module, name, original))
            setattr(module, name, _timed(original, wall, cpu, step))
    profiler = cProfile.Profile(time.process_time) if profile_top else None
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    start, start_cpu = time.perf_counter(), time.process_time()
    try:
        if profiler:
            profiler.enable()
        report, _ = audit_results(AuditRequest(bundle / "results.csv", bundle=bundle, key=key), out)
        if profiler:
            profiler.disable()
    finally:
        for module, name, original in patched:
            setattr(module, name, original)
    total, total_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    forked = after.ru_utime - children.ru_utime + after.ru_stime - children.ru_stime
    result: dict[str, Any] = {
        "verdict": report["verdict"],
        "wall_s": {"total": total, **wall, "other": total - sum(wall[step] for step in STEPS)},
        "cpu_s": {"total": total_cpu, **cpu, "other": total_cpu - sum(cpu[step] for step in STEPS)},
        "not_found": missing,
        "forked_cpu_s": forked,
    }
    if profiler:
        stats = pstats.Stats(profiler)
        rows = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)[:profile_top]  # type: ignore[attr-defined]
        result["profile"] = [
            {"function": f"{Path(file).name}:{line} {name}", "own_s": own, "cumulative_s": cumulative, "calls": calls}
            for (file, line, name), (_, calls, own, cumulative, _) in rows
        ]
    return result


def alternated_pairs(command: list[str], against: Path, pairs: int, floor_cpu: float, quiet: bool) -> dict[str, Any]:
    """``command`` run from this checkout and from ``against`` in turn: one unmeasured run of each, then ``pairs``
    measured pairs (each line printed as it finishes), and each checkout's medians, CPU also as a multiple of the
    floor's."""
    checkouts = {"this": None, "against": against.resolve()}
    for checkout in checkouts.values():
        run_measured(command, checkout)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in checkouts}
    for pair in range(1, pairs + 1):
        for name, checkout in checkouts.items():
            run = run_measured(command, checkout)
            runs[name].append(run)
            if not quiet:
                print(
                    f"pair {pair}, {name}: exit {run['exit']}; wall {run['wall_s']:.1f} s, CPU {run['cpu_s']:.1f} s; "
                    f"load average before {run['load_average_before']:.1f}",
                    flush=True,
                )
    medians = {
        name: {key: statistics.median(run[key] for run in measured) for key in ("wall_s", "cpu_s")}
        for name, measured in runs.items()
    }
    if not quiet:
        for name, median in medians.items():
            print(
                f"{name} ({checkouts[name] or 'this checkout'}): medians of {pairs}, wall {median['wall_s']:.1f} s, "
                f"CPU {median['cpu_s']:.1f} s, {median['cpu_s'] / floor_cpu:.1f}x the floor's CPU",
                flush=True,
            )
    return {"against": str(checkouts["against"]), "runs": runs, "medians": medians}


def bundle_at(keep: Path | None, folder: Path, scale: float, lists: str, shape: str) -> tuple[Path, Path, str]:
    """The bundle to audit and its public key: reused from ``keep`` when it holds one, else written."""
    root = keep or folder / "paper-bundle"
    public = root.with_name(root.name + ".pub")
    if (root / "results.csv").is_file() and public.is_file():
        return root, public, f"reused {root}"
    if shape == "config":
        written = write_grid_bundle(root, scale=scale, pad=True)
    else:
        written = write_paper_bundle(root, scale=scale, pad=True, same_list_contrasts=lists == "same")
    return (
        root,
        written.public_key,
        f"wrote {root}: {written.n_records} records, {written.n_trial_lists} trial lists, "
        f"{written.n_scores:,} scores in {written.seconds:.1f} s",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="bundle folder to write once and reuse (keys beside it)")
    parser.add_argument("--scale", type=float, default=1.0, help="trial budget multiplier of a new bundle")
    parser.add_argument(
        "--lists",
        choices=("same", "config"),
        default="same",
        help="a new bundle's trial lists: every cell of a two-factor design on one list (issue 11's workload), or "
        "the configuration's own, where population factors make population contrasts (issue 14's)",
    )
    parser.add_argument(
        "--shape",
        choices=("rehearsal", "config"),
        default="rehearsal",
        help="a new bundle's generator: the rehearsal's (runner.rehearsal), or the grid shaped on configs/full.toml "
        "(runner.grid: one list per experiment, float64 scores)",
    )
    parser.add_argument("--against", type=Path, help="another checkout's root, audited alternately with this one")
    parser.add_argument("--pairs", type=int, default=3, help="measured pairs with --against")
    parser.add_argument("--default", type=Path, default=Path("out/default"), help="the default bundle, if any")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N", help="also list the N costliest functions")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    parser.add_argument("--quick", action="store_true", help="a new bundle at 5 %% of the trial budget")
    args = parser.parse_args()
    if args.quick:
        args.scale = 0.05
    python = sys.executable

    def say(name: str, run: dict[str, Any], target: float) -> None:
        """One measured path's line, as it finishes."""
        if args.json:
            return
        print(
            f"{name}: exit {run['exit']} ({run['first_line'][:60]}); wall {run['wall_s']:.1f} s, "
            f"CPU {run['cpu_s']:.1f} s (target < {target:.0f} s); peak RSS {run['peak_rss_gb']:.2f} GB"
            + (f" (target < {TARGET_RSS_GB:.0f} GB)" if name == "end_to_end" else "")
            + f"; load average before {run['load_average_before']:.1f}",
            flush=True,
        )

    results: dict[str, Any] = {"cores": os.cpu_count()}
    with tempfile.TemporaryDirectory() as folder:
        bundle, key, how = bundle_at(args.keep, Path(folder), args.scale, args.lists, args.shape)
        results["bundle"] = how
        if not args.json:
            print(f"{how}\n{os.cpu_count()} cores", flush=True)
        report = Path(folder) / "report"
        command = [python, "-m", "audit.cli", "verify", str(bundle / "results.csv"), "--bundle", str(bundle)]
        results["end_to_end"] = run_measured([*command, "--key", str(key), "--out", str(report)])
        say("end_to_end", results["end_to_end"], TARGET_S)
        results["floor"] = floor = run_measured([python, "-c", FLOOR, str(bundle)])
        if not args.json:
            end = results["end_to_end"]
            print(
                f"floor: exit {floor['exit']} ({floor['first_line'][:60]}); wall {floor['wall_s']:.1f} s, "
                f"CPU {floor['cpu_s']:.1f} s; load average before {floor['load_average_before']:.1f}; end to end "
                f"{end['wall_s']:.1f} s wall (target < {FLOOR_TARGET_S:.0f} s), {end['cpu_s'] / floor['cpu_s']:.1f}x "
                f"the floor's CPU (target < {FLOOR_RATIO:.0f}x), {end['wall_s'] / floor['wall_s']:.1f}x its wall",
                flush=True,
            )
        if args.against:
            folder_of = str(bundle.resolve())  # absolute: the other checkout runs in its own folder
            audit = [python, "-m", "audit.cli", "verify", f"{folder_of}/results.csv", "--bundle", folder_of]
            audit += ["--key", str(key.resolve()), "--out", str(report.resolve())]
            results["pairs"] = alternated_pairs(audit, args.against, args.pairs, floor["cpu_s"], args.json)
        results["in_process"] = step_times(bundle, key, Path(folder) / "report-in-process", args.cprofile)
        default = args.default
        default_keys = sorted(default.parent.glob(f"{default.name}.keys/*.pub"))
        if (default / "results.csv").is_file():
            command = [python, "-m", "audit.cli", "verify", str(default / "results.csv"), "--bundle", str(default)]
            command += ["--key", str(default_keys[0])] if default_keys else []
            results["default_bundle"] = run_measured([*command, "--out", str(Path(folder) / "default-report")])
            say("default_bundle", results["default_bundle"], DEFAULT_TARGET_S)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    if "default_bundle" not in results:
        print(f"default_bundle: no bundle at {args.default} (make one with `nox -s reproduce`)")
    steps = results["in_process"]
    wall, cpu = steps["wall_s"], steps["cpu_s"]
    print(f"in-process audit: {steps['verdict']}, {wall['total']:.1f} s wall, {cpu['total']:.1f} s CPU; per step:")
    print(f"  {'step':<40} {'wall s':>8} {'share':>6} {'CPU s':>8} {'share':>6}")
    for step in [*sorted(STEPS, key=lambda name: -cpu[name]), "other", *PARTS]:
        print(
            f"  {step:<40} {wall[step]:8.2f} {wall[step] / wall['total']:6.1%} "
            f"{cpu[step]:8.2f} {cpu[step] / cpu['total']:6.1%}"
        )
    print(f"binding share {cpu['binding'] / cpu['total']:.1%} of CPU (target < {BINDING_SHARE:.0%})")
    print(f"in forked processes beside the steps (their CPU is not in this table): {FORKED}: "
          f"{steps['forked_cpu_s']:.1f} s CPU in all")  # fmt: skip
    if steps["not_found"]:
        print(f"step functions not found (update STEPS): {', '.join(steps['not_found'])}")
    for row in steps.get("profile", []):
        print(
            f"  {row['own_s']:7.2f} s own {row['cumulative_s']:7.2f} s cum {row['calls']:>9} calls  {row['function']}"
        )


if __name__ == "__main__":
    main()
