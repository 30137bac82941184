"""Coverage of the calibration-transfer intervals (``audit.statistics.calibration``), by simulation with known truth.

Usage: ``python benchmarks/calibration_coverage.py [--designs 10x10,20x40] [--datasets 300] [--resamples 400]
[--workers 2] [--json]``. A design ``DxE`` has D development and E evaluation speakers, 10 target and 10 non-target
trials each. Scores: a target ``m + u_s + e``, a non-target ``-m + c_s + c_t + e`` (speaker effects on both sides,
unit trial noise, ``u`` of SD 0.566 and ``c`` of SD 0.4 so that both classes' marginal variance is ``V = 1.32``);
the map is fitted (Platt's targets, prior 0.5, as the default run declares) on the development speakers' clean
trials (``m = 1.5``) and applied to a degraded evaluation condition (``m = 1.0``), where it is miscalibrated, or
(``--condition clean``) to the clean condition itself, where it is calibrated and both losses are 0. Truth,
by numerical integration over the marginal normal classes: the population's map (the fit on 4,000 development
speakers), its Cllr and actDCF on the evaluation population, the population's minCllr (its LLR is linear, so the
best monotone map is the true LLR) and minDCF, and the two losses. Per metric and operating point (p_target 0.01,
the default's, and 0.2) the coverage of the audit's 95 % intervals (``audit``: ``_interval``'s rule on the
refitted draws: basic for the minima, a loss's percentile interval of its actual part's draws less the minimum's
reflected ones, percentile for Cllr and actDCF), beside the percentile, Efron's BC and basic intervals of the same
draws and the percentile interval of draws under the map held fixed (the intervals
before issue 42), with the Monte-Carlo standard error, and the share of the audit's (bias-corrected) estimates
outside their own interval. Not a timing: a statistics check too large for the
test suite.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
from scipy import integrate
from scipy.special import ndtr

from audit.metrics.calibration import LinearCalibration, fit_logistic_calibration
from audit.statistics.calibration import (
    METRICS,
    CalibrationInput,
    DevelopmentTrials,
    _draws,
    _estimates,
    _interval,
    refitted_maps,
)
from audit.statistics.contrasts import SpeakerDraws
from audit.statistics.draws import bias_corrected_interval, percentile_interval

PER_SPEAKER = 10
TARGET_SD, SIDE_SD = 0.566, 0.4  # speaker effects: equal marginal variances, 1 + 0.566^2 = 1 + 2 * 0.4^2
VARIANCE = 1.0 + TARGET_SD**2
DEV_MEAN = 1.5
EVAL_MEAN = {"degraded": 1.0, "clean": DEV_MEAN}  # the map transfers to a degraded condition, or to its own
P_TARGETS = (0.01, 0.2)
KINDS = ("audit", "percentile", "bc", "basic", "fixed map")


def trials(rng: np.random.Generator, prefix: str, n: int, mean: float) -> tuple[np.ndarray, ...]:
    """Enrolment and test speakers, labels and scores of ``n`` speakers with 10 targets and 10 non-targets each."""
    own = np.repeat(np.arange(n), PER_SPEAKER)
    other = (own + rng.integers(1, n, own.size)) % n
    target_effect, side_effect = rng.normal(0, TARGET_SD, n), rng.normal(0, SIDE_SD, n)
    targets = mean + target_effect[own] + rng.normal(0, 1, own.size)
    nontargets = -mean + side_effect[own] + side_effect[other] + rng.normal(0, 1, own.size)
    names = np.array([f"{prefix}{i}" for i in range(n)])
    labels = np.r_[np.ones(own.size, bool), np.zeros(own.size, bool)]
    return names[np.r_[own, own]], names[np.r_[own, other]], labels, np.r_[targets, nontargets]


def _cost_integral(fit: LinearCalibration, mean: float, target: bool) -> float:
    sd = math.sqrt(VARIANCE)
    sign = -1.0 if target else 1.0
    centre = mean if target else -mean

    def density_cost(x: float) -> float:
        return (
            math.exp(-0.5 * ((x - centre) / sd) ** 2)
            / (sd * math.sqrt(2 * math.pi))
            * float(np.logaddexp(0.0, sign * (fit.scale * x + fit.offset)))
        )

    return float(integrate.quad(density_cost, centre - 12 * sd, centre + 12 * sd)[0])


def truth(fit: LinearCalibration, p_target: float, mean: float) -> dict[str, float]:
    """The metrics of ``fit`` on the evaluation population (classes N(+-mean, VARIANCE)), and the population's own
    best: minCllr of its true LLR ``2 m s / V`` and minDCF at its Bayes threshold."""
    sd = math.sqrt(VARIANCE)
    best = LinearCalibration(2 * mean / VARIANCE, 0.0)
    values = {}
    for name, line in (("", fit), ("min_", best)):
        cllr = (_cost_integral(line, mean, True) + _cost_integral(line, mean, False)) / (2 * math.log(2))
        threshold = (math.log((1 - p_target) / p_target) - line.offset) / line.scale  # in score units
        p_miss, p_fa = ndtr((threshold - mean) / sd), 1 - ndtr((threshold + mean) / sd)
        dcf = (p_target * p_miss + (1 - p_target) * p_fa) / min(p_target, 1 - p_target)
        values["cllr" if not name else "min_cllr"] = cllr
        values["act_dcf" if not name else "min_dcf"] = dcf
    values["cllr_minus_min_cllr"] = values["cllr"] - values["min_cllr"]
    values["act_dcf_minus_min_dcf"] = values["act_dcf"] - values["min_dcf"]
    return values


def population_map(seed: int) -> LinearCalibration:
    *_, labels, scores = trials(np.random.default_rng(seed), "p", 4000, DEV_MEAN)
    return fit_logistic_calibration(scores, labels, 0.5, platt=True)


def _chunk(task: tuple[int, int, int, int, int, LinearCalibration, float]) -> dict[str, Any]:
    n_dev, n_eval, start, n_datasets, n_resamples, pop_map, eval_mean = task
    rng = np.random.default_rng(1_000_003 * n_dev + 1009 * n_eval + start)
    truths = {p: truth(pop_map, p, eval_mean) for p in P_TARGETS}
    hits = {(p, kind, name): 0 for p in P_TARGETS for kind in KINDS for name in METRICS}
    outside = {(p, name): 0 for p in P_TARGETS for name in METRICS}
    degenerate = {p: 0 for p in P_TARGETS}
    for index in range(n_datasets):
        dev_e, dev_t, dev_l, dev_s = trials(rng, "d", n_dev, DEV_MEAN)
        ev_e, ev_t, ev_l, ev_s = trials(rng, "e", n_eval, eval_mean)
        fit = fit_logistic_calibration(dev_s, dev_l, 0.5, platt=True)
        development = DevelopmentTrials(dev_s, dev_l, dev_e, dev_t, 0.5, True)
        draws = SpeakerDraws.of([dev_e, dev_t, ev_e, ev_t], n_resamples, start + index)
        maps = refitted_maps(development, draws)
        for p in P_TARGETS:
            record = CalibrationInput({}, fit, ev_s, ev_l, ev_e, ev_t, (p, 1.0, 1.0), development)
            estimates = _estimates(record)
            refit = _draws(record, draws, maps)
            fixed = _draws(record, draws, None)
            for name in METRICS:
                value, drawn = estimates[name], refit[name]
                defined = drawn[np.isfinite(drawn)]
                intervals = {
                    "audit": _interval(name, estimates, refit, 0.95),
                    "percentile": percentile_interval(drawn, 0.95),
                    "bc": bias_corrected_interval(drawn, value, 0.95),
                    "basic": {
                        "low": 2 * value - float(np.quantile(defined, 0.975)),
                        "high": 2 * value - float(np.quantile(defined, 0.025)),
                    },
                    "fixed map": percentile_interval(fixed[name], 0.95),
                }
                for kind, interval in intervals.items():
                    hits[(p, kind, name)] += interval["low"] <= truths[p][name] <= interval["high"]
                audit = intervals["audit"]
                outside[(p, name)] += not audit["low"] <= audit["estimate"] <= audit["high"]
                if name == "act_dcf":
                    degenerate[p] += defined.min() == defined.max()
    return {
        "n_datasets": n_datasets,
        "hits": {"|".join(map(str, key)): value for key, value in hits.items()},
        "outside": {"|".join(map(str, key)): value for key, value in outside.items()},
        "degenerate": {str(p): value for p, value in degenerate.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", default="10x10,20x40", help="comma-separated DEVxEVAL speaker counts")
    parser.add_argument("--datasets", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--condition", choices=sorted(EVAL_MEAN), default="degraded", help="the evaluated condition")
    parser.add_argument("--quick", action="store_true", help="design 10x10, 25 data sets, 100 resamples")
    args = parser.parse_args()
    if args.quick:
        args.designs, args.datasets, args.resamples = "10x10", 25, 100
    pop_map = population_map(7)
    designs = [tuple(int(n) for n in design.split("x")) for design in args.designs.split(",")]
    chunk = 25
    tasks = [
        (n_dev, n_eval, start, min(chunk, args.datasets - start), args.resamples, pop_map, EVAL_MEAN[args.condition])
        for n_dev, n_eval in designs
        for start in range(0, args.datasets, chunk)
    ]
    results: list[dict[str, Any]] = []
    started = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        for at, result in enumerate(pool.map(_chunk, tasks)):  # in order: a design is done at its last chunk
            results.append(result)
            if at + 1 == len(tasks) or tasks[at + 1][:2] != tasks[at][:2]:
                elapsed = time.perf_counter() - started
                print(f"done: design {tasks[at][0]} x {tasks[at][1]} ({elapsed:.0f} s)", file=sys.stderr, flush=True)
    rows = []
    for n_dev, n_eval in designs:
        parts = [r for t, r in zip(tasks, results, strict=True) if t[:2] == (n_dev, n_eval)]
        total = sum(part["n_datasets"] for part in parts)
        for p in P_TARGETS:
            for name in METRICS:
                row: dict[str, Any] = {"dev": n_dev, "eval": n_eval, "p_target": p, "metric": name, "n": total}
                for kind in KINDS:
                    rate = sum(part["hits"][f"{p}|{kind}|{name}"] for part in parts) / total
                    row[kind] = round(rate, 3)
                row["mc_se"] = round(math.sqrt(0.95 * 0.05 / total), 3)
                row["outside"] = round(sum(part["outside"][f"{p}|{name}"] for part in parts) / total, 3)
                if name == "act_dcf":
                    row["degenerate"] = round(sum(part["degenerate"][str(p)] for part in parts) / total, 3)
                rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"population map: llr = {pop_map.scale:.4f} s {pop_map.offset:+.4f}; evaluated condition {args.condition}")
    print("| dev x eval | p_target | metric | " + " | ".join(KINDS) + " | audit: estimate outside |")
    print("|---|---|---|" + "---|" * (len(KINDS) + 1))
    for row in rows:
        cells = " | ".join(f"{row[kind]:.3f}" for kind in (*KINDS, "outside"))
        print(f"| {row['dev']} x {row['eval']} | {row['p_target']} | {row['metric']} | {cells} |")
    print(f"Monte-Carlo SE at 0.95: {rows[0]['mc_se']:.3f} per cell ({rows[0]['n']} data sets)")


if __name__ == "__main__":
    main()
