"""The paired encoder comparisons of issue 41 on a simulation with known truth, at full size.

Usage (from the repository root): ``PYTHONPATH=. python benchmarks/bench_rankings.py [--speakers 30] [--families 1000]
[--resamples 1000] [--encoders 4] [--method rocch] [--pilot 200]``.

The generator is the tests' own (``tests/audit/statistics/ranking_simulation.py``: speaker effects on both sides of
non-target trials, speaker-by-encoder effects, a trial effect every encoder shares; true EERs in closed form), not the
code under test. Two figures, each with its Monte-Carlo standard error ``sqrt(p (1 - p) / n)``:

1. equal encoders (``--encoders`` of them, every true EER 0.1): the share of families in which Holm calls some pair
   "separable" (at most 5 % is the claim);
2. the MDD's meaning: two encoders whose true EERs differ by the MDD the comparison states at that difference. The
   MDD depends on the difference (a worse encoder's EER is noisier), so the difference is found as a fixed point: a
   pilot of ``--pilot`` families at 0.065 gives the median stated MDD, a second pilot at that difference gives the next;
   ``--families`` families at the second value then count how often Holm finds the pair (about 80 % is the claim).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from audit.statistics import SpeakerDraws, paired_rankings, ranking_speaker_ids
from schemas import EerMethod
from tests.audit.statistics.ranking_simulation import PairedDesign


def families(design: PairedDesign, n: int, resamples: int, method: EerMethod, seed: int) -> tuple[float, float]:
    """Share of ``n`` simulated families with a separable pair, and the median MDD the comparisons state (over the
    families that state one: with few speakers no difference may be found 80 % of the time, and the MDD is none)."""
    rng = np.random.default_rng(seed)
    found, mdds = 0, []
    for index in range(n):
        setting = design.dataset(rng)
        draws = SpeakerDraws.of(ranking_speaker_ids([setting]), resamples, seed * 100_000 + index)
        family = paired_rankings([setting], draws, eer_method=method)["families"]["simulation"]
        found += family["n_separable"] > 0
        mdds.append(family["mdd"])
    stated = [mdd for mdd in mdds if mdd is not None]
    if len(stated) < n:
        print(f"  {n - len(stated)} of {n} families state no MDD")
    return found / n, float(np.median(stated)) if stated else float("nan")


def se(p: float, n: int) -> float:
    return float(np.sqrt(p * (1.0 - p) / n))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speakers", type=int, default=30)
    parser.add_argument("--families", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--encoders", type=int, default=4)
    parser.add_argument("--method", default="rocch", choices=["interp", "legacy", "rocch"])
    parser.add_argument("--pilot", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="40 families of 200 resamples, pilots of 20: a run check")
    args = parser.parse_args()
    if args.quick:
        args.families, args.resamples, args.pilot = 40, 200, 20
    method, n = EerMethod(args.method), args.families
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    start = time.perf_counter()
    equal = PairedDesign(n_speakers=args.speakers, eers=(0.1,) * args.encoders)
    rate, mdd_equal = families(equal, n, args.resamples, method, seed=1)
    print(
        f"equal encoders ({args.encoders}, {args.speakers} speakers, {method}): separable in {rate:.3f} of {n} "
        f"families (MC SE {se(rate, n):.3f}); median stated MDD {mdd_equal:.4f}"
    )
    difference = 0.065
    for step in (2, 3):
        _, difference = families(
            PairedDesign(args.speakers, (0.1, 0.1 + difference)), args.pilot, args.resamples, method, step
        )
        print(f"pilot {step - 1}: median stated MDD {difference:.4f}")
    rate, stated = families(PairedDesign(args.speakers, (0.1, 0.1 + difference)), n, args.resamples, method, seed=4)
    print(
        f"two encoders, true EERs 0.1 and {0.1 + difference:.4f} (difference = the stated MDD {difference:.4f}): found "
        f"separable in {rate:.3f} of {n} families (MC SE {se(rate, n):.3f}); median MDD stated there {stated:.4f}"
    )
    print(f"{time.perf_counter() - start:.1f} s wall")


if __name__ == "__main__":
    main()
