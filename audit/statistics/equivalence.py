"""Additivity judged against a declared tolerance: TOST equivalence of IE, family summaries, held-out validation."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from audit.statistics.contrasts import estimate_with_interval
from audit.statistics.draws import FloatArray, StatisticsInputError, Verdict

# Equivalence to additivity (TOST)


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
    low, high = np.quantile(defined, [alpha, 1.0 - alpha])
    p_below = float(np.mean(defined >= margin))
    p_above = float(np.mean(defined <= -margin))
    verdict: Verdict
    if -margin < low and high < margin:
        verdict = "additive within margin"
    elif low > margin or high < -margin:
        verdict = "non-additive"
    else:
        verdict = "undetermined"
    return {
        "verdict": verdict,
        "margin": margin,
        "alpha": alpha,
        "interval": [float(low), float(high)],
        "interval_level": 1.0 - 2.0 * alpha,
        "p_tost": max(p_below, p_above),
        "n_draws": int(defined.size),
    }


def family_summary(
    ie_estimates: Sequence[float], ie_draws: FloatArray, verdicts: Sequence[str], level: float
) -> dict[str, Any]:
    """A family of contrasts, summarised so that opposite interactions cannot cancel.

    ``verdict`` is ``additive within margin`` only when every contrast is, ``non-additive`` when any contrast
    is, else ``undetermined``; the per-contrast verdict counts stand beside it. ``mean_abs_ie`` and
    ``max_abs_ie`` (over contrasts, with intervals from the joint draws, ``ie_draws`` contrasts x resamples)
    cannot cancel; ``mean_ie`` (signed) is kept for the paper's tables and can.
    """
    estimates = np.asarray(ie_estimates, dtype=float)
    counts = {v: list(verdicts).count(v) for v in ("additive within margin", "non-additive", "undetermined")}
    if counts["additive within margin"] == len(verdicts):
        verdict: Verdict = "additive within margin"
    elif counts["non-additive"]:
        verdict = "non-additive"
    else:
        verdict = "undetermined"
    with np.errstate(invalid="ignore"):
        return {
            "n_contrasts": int(estimates.size),
            "verdict": verdict,
            "contrast_verdicts": counts,
            "mean_abs_ie": estimate_with_interval(
                float(np.mean(np.abs(estimates))), np.mean(np.abs(ie_draws), axis=0), level, corrected=False
            ),
            "max_abs_ie": estimate_with_interval(
                float(np.max(np.abs(estimates))), np.max(np.abs(ie_draws), axis=0), level, corrected=False
            ),
            "mean_ie": estimate_with_interval(
                float(np.mean(estimates)), np.mean(ie_draws, axis=0), level, corrected=False
            ),
        }


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
