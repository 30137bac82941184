"""What the power statements of issue 42 add to a paper-scale audit's statistics: ``family_summary`` with its power
(``family_power``, and each contrast's TOST power) against the same families' other figures, measured side by side.

Usage: ``python benchmarks/bench_family_power.py [--contrasts 528] [--families 24] [--resamples 1000] [--repeats 5]``.
The paper-scale bundle of ``bench_paper_bundle.py`` (``--lists same``) has 528 contrasts; here their IE draws are
drawn as N(0, 0.01) per contrast (the cost depends on the shapes only), split into ``--families`` families. Prints
the seconds of ``family_summary`` over all families with the power and of the same summary with ``family_power``
replaced by a no-op (the rest: TOSTs, Holm, bounds, mean IE), best of ``--repeats``, and their ratio.
"""

from __future__ import annotations

import argparse
import os
import time
from unittest import mock

import numpy as np

from audit.statistics import equivalence
from audit.statistics.equivalence import family_summary, tost_verdict


def _run(families: list[np.ndarray], margin: float) -> float:
    start = time.perf_counter()
    for draws in families:
        tosts = [tost_verdict(row, margin) for row in draws]
        family_summary(draws.mean(axis=1), draws, tosts, 0.95, margin=margin)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contrasts", type=int, default=528)
    parser.add_argument("--families", type=int, default=24)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="48 contrasts in 4 families x 200 draws, one repeat")
    args = parser.parse_args()
    if args.quick:
        args.contrasts, args.families, args.resamples, args.repeats = 48, 4, 200, 1
    rng = np.random.default_rng(0)
    sizes = np.diff(np.linspace(0, args.contrasts, args.families + 1).astype(int))
    families = [rng.normal(0.0, 0.01, (int(size), args.resamples)) for size in sizes]
    print(f"load average before: {os.getloadavg()}", flush=True)
    with_power = min(_run(families, 0.02) for _ in range(args.repeats))
    print(f"  with power: {with_power:.3f} s", flush=True)
    with mock.patch.object(equivalence, "family_power", lambda *a, **k: {}, create=True):
        without = min(_run(families, 0.02) for _ in range(args.repeats))
    print(f"  family_power a no-op: {without:.3f} s", flush=True)
    print(
        f"{args.contrasts} contrasts in {args.families} families x {args.resamples} draws: family summaries "
        f"{with_power:.3f} s with power, {without:.3f} s with family_power a no-op (TOST power still in): "
        f"family_power adds {with_power - without:.3f} s ({with_power / without:.2f}x)"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
