"""Coupling of IE and its additive prediction under additivity: the correlation the shared terms imply."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from audit.statistics.contrasts import contrast_values
from audit.statistics.draws import FloatArray, percentile_interval
from audit.table import TERMS

# Coupling of IE and prediction


def coupling_under_additivity(
    estimates: Sequence[Mapping[str, float]], draws: Sequence[Mapping[str, FloatArray]], level: float = 0.95
) -> dict[str, Any]:
    """Observed correlation of IE with the prediction across contrasts, beside the correlation expected when
    every contrast is exactly additive and only the trial noise of the bootstrap remains.

    IE = EER(A+B) - prediction shares the prediction's terms with the opposite sign, so noise alone makes
    them negatively correlated. The measured estimates already carry their noise once, so none is added again:
    with the prediction's bootstrap variance averaged over contrasts (``noise_var_prediction``) and the observed
    spread of the predictions across contrasts (signal plus noise), each simulation ``s`` (a resample of the
    audit's draws) takes the predictions' centres shrunk to a signal spread drawn for that simulation (the spread of
    the estimates plus another draw's deviations, less twice the noise: the signal spread's own estimation error is
    in the range; taken as known, the range held the observed r 74-81 % of the time in the textbook case) plus
    their draw-``s`` deviations, against IE = the draw-``s`` deviations of IE, and correlates them across contrasts.
    The expected r is the median of these correlations, the range their percentile interval: contrasts that share
    terms and speakers (one clean term, shared levels) share their draws' deviations, which the simulation keeps
    and a per-contrast formula (the contrasts' mean covariance over their mean variances) does not: on 24 contrasts
    sharing one clean term and six B levels that formula said -0.86 where the observed r averaged -0.76 and the
    simulations' median -0.78 (issue 42).
    """
    if len(estimates) < 3:
        return {"n_contrasts": len(estimates), "observed": None, "expected_under_additivity": None}
    point = {term: np.array([e[term] for e in estimates]) for term in TERMS}
    prediction, ie = _prediction_and_ie(point)
    observed = _correlation(prediction, ie)
    stacked = {term: np.vstack([d[term] for d in draws]) for term in TERMS}  # contrasts x resamples
    prediction_draws, ie_draws = _prediction_and_ie(stacked)
    usable = np.all(np.isfinite(prediction_draws) & np.isfinite(ie_draws), axis=0)
    if usable.sum() < 2 or not np.all(np.isfinite(prediction)):
        return {"n_contrasts": len(estimates), "observed": observed, "expected_under_additivity": None}
    d_prediction = prediction_draws[:, usable] - prediction_draws[:, usable].mean(axis=1, keepdims=True)
    d_ie = ie_draws[:, usable] - ie_draws[:, usable].mean(axis=1, keepdims=True)
    noise_var_prediction = float(np.mean(np.mean(d_prediction**2, axis=1)))
    spread = float(np.var(prediction))
    # The signal spread (the predictions' spread less their noise) is itself estimated: each simulation draws it
    # from the spread of another resample's predictions (the estimates plus that resample's noise, so signal plus
    # twice the noise), which carries the estimate's own sampling error into the range.
    other = np.roll(d_prediction, 1, axis=1)
    signal = np.maximum(np.var(prediction[:, None] + other, axis=0) - 2.0 * noise_var_prediction, 0.0)
    shrink = np.sqrt(signal / spread) if spread > 0 else np.zeros_like(signal)
    simulated = prediction.mean() + (prediction - prediction.mean())[:, None] * shrink[None, :] + d_prediction
    correlations = _columns_correlation(simulated, d_ie)  # NaN where a draw has no spread: counted as n_undefined
    return {
        "n_contrasts": len(estimates),
        "observed": observed,
        "expected_under_additivity": {
            "r": float(np.nanmedian(correlations)) if np.isfinite(correlations).any() else None,
            **percentile_interval(correlations, level),
            "n_simulations": int(np.isfinite(correlations).sum()),
            "noise_share_of_prediction_spread": float(min(1.0, noise_var_prediction / spread)) if spread else 1.0,
        },
    }


def _prediction_and_ie(terms: Mapping[str, FloatArray]) -> tuple[FloatArray, FloatArray]:
    values = contrast_values(dict(terms))
    return values["prediction"], values["ie"]


def _columns_correlation(x: FloatArray, y: FloatArray) -> FloatArray:
    """Pearson correlation of each column of ``x`` with the same column of ``y`` (NaN where one has no spread)."""
    dx, dy = x - x.mean(axis=0), y - y.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray((dx * dy).sum(axis=0) / np.sqrt((dx**2).sum(axis=0) * (dy**2).sum(axis=0)), dtype=float)


def _correlation(x: FloatArray, y: FloatArray) -> float | None:
    """Pearson correlation; None when either side is undefined or has no spread (strict JSON has no NaN)."""
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))) or np.std(x) == 0 or np.std(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])
