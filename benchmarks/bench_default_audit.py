"""A reviewer's check of the default bundle (``audit verify --bundle --key --out``) per stage, in CPU seconds, beside a
floor measured in the same run (issue 43, point 6: under 5 s CPU once numba's cache is warm).

Usage: ``python benchmarks/bench_default_audit.py --bundle DIR --key PUB [--repeats 3] [--against CHECKOUT] [--quick]``.
``DIR`` is a bundle written by ``interbias reproduce`` (``out/default``), ``PUB`` its public key. Each repeat runs, each
in a fresh process (bytecode cached as an install has it: ``installed.py``):

1. the floor: ``import pandas, pandera`` and every file of the bundle read and hashed (BLAKE3), what any audit of
   it must do;
2. the audit with a timer at the end of each of its stages (the CLI's own ``audit_results``, its step functions
   wrapped): start-up and imports, the table audit and bundle verification, the compiled kernels loaded, the
   statistics (their forked parts included, and the forked process that drew the figures needing no statistics,
   joined at their end), the report written (the figures needing the statistics drawn in a fork meanwhile). Each
   stage's line is printed as it finishes: CPU of the process and of its finished children, and wall seconds;
3. ``audit verify`` itself end to end (CPU of the process and its children, wall).

``--against CHECKOUT`` runs 2 and 3 also with ``PYTHONPATH=CHECKOUT`` (another worktree: before and after a change),
alternately. A first run per checkout fills numba's cache and is not counted (``--quick``: one counted run, no
warm-up). CPU seconds are user + system time; the load average is printed before each repeat, since on a shared
machine the wall clock also counts other processes' time.
"""

from __future__ import annotations

import argparse
import importlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from installed import installed_env

TARGET_CPU_S = 5.0


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def floor(bundle: Path) -> None:
    """What any audit of the bundle does: import pandas and pandera, read and hash every file."""
    import blake3
    import pandas  # noqa: F401
    import pandera.pandas  # noqa: F401

    for path in sorted(bundle.rglob("*")):
        if path.is_file():
            blake3.blake3(path.read_bytes()).hexdigest()


def stages(bundle: Path, key: Path, out: Path) -> None:
    """The CLI's ``audit_results`` with a line printed at the end of each stage (CPU since the previous line)."""
    started = time.perf_counter()
    last = [(0.0, 0.0), started]  # process CPU from its start: the interpreter's start-up counts

    def mark(name: str) -> None:
        (own, children), now = _cpu(), time.perf_counter()
        (own_before, children_before), before = last
        print(f"{name}\t{own - own_before:.3f}\t{children - children_before:.3f}\t{now - before:.3f}", flush=True)
        last[:] = [(own, children), now]

    def timed(module: object, attribute: str, name: str) -> None:
        function = getattr(module, attribute)

        def wrapper(*args: object, **kwargs: object) -> object:
            value = function(*args, **kwargs)
            mark(name)
            return value

        setattr(module, attribute, wrapper)

    import audit._cli.verify as cli

    cli.import_quietly()  # audit_results calls it again, which then only starts numba (a bundle's audit)
    mark("start-up and imports")
    import reports

    metrics, verify = importlib.import_module("audit.metrics"), importlib.import_module("audit.verify")
    timed(verify, "audit_table", "table audit and bundle verification")
    timed(metrics, "prepare_kernels", "compiled kernels loaded")
    timed(verify, "finish_audit", "statistics (their forked parts included)")
    timed(reports, "finish_report", "report written (the DET figures drawn beside it)")
    request = verify.AuditRequest(bundle / "results.csv", bundle=bundle, key=cli.check_options(out, bundle, key))
    cli.audit_results(request, out)


