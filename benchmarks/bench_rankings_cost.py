"""What the paired rankings of issue 41 add to a paper-scale audit's statistics, measured side by side.

Usage (from the repository root): ``PYTHONPATH=. python benchmarks/bench_rankings_cost.py [--scale 0.25]
[--repeats 2] [--keep DIR]``. Writes the paper-scale bundle of ``bench_paper_bundle.py`` (``write_paper_bundle``,
padded, same-list contrasts; ``--scale`` multiplies its trial budgets), audits its table and bundle once, then times
``statistics_of_bundle`` (contrasts, families, subgroup settings, rankings, design audit) with the rankings and with
their inputs replaced by none, alternately, ``--repeats`` times each: wall-clock seconds, and CPU seconds of the
process and its forked parts; and the settings and pairs the rankings covered and how many records' draws this
process computed (the draw cache's misses; the records no contrast uses are drawn in the fork beside).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
import time
from pathlib import Path
from unittest import mock

import audit.statistics.bundle as statistics_bundle
from audit.statistics import statistics_of_bundle
from audit.statistics.contrasts import DrawCache
from audit.verify import AuditRequest, audit_table
from runner.rehearsal import write_paper_bundle


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.25)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp()) / "paper"
    if not (root / "results.csv").exists():
        write_paper_bundle(root, scale=args.scale, pad=True, same_list_contrasts=True)
    table = audit_table(AuditRequest(root / "results.csv", bundle=root, key=Path(f"{root}.pub")))
    usable, verified = table.rows.usable, table.verified
    contrasts = [*table.contrast_set.contrasts, *table.contrast_set.complement]
    misses = []
    get = DrawCache.get

    def counting(self: DrawCache, record, part, scores, compute, *rest):  # type: ignore[no-untyped-def]
        key_count = len(self._values)
        value = get(self, record, part, scores, compute, *rest)
        misses.append(len(self._values) > key_count)
        return value

    timings: dict[str, list[tuple[float, float]]] = {"with rankings": [], "without": []}
    for _ in range(args.repeats):
        for name in timings:
            print(f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}: {name}")
            with contextlib.ExitStack() as stack:
                stack.enter_context(mock.patch.object(DrawCache, "get", counting))
                if name == "without":
                    stack.enter_context(mock.patch.object(statistics_bundle, "ranking_inputs", lambda *_: ([], [])))
                misses.clear()
                start, cpu = time.perf_counter(), _cpu()
                statistics, _, _ = statistics_of_bundle(usable, contrasts, verified)
                timings[name].append((time.perf_counter() - start, _cpu() - cpu))
            computed = sum(misses)
            if statistics and "rankings" in statistics:
                rankings = statistics["rankings"]
                pairs = sum(len(s["pairs"]) for s in rankings["settings"])
                print(f"  {len(rankings['settings'])} settings, {pairs} pairs; {computed} record draws computed")
            else:
                print(f"  {computed} record draws computed")
    for name, seconds in timings.items():
        each = "; ".join(f"{wall:.2f} s wall, {cpu:.2f} s CPU" for wall, cpu in seconds)
        print(f"{name}: statistics {each}")


def _cpu() -> float:
    """CPU seconds of this process and of its joined children (the forked parts of the statistics)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


if __name__ == "__main__":
    main()
