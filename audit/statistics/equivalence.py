"""Additivity judged against a declared tolerance: TOST equivalence of IE, family summaries, held-out validation."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from audit.statistics.contrasts import estimate_with_interval
from audit.statistics.draws import FloatArray, StatisticsInputError, Verdict

# Equivalence to additivity (TOST)

POWER = 0.8  # the detection rate a power statement is given at


def tost_verdict(ie_draws: FloatArray, margin: float, alpha: float = 0.05) -> dict[str, Any]:
    """Two one-sided tests of ``|IE| < margin`` from bootstrap draws of IE, with these rules:

    - bootstrap p-values ``p_below = share of draws >= margin`` (for H0: IE >= margin) and
      ``p_above = share of draws <= -margin`` (for H0: IE <= -margin); ``p_tost = max`` of the two;
    - ``additive within margin`` when ``p_tost < alpha``: the ``1 - 2*alpha`` percentile interval lies
      inside ``(-margin, margin)``;
    - ``non-additive`` when that interval lies entirely outside ``[-margin, margin]`` (the interaction exceeds
      the margin with one-sided confidence ``1 - alpha``);
    - ``undetermined`` otherwise, including every interval that crosses a margin bound, however close the
      mean is to 0: a small mean is never called equivalence.

    Example:
        Draws spread evenly over [-0.01, 0.01] lie inside a margin of 0.02; shifted by 0.05 they lie outside it;
        shifted by 0.02 their interval crosses the margin, and nothing is concluded:

        >>> draws = np.linspace(-0.01, 0.01, 101)
        >>> tost_verdict(draws, margin=0.02)["verdict"]
        'additive within margin'
        >>> tost_verdict(draws + 0.05, margin=0.02)["verdict"], tost_verdict(draws + 0.02, margin=0.02)["verdict"]
        ('non-additive', 'undetermined')
    """
    if not margin > 0:
        raise StatisticsInputError(f"the equivalence margin must be positive, got {margin}")
    defined = ie_draws[np.isfinite(ie_draws)]
    if defined.size == 0:
        return {"verdict": "undetermined", "margin": margin, "alpha": alpha, "reason": "no defined draws"}
    low, high, missed = np.quantile(defined, [alpha, 1.0 - alpha, 1.0 - POWER])
    p_below = float(np.mean(defined >= margin))
    p_above = float(np.mean(defined <= -margin))
    verdict: Verdict
    if -margin < low and high < margin:
        verdict = "additive within margin"
    elif low > margin or high < -margin:
        verdict = "non-additive"
    else:
        verdict = "undetermined"
    centre = float(defined.mean())
    shown_within = (low + defined - 2.0 * centre > -margin) & (high + defined - 2.0 * centre < margin)
    return {
        "verdict": verdict,
        "margin": margin,
        "alpha": alpha,
        "interval": [float(low), float(high)],
        "interval_level": 1.0 - 2.0 * alpha,
        "p_tost": max(p_below, p_above),
        "n_draws": int(defined.size),
        "power": {
            # What this test could have found, on its own draws taken as the sampling distribution (``family_power``):
            # the smallest |IE| it calls non-additive POWER of the time (its interval's low end, q_alpha + IE + e,
            # above the margin), and how often it shows an exactly additive contrast within the margin.
            "detectable_ie": float(margin - (low - centre) - (missed - centre)),
            "p_within_when_additive": float(np.mean(shown_within)),
        },
    }


def holm_rejections(p_values: Sequence[float], alpha: float) -> int:
    """How many hypotheses Holm's step-down procedure rejects at familywise level ``alpha``: the sorted p-values
    ``p_(j)`` (j = 0, 1, ...) are rejected while ``p_(j) < alpha / (k - j)``.

    Example:
        >>> holm_rejections([0.001, 0.04, 0.012, 0.3], 0.05)  # 0.001 < .05/4, 0.012 < .05/3, 0.04 >= .05/2
        2
    """
    rejected = 0
    for j, p in enumerate(sorted(p_values)):
        if not p < alpha / (len(p_values) - j):
            break
        rejected += 1
    return rejected


FAMILY_RULE = (
    "a family is 'non-additive' when Holm's step-down procedure over its contrasts' tests of |IE| > margin rejects "
    "at least one at familywise level alpha, 'additive within margin' when every contrast's TOST is (an "
    "intersection-union test, level alpha without adjustment), else 'undetermined'"
)


def family_summary(
    ie_estimates: Sequence[float],
    ie_draws: FloatArray,
    tosts: Sequence[Mapping[str, Any]],
    level: float,
    *,
    margin: float,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """A family of contrasts, summarised with familywise error control and so that opposite interactions cannot
    cancel (``FAMILY_RULE``).

    Per contrast (rows of ``ie_draws``, contrasts x resamples) the bootstrap p-value of "|IE| <= margin" is
    ``min(share of draws <= margin, share of draws >= -margin)`` (small when the draws lie beyond one bound); the
    family is ``non-additive`` when Holm rejects one at ``alpha``, so a family of additive contrasts is called
    non-additive at most ``alpha`` of the time however many it holds. ``additive within margin`` needs every
    contrast's TOST (``tosts``: ``tost_verdict`` results; a verdict withheld, e.g. near chance, is not tested
    either way). ``n_outside_margin``: how many contrasts lie outside the margin, at least the Holm rejections of
    "within" and at most the contrasts less the Holm rejections of "outside" (the TOST p-values), each at
    ``(1 - level) / 2``: an interval for the count at ``level`` that an additive family's 0 lies in. It has no point
    estimate: the count of estimates beyond the margin is biased away from 0 by the noise (an exactly additive
    family of 24 contrasts at 15-30 speakers read 12-15 of 24, issue 42), as the mean and maximum of |IE| were; an
    interval from 0 to every tested contrast says the data cannot tell. ``mean_ie`` (signed, the paper's) can cancel.
    ``power``: what the family test could have found (``family_power``).
    """
    estimates = np.asarray(ie_estimates, dtype=float)
    verdicts = [str(tost["verdict"]) for tost in tosts]
    counts = {v: verdicts.count(v) for v in ("additive within margin", "non-additive", "undetermined")}
    tested = [i for i, tost in enumerate(tosts) if "verdict_withheld" not in tost]
    with np.errstate(invalid="ignore"):
        outside = [_p_outside(ie_draws[i], margin) for i in tested]
        within = [float(tosts[i].get("p_tost", 1.0)) for i in tested]
    tail = (1.0 - level) / 2.0
    if counts["additive within margin"] == len(verdicts):
        verdict: Verdict = "additive within margin"
    elif holm_rejections(outside, alpha):
        verdict = "non-additive"
    else:
        verdict = "undetermined"
    with np.errstate(invalid="ignore"):
        return {
            "n_contrasts": int(estimates.size),
            "verdict": verdict,
            "rule": FAMILY_RULE,
            "n_outside_holm": holm_rejections(outside, alpha),
            "contrast_verdicts": counts,
            "n_not_tested": len(verdicts) - len(tested),
            "n_outside_margin": {
                "low": holm_rejections(outside, tail),
                "high": len(tested) - holm_rejections(within, tail),
                "level": level,
            },
            "mean_ie": estimate_with_interval(
                float(np.mean(estimates)), np.mean(ie_draws, axis=0), level, corrected=False
            ),
            "power": family_power(ie_draws[tested], margin, alpha, all_tested=len(tested) == len(verdicts)),
        }


def family_power(ie_draws: FloatArray, margin: float, alpha: float, *, all_tested: bool = True) -> dict[str, Any]:
    """What the family's tests could have found at this audit's own speakers, trials and contrasts, by simulation
    on its draws (contrasts x resamples of IE): each resample's deviations from the draws' mean are one simulated
    data set's estimation errors (the contrasts' joint errors, shared terms and speakers included), and that data
    set's bootstrap draws are the contrast's centred draws moved to its simulated estimate (the draws' shape taken
    as the sampling distribution's, the bootstrap's own approximation). Nothing is redrawn: a few searches over
    sorted draws per contrast.

    - ``detectable_ie``: the smallest |IE| that, in one contrast with every other contrast exactly additive, makes
      the family ``non-additive`` (Holm rejects "|IE| <= margin" for some contrast: its smallest p-value below
      ``alpha / k``) ``POWER`` of the time; the median over which contrast carries it, with the smallest and
      largest (``detectable_ie_range``). Below it an interaction of that size is more likely missed than found.
    - ``p_additive_when_additive``: how often an exactly additive family (every IE 0) is called ``additive within
      margin`` (every contrast's TOST interval inside the margin); 0 when a contrast's verdict is withheld
      (``all_tested`` False), since the family cannot then be called additive.

    Example:
        Three contrasts whose IE draws spread as N(0, 0.005): at margin 0.02 and alpha 0.05 an interaction must be
        about 0.02 + 0.005 * 2.13 (z of 0.05 / 3) + 0.005 * 0.84 (z of 0.8) = 0.035 to be found 80 % of the time,
        and additivity is shown when all three TOST intervals (0.0082 either side) stay inside the margin, about
        0.98 ** 3 of the time:

        >>> draws = np.random.default_rng(0).normal(0.0, 0.005, (3, 4000))
        >>> power = family_power(draws, margin=0.02, alpha=0.05)
        >>> round(power["detectable_ie"], 3), round(power["p_additive_when_additive"], 2)
        (0.035, 0.95)
    """
    draws = np.asarray(ie_draws, dtype=float)
    usable = np.all(np.isfinite(draws), axis=0) if draws.size else np.zeros(0, dtype=bool)
    if draws.shape[0] == 0 or usable.sum() < 2:
        return {"detectable_ie": None, "detectable_ie_range": None, "p_additive_when_additive": None, "power": POWER}
    errors = draws[:, usable] - draws[:, usable].mean(axis=1, keepdims=True)  # simulated estimation errors
    n_contrasts, n_sets = errors.shape
    first_step = alpha / n_contrasts  # Holm rejects something iff its smallest p-value is below alpha / k
    # A contrast's p-value ``min(share of draws <= margin, share >= -margin)`` (``_p_outside``), its draws being its
    # errors moved to a simulated estimate x, is below ``first_step`` exactly when x lies above ``above`` or below
    # ``below``: order statistics of its errors (fewer than first_step * K draws at or under margin - x, or fewer
    # than first_step * K at or over -margin - x).
    ordered = np.sort(errors, axis=1)
    above = margin - ordered[:, math.ceil(first_step * n_sets) - 1]
    last = math.floor(n_sets * (1.0 - first_step))
    below = -margin - ordered[:, last] if last < n_sets else np.full(n_contrasts, -np.inf)
    rejected = (errors > above[:, None]) | (errors < below[:, None])  # every contrast additive
    count = rejected.sum(axis=0)
    others = count - rejected > 0  # per contrast and simulated data set: another contrast is rejected
    low, high = np.zeros(n_contrasts), np.full(n_contrasts, float(above.max() - errors.min()) + 1e-12)
    for _ in range(40):  # bisection of every contrast's size at once: found(high) >= POWER > found(low)
        middle = (low + high) / 2.0
        moved = middle[:, None] + errors
        found = np.mean(others | (moved > above[:, None]) | (moved < below[:, None]), axis=1)
        low, high = np.where(found >= POWER, low, middle), np.where(found >= POWER, middle, high)
    sizes = high
    lows, highs = np.quantile(errors, [alpha, 1.0 - alpha], axis=1)  # each TOST interval's ends, less the estimate
    inside = (lows[:, None] + errors > -margin) & (highs[:, None] + errors < margin)
    return {
        "detectable_ie": float(np.median(sizes)),
        "detectable_ie_range": [float(sizes.min()), float(sizes.max())],
        "p_additive_when_additive": float(np.mean(inside.all(axis=0))) if all_tested else 0.0,
        "power": POWER,
        "n_simulated": int(n_sets),
        "scenario": "one contrast at |IE| = detectable_ie, every other exactly additive",
    }


def _p_outside(draws: FloatArray, margin: float) -> float:
    """Bootstrap p-value of "|IE| <= margin" against IE beyond one of the bounds."""
    defined = draws[np.isfinite(draws)]
    if defined.size == 0:
        return 1.0
    return float(min(np.mean(defined <= margin), np.mean(defined >= -margin)))


# Held-out validation of additive predictions


MIN_QUANTILE_VALUES = 20  # fewer values are listed, not summarised as 5-95 % quantiles


def held_out_validation(
    contrasts: Sequence[Mapping[str, Any]], acceptable_error: float, *, worst: int = 5
) -> dict[str, Any]:
    """Per model, the distribution of prediction errors (observed EER(A+B) minus the additive prediction,
    i.e. IE) over the held-out settings only: nothing is fitted, the prediction has no parameters.

    Each contrast is a mapping with ``model``, ``held_out`` (bool), ``prediction``, ``observed`` and ``key``.
    Reports n, quantiles (5, 25, 50, 75, 95 %) from ``MIN_QUANTILE_VALUES`` errors up (fewer are listed as
    ``errors``, sorted: a 5 % quantile of three values is an interpolation, not a tail), the mean absolute
    error, the share within the predeclared ``acceptable_error``, and the ``worst`` settings by absolute error.
    """
    if not acceptable_error > 0:
        raise StatisticsInputError(f"the acceptable error must be positive, got {acceptable_error}")
    by_model: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for contrast in contrasts:
        if contrast["held_out"]:
            by_model[str(contrast["model"])].append(contrast)
    models: dict[str, Any] = {}
    for model, rows in sorted(by_model.items()):
        errors = np.array([row["observed"] - row["prediction"] for row in rows], dtype=float)
        order = np.argsort(-np.abs(errors), kind="stable")[:worst]
        if errors.size >= MIN_QUANTILE_VALUES:
            quantiles = np.quantile(errors, [0.05, 0.25, 0.5, 0.75, 0.95])
            spread: dict[str, Any] = {
                "quantiles": dict(zip(("q05", "q25", "q50", "q75", "q95"), map(float, quantiles), strict=True))
            }
        else:
            spread = {"errors": sorted(map(float, errors)), "quantiles": None}
        models[model] = {
            "n": int(errors.size),
            **spread,
            "mean_absolute_error": float(np.mean(np.abs(errors))),
            "share_within_acceptable": float(np.mean(np.abs(errors) <= acceptable_error)),
            "worst": [{"key": dict(rows[i]["key"]), "error": float(errors[i])} for i in order],
        }
    return {
        "acceptable_error": acceptable_error,
        "min_quantile_values": MIN_QUANTILE_VALUES,
        "n_held_out": sum(len(rows) for rows in by_model.values()),
        "n_not_held_out": sum(1 for contrast in contrasts if not contrast["held_out"]),
        "models": models,
    }