def measured(command: list[str], env: dict[str, str], lines: bool) -> tuple[float, float, list[str]]:
    """CPU (the command and its children) and wall seconds of ``command``, run in the folder of ``PYTHONPATH`` (``python
    -m`` imports from its working folder first); with ``lines``, its stage lines, each printed as it comes. Exit 1
    is an audit's FAIL verdict, accepted."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    process = subprocess.Popen(
        command, env=env, cwd=env.get("PYTHONPATH"), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    got = []
    for line in process.stdout:
        if lines and line.count("\t") == 3:
            name, own, children, wall = line.rstrip("\n").split("\t")
            print(f"    {name:<58} {float(own):7.2f} {float(children):9.2f} {float(wall):7.2f}", flush=True)
            got.append(line)
    if process.wait() not in (0, 1):
        raise SystemExit(f"{' '.join(command)} exited {process.returncode}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, time.perf_counter() - start, got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, required=True, help="a bundle of interbias reproduce")
    parser.add_argument("--key", type=Path, required=True, help="its public key")
    parser.add_argument("--repeats", type=int, default=3, help="counted runs per checkout")
    parser.add_argument("--against", type=Path, help="another checkout, run alternately (PYTHONPATH)")
    parser.add_argument("--quick", action="store_true", help="one counted run, no warm-up")
    parser.add_argument("--floor", action="store_true", help=argparse.SUPPRESS)  # the child processes' roles
    parser.add_argument("--stages", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor:
        return floor(args.bundle)
    if args.stages is not None:
        return stages(args.bundle, args.key, args.stages)
    repeats = 1 if args.quick else args.repeats
    here = Path(__file__).resolve()
    checkouts = {"this": Path(os.environ.get("PYTHONPATH") or here.parents[1])}
    if args.against is not None:
        checkouts["against"] = args.against.resolve()
    python = sys.executable
    totals: dict[str, list[float]] = {name: [] for name in checkouts}
    floors = []
    with tempfile.TemporaryDirectory() as folder:
        for name, checkout in checkouts.items():
            env = installed_env(PYTHONPATH=str(checkout))
            command = [python, "-m", "audit.cli", "verify", str(args.bundle / "results.csv"), "--bundle",
                       str(args.bundle), "--key", str(args.key), "--out", str(Path(folder) / name)]  # fmt: skip
            if not args.quick:
                cpu, wall, _ = measured(command, env, lines=False)
                print(f"warm-up ({name}: {checkout}): {cpu:.2f} s CPU, {wall:.2f} s wall", flush=True)
        print(f"{'':4}{'stage':<58} {'CPU s':>7} {'children':>9} {'wall s':>7}", flush=True)
        for repeat in range(repeats):
            load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
            floor_command = [python, str(here), "--bundle", str(args.bundle), "--key", str(args.key), "--floor"]
            cpu, wall, _ = measured(floor_command, installed_env(), lines=False)
            floors.append(cpu)
            print(f"run {repeat + 1}, load average {load}; floor (import pandas, pandera; read and hash the bundle's "
                  f"files): {cpu:.2f} s CPU, {wall:.2f} s wall", flush=True)  # fmt: skip
            for name, checkout in checkouts.items():
                env = installed_env(PYTHONPATH=str(checkout))
                out = Path(folder) / f"{name}-stages"
                print(f"  {name} ({checkout}), per stage:", flush=True)
                stage_command = [python, str(here), "--bundle", str(args.bundle), "--key", str(args.key),
                                 "--stages", str(out)]  # fmt: skip
                cpu, wall, got = measured(stage_command, env, lines=True)
                if len(got) < 5:
                    raise SystemExit(f"{' '.join(stage_command)} stopped after {len(got)} stages")
                print(f"    {'all stages':<58} {cpu:7.2f} {'':9} {wall:7.2f}", flush=True)
                command = [python, "-m", "audit.cli", "verify", str(args.bundle / "results.csv"), "--bundle",
                           str(args.bundle), "--key", str(args.key), "--out", str(Path(folder) / name)]  # fmt: skip
                cpu, wall, _ = measured(command, env, lines=False)
                totals[name].append(cpu)
                print(f"  {name}: audit verify end to end {cpu:.2f} s CPU, {wall:.2f} s wall", flush=True)
    floor_cpu = statistics.median(floors)
    for name, values in totals.items():
        median = statistics.median(values)
        verdict = "meets" if median < TARGET_CPU_S else "MISSES"
        print(f"{name}: audit verify {median:.2f} s CPU (median of {len(values)}), {median / floor_cpu:.1f}x the floor "
              f"({floor_cpu:.2f} s); {verdict} the {TARGET_CPU_S:g} s target")  # fmt: skip


if __name__ == "__main__":
    main()
