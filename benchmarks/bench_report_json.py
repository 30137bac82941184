"""What writing ``report.json`` costs and weighs (issue 43 point 2): the standard library's indented writer (main until
the report's tables and one-line containers, ``json.dumps(..., indent=2)``) and ``reports.report_json``, each on the
report.json of an audit before and after a change of its shape, alternated.

Usage: ``PYTHONPATH=. python benchmarks/bench_report_json.py BEFORE/report.json AFTER/report.json [--rounds 5]
[--quick]``. Prints each round's CPU seconds (``time.process_time``) per writer and shape as the round finishes, then
per writer and shape the bytes, the lines and the median, and checks that both writers give the same value
(``--quick``: one round). A loaded report.json stands for the audit's report dict, which the audit has made
JSON-safe already.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from reports import report_json
from schemas import json_safe


def indented_json(report: Mapping[str, Any]) -> str:
    """The writer before: the standard library's, indented by 2 throughout (it then encodes in Python)."""
    return json.dumps(json_safe(report), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def main(before_path: str, after_path: str, rounds: int = 5) -> None:
    shapes = {name: json.loads(Path(path).read_text(encoding="utf-8")) for name, path in
              (("before", before_path), ("after", after_path))}  # fmt: skip
    writers: dict[str, Callable[[Mapping[str, Any]], str]] = {"indented": indented_json, "report_json": report_json}
    runs = [(writer, shape) for shape in shapes for writer in writers]
    times: dict[tuple[str, str], list[float]] = {run: [] for run in runs}
    for round_number in range(1, rounds + 1):
        for writer, shape in runs:
            start = time.process_time()
            writers[writer](shapes[shape])
            times[(writer, shape)].append(time.process_time() - start)
        spent = ", ".join(f"{writer} on {shape} {times[(writer, shape)][-1]:.2f}" for writer, shape in runs)
        print(f"round {round_number}: CPU s {spent}", flush=True)
    for writer, shape in runs:
        text = writers[writer](shapes[shape])
        spent = sorted(times[(writer, shape)])
        print(
            f"{writer} on the {shape} shape: {len(text.encode()) / 1e6:.2f} MB, {text.count(chr(10)):,} lines; CPU s "
            f"{' '.join(f'{t:.2f}' for t in times[(writer, shape)])} (median {spent[len(spent) // 2]:.2f})"
        )
    for report in shapes.values():
        assert json.loads(report_json(report)) == json.loads(indented_json(report)) == report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", help="report.json of the audit before the change")
    parser.add_argument("after", help="report.json of the audit after it")
    parser.add_argument("--rounds", type=int, default=5, help="alternated rounds of the four writer and shape pairs")
    parser.add_argument("--quick", action="store_true", help="one round: a run check")
    args = parser.parse_args()
    main(args.before, args.after, 1 if args.quick else args.rounds)
