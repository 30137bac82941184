"""Spoofing-aware verification metrics: SV-, SPF- and SASV-EER, a-DCF, min t-DCF and t-EER.

Trials are of three kinds (``schemas.trials.TrialKind``): targets (code 1), bona fide non-targets (0) and spoofs of
the enrolment speaker (2). A higher score is more target-like (ASV) or more bona fide (countermeasure, CM); a
system accepts a score at or above its threshold. Every curve is taken over the distinct thresholds, so tied scores
move together, with accept-all and reject-all included. The a-DCF, t-DCF and t-EER take optional per-trial
``weights`` (a bootstrap's multiplicities): every rate is then a weighted fraction.

- ``sv_eer``, ``spf_eer``, ``sasv_eer`` (Jung et al., "SASV 2022", Interspeech 2022): the EER of one score
  (``audit.metrics.point.eer``, any EER variant) with targets as positives against bona fide non-targets, against
  spoofs, and against both.
- ``a_dcf`` (Shim et al., "a-DCF", Odyssey 2024): ``min_t (c_miss p_tar Pmiss(t) + c_fa_asv p_non Pfa_non(t) +
  c_fa_cm p_spf Pfa_spf(t))`` of one score, over the better trivial system, ``min(c_miss p_tar, c_fa_asv p_non +
  c_fa_cm p_spf)`` (reject all, accept all). Defaults: the paper's (0.9, 0.05, 0.05; 1, 10, 20).
- ``min_t_dcf`` (Kinnunen et al., "Tandem assessment of spoofing countermeasures and automatic speaker
  verification: fundamentals", IEEE/ACM TASLP 28, 2020, eq. 12 and its normalisation): a CM in front of an ASV
  whose threshold is fixed (by default at its EER point over bona fide trials, ``asv_eer_threshold``); with the
  ASV's rates ``Pmiss_asv``, ``Pfa_asv`` (non-targets) and ``Pfa_spf_asv`` (spoofs), ``C0 = p_tar c_miss
  Pmiss_asv + p_non c_fa Pfa_asv``, ``C1 = p_tar c_miss - C0``, ``C2 = p_spf c_fa_spoof Pfa_spf_asv``, and
  ``min_s (C0 + C1 Pmiss_cm(s) + C2 Pfa_cm(s)) / (C0 + min(C1, C2))``. Defaults: ASVspoof 2019's constants
  (p_spf 0.05, p_tar 0.95 * 0.99, p_non 0.95 * 0.01; c_miss 1, c_fa 10, c_fa_spoof 10), as the ASVspoof 2021 and
  ASVspoof 5 evaluation packages use them.
- ``t_eer`` (Kinnunen et al., "t-EER: parameter-free tandem evaluation of countermeasures and biometric
  comparators", IEEE TPAMI 46, 2024 (online 2023)): for a CM threshold ``c`` and an ASV threshold ``a``, the
  tandem's rates are ``Pmiss = Pmiss_cm + (1 - Pmiss_cm) Pmiss_asv``, ``Pfa_non = (1 - Pmiss_cm) Pfa_non_asv`` and
  ``Pfa_spf = Pfa_cm Pfa_spf_asv`` (the errors taken independent, as the paper does); the concurrent t-EER is their
  common value where the three meet, found on empirical curves by the paper's rule (``t_eer``'s docstring), as
  ASVspoof 5's ``compute_teer`` finds it. Where the rates cannot meet it is the value at their closest approach,
  not the least largest rate (which is lower there, and which this module does not compute).

The CM's curves are taken over bona fide trials (targets and non-targets) against spoofs, the ASV's over the three
kinds, as the ASVspoof 5 evaluation package does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from audit.metrics.point import (
    FloatArray,
    MetricInputError,
    eer,
    finite_scores,
    refuse_other_values,
    trial_weights,
)
from schemas import EerMethod, TrialKind

_TARGET, _NONTARGET, _SPOOF = int(TrialKind.TARGET), int(TrialKind.NONTARGET), int(TrialKind.SPOOF)
_TIED = 1e-12  # t-EER: rates this close are tied (they are ratios of counts; rounding must not choose)


@dataclass(frozen=True)
class ADcfCosts:
    """The a-DCF's priors and costs; defaults as Shim et al. (Odyssey 2024)."""

    p_target: float = 0.9
    p_nontarget: float = 0.05
    p_spoof: float = 0.05
    c_miss: float = 1.0
    c_fa_asv: float = 10.0
    c_fa_cm: float = 20.0

    def __post_init__(self) -> None:
        _check_model((self.p_target, self.p_nontarget, self.p_spoof), (self.c_miss, self.c_fa_asv, self.c_fa_cm))


@dataclass(frozen=True)
class TDcfCosts:
    """The t-DCF's priors and costs; defaults as ASVspoof 2019 (and the 2021 and 5 evaluation packages)."""

    p_target: float = 0.95 * 0.99
    p_nontarget: float = 0.95 * 0.01
    p_spoof: float = 0.05
    c_miss: float = 1.0
    c_fa: float = 10.0
    c_fa_spoof: float = 10.0

    def __post_init__(self) -> None:
        _check_model((self.p_target, self.p_nontarget, self.p_spoof), (self.c_miss, self.c_fa, self.c_fa_spoof))


def _check_model(priors: tuple[float, float, float], costs: tuple[float, float, float]) -> None:
    if not all(0.0 < prior < 1.0 for prior in priors) or abs(sum(priors) - 1.0) > 1e-9:
        raise MetricInputError(f"the priors must lie in (0, 1) and sum to 1, got {priors}")
    if not all(cost > 0 and math.isfinite(cost) for cost in costs):
        raise MetricInputError(f"the costs must be positive and finite, got {costs}")


def trial_kinds(kinds: ArrayLike, size: int, *needed: int) -> NDArray[np.uint8]:
    """``kinds`` checked as codes of ``TrialKind`` (one per trial, ``size`` of them), with every kind in ``needed``
    present."""
    array = np.asarray(kinds)
    if array.ndim != 1 or array.size != size:
        raise MetricInputError(f"expected {size} trial kinds in one dimension, got shape {array.shape}")
    if not np.issubdtype(array.dtype, np.integer):
        raise MetricInputError(f"trial kinds must be integer codes 0, 1, 2, got dtype {array.dtype}")
    other = ~np.isin(array, [_NONTARGET, _TARGET, _SPOOF])
    refuse_other_values(array, other, "trial kinds must be 0 (non-target), 1 (target) or 2 (spoof)")
    codes = array.astype(np.uint8)
    missing = [TrialKind(kind).word for kind in needed if not (codes == kind).any()]
    if missing:
        raise MetricInputError(f"no {' and no '.join(missing)} trials: the metric needs them")
    return codes


def _scores(scores: ArrayLike, name: str) -> FloatArray:
    array = np.asarray(scores)
    if array.ndim != 1 or array.size == 0:
        raise MetricInputError(f"{name} must be a non-empty one-dimensional array, got shape {array.shape}")
    return finite_scores(array, name)


def _eer_between(scores: ArrayLike, kinds: ArrayLike, negatives: tuple[int, ...], method: EerMethod) -> float:
    values = _scores(scores, "scores")
    codes = trial_kinds(kinds, values.size, _TARGET, *negatives)
    kept = np.isin(codes, (_TARGET, *negatives))
    return eer(values[kept], codes[kept] == _TARGET, method)


def sv_eer(scores: ArrayLike, kinds: ArrayLike, method: EerMethod = EerMethod.ROCCH) -> float:
    """EER of targets against bona fide non-targets (spoof trials left out).

    Example:
        >>> sv_eer([0.9, 0.8, 0.1, 0.7], [1, 1, 0, 2])
        0.0
    """
    return _eer_between(scores, kinds, (_NONTARGET,), method)


def spf_eer(scores: ArrayLike, kinds: ArrayLike, method: EerMethod = EerMethod.ROCCH) -> float:
    """EER of targets against spoofs (bona fide non-targets left out).

    Example:
        The spoof at 0.85 outscores one target of two; the hull meets the diagonal at 1/3:

        >>> round(spf_eer([0.9, 0.8, 0.1, 0.85], [1, 1, 0, 2]), 6)
        0.333333
    """
    return _eer_between(scores, kinds, (_SPOOF,), method)


def sasv_eer(scores: ArrayLike, kinds: ArrayLike, method: EerMethod = EerMethod.ROCCH) -> float:
    """EER of targets against non-targets and spoofs together.

    Example:
        Against the non-target at 0.1 and the spoofs at 0.85 and 0.2 the hull runs from (Pfa, Pmiss) = (0, 1/2)
        to (1/3, 0) and meets the diagonal at 1/5:

        >>> round(sasv_eer([0.9, 0.8, 0.1, 0.85, 0.2], [1, 1, 0, 2, 2]), 6)
        0.2
    """
    return _eer_between(scores, kinds, (_NONTARGET, _SPOOF), method)


_NO_WEIGHT = "a kind of trial present has no weight: the metric needs weight on each"
_BLOCK = 1 << 22  # draw x threshold x kind sums per block of draws


def _accepted_counts(
    values: FloatArray, codes: NDArray[np.uint8], weights: FloatArray
) -> tuple[FloatArray, FloatArray, NDArray[np.bool_]]:
    """The distinct scores ascending, and per row of ``weights`` (draws x trials) and threshold (each distinct
    score, then reject-all) each kind's weight of trials at or above it: draws x (thresholds + 1) x 3, indexed by
    kind code (threshold 0: every trial); and the rows in which a kind present has no weight (no metric is defined
    there). Each row's sums run in trial order, as they would for that row alone."""
    distinct, group = np.unique(values, return_inverse=True)
    cells = (distinct.size + 1) * 3
    per_group = np.zeros(weights.shape[0] * cells)
    index = np.arange(weights.shape[0])[:, None] * cells + (group * 3 + codes)[None, :]
    np.add.at(per_group, index.ravel(), weights.ravel())
    at_or_above: FloatArray = np.cumsum(per_group.reshape(weights.shape[0], -1, 3)[:, ::-1], axis=1)[:, ::-1]
    refused: NDArray[np.bool_] = np.asarray((at_or_above[:, 0, np.unique(codes)] <= 0).any(axis=1))
    return distinct, at_or_above, refused


def _weight_rows(weights: ArrayLike, size: int) -> FloatArray:
    """A bootstrap's draws x trials weights checked: finite, >= 0, one column per trial."""
    matrix = np.asarray(weights)
    if matrix.ndim != 2 or matrix.shape[1] != size:
        raise MetricInputError(f"expected draws x {size} trial weights, got shape {matrix.shape}")
    values = finite_scores(matrix, "trial weights")
    refuse_other_values(values.ravel(), values.ravel() < 0, "trial weights must be >= 0")
    return values


def _in_blocks(rows: Callable[[FloatArray], FloatArray], weights: FloatArray, thresholds: int) -> FloatArray:
    """``rows`` of every block of draws (about ``_BLOCK`` sums each), joined: memory stays bounded on long lists."""
    step = max(1, _BLOCK // (3 * (thresholds + 1)))
    return np.concatenate([rows(weights[start : start + step]) for start in range(0, max(1, weights.shape[0]), step)])


def a_dcf(
    scores: ArrayLike, kinds: ArrayLike, costs: ADcfCosts | None = None, weights: ArrayLike | None = None
) -> float:
    """Normalised minimum architecture-agnostic DCF of one (SASV) score per trial.

    Example:
        Thresholds at 0.8 (accepting both targets and the spoof at 0.85) and at 0.86 (missing the target at 0.8)
        cost ``20 * 0.05 * 1/2 = 0.5`` and ``0.9 * 1/2 = 0.45``; over the trivial 0.9 the latter gives 0.5:

        >>> a_dcf([0.9, 0.8, 0.1, 0.85, 0.2], [1, 1, 0, 2, 2])
        0.5
    """
    values = _scores(scores, "scores")
    codes = trial_kinds(kinds, values.size, _TARGET, _NONTARGET, _SPOOF)
    (value,) = _a_dcf_rows(values, codes, trial_weights(weights, values.size)[None, :], costs or ADcfCosts())
    if np.isnan(value):
        raise MetricInputError(_NO_WEIGHT)
    return float(value)


def a_dcf_draws(scores: ArrayLike, kinds: ArrayLike, weights: ArrayLike, costs: ADcfCosts | None = None) -> FloatArray:
    """``a_dcf`` under each row of ``weights`` (a bootstrap's draws x trials), NaN where a kind has no weight: the
    same numbers as one call per row (identical for integer weights), the draws' counts taken together."""
    values = _scores(scores, "scores")
    codes = trial_kinds(kinds, values.size, _TARGET, _NONTARGET, _SPOOF)
    model = costs or ADcfCosts()
    rows = _weight_rows(weights, values.size)
    return _in_blocks(lambda block: _a_dcf_rows(values, codes, block, model), rows, np.unique(values).size)


def _a_dcf_rows(values: FloatArray, codes: NDArray[np.uint8], weights: FloatArray, model: ADcfCosts) -> FloatArray:
    _, accepted, refused = _accepted_counts(values, codes, weights)
    totals = accepted[:, :1]
    with np.errstate(divide="ignore", invalid="ignore"):
        p_miss = 1.0 - accepted[..., _TARGET] / totals[..., _TARGET]
        p_fa_non = accepted[..., _NONTARGET] / totals[..., _NONTARGET]
        p_fa_spoof = accepted[..., _SPOOF] / totals[..., _SPOOF]
        cost = (
            model.c_miss * model.p_target * p_miss
            + model.c_fa_asv * model.p_nontarget * p_fa_non
            + model.c_fa_cm * model.p_spoof * p_fa_spoof
        )
    trivial = min(model.c_miss * model.p_target, model.c_fa_asv * model.p_nontarget + model.c_fa_cm * model.p_spoof)
    value: FloatArray = np.where(refused, np.nan, cost.min(axis=1) / trivial)
    return value


def _asv_rates(
    values: FloatArray, codes: NDArray[np.uint8], weights: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, NDArray[np.bool_]]:
    """An ASV's rates per draw at each of its thresholds (distinct scores ascending, then reject-all), accepting at
    or above: misses of targets, false alarms of non-targets and of spoofs; and the draws where a kind has no
    weight."""
    _, accepted, refused = _accepted_counts(values, codes, weights)
    totals = accepted[:, :1]
    with np.errstate(divide="ignore", invalid="ignore"):
        return (
            1.0 - accepted[..., _TARGET] / totals[..., _TARGET],
            accepted[..., _NONTARGET] / totals[..., _NONTARGET],
            accepted[..., _SPOOF] / totals[..., _SPOOF],
            refused,
        )


def asv_eer_threshold(asv_scores: ArrayLike, kinds: ArrayLike, weights: ArrayLike | None = None) -> float:
    """The ASV threshold of the t-DCF: its EER point over bona fide trials, the distinct target or non-target score
    ``t`` (accepting ``>= t``) at which ``|Pmiss - Pfa|`` over targets and bona fide non-targets is least, the lowest
    such ``t`` on ties.

    Spoof scores are never candidates (Kinnunen et al., TASLP 2020, section IV: the ASV is fixed at its EER
    threshold on bona fide trials; the ASVspoof 2019, 2021 and 5 evaluation packages take it from ``compute_eer``
    over target and non-target ASV scores only, the lowest on ties, as ``argmin`` finds it), nor are the scores of
    trials of weight 0 (absent from a resample: integer weights are repeated trials). The comparison is on counts,
    ``|missed * N - accepted * T|`` for ``T`` targets and ``N`` non-targets (their weights), exact for integer
    weights, so that rounding (``1 - 4/5`` against ``1/5``) never decides a tie. One difference from
    ``compute_eer``: it names the score its curve last rejects, which ``obtain_asv_error_rates`` then accepts
    (``>=``), one bona fide trial below the EER point; here the threshold is the EER point itself.

    Example:
        Targets 0.9 and 0.8, non-targets 0.1 and 0.3: at 0.8 no target is missed and no non-target accepted. The
        spoof at 0.85 is no candidate:

        >>> asv_eer_threshold([0.9, 0.8, 0.1, 0.85, 0.3], [1, 1, 0, 2, 0])
        0.8
    """
    values = _scores(asv_scores, "ASV scores")
    codes = trial_kinds(kinds, values.size, _TARGET, _NONTARGET)
    (threshold,) = _asv_thresholds(values, codes, trial_weights(weights, values.size)[None, :])
    if np.isnan(threshold):
        raise MetricInputError("no bona fide trial has weight: the ASV's EER threshold needs one")
    return float(threshold)


def _asv_thresholds(values: FloatArray, codes: NDArray[np.uint8], weights: FloatArray) -> FloatArray:
    """``asv_eer_threshold`` of each row of ``weights``, NaN where no bona fide trial has weight. A threshold
    whose trials all weigh 0 is no candidate: its gap is set to infinity (its counts, the same as the next
    threshold's, are those of the draw without it)."""
    bona_fide = codes != _SPOOF
    distinct, group = np.unique(values[bona_fide], return_inverse=True)
    _, accepted, _ = _accepted_counts(values[bona_fide], codes[bona_fide], weights[:, bona_fide])
    order = np.argsort(group, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(group[order]) != 0])
    held = np.logical_or.reduceat((weights[:, bona_fide] > 0)[:, order], starts, axis=1)
    targets, nontargets = accepted[:, :1, _TARGET], accepted[:, :1, _NONTARGET]
    missed = targets - accepted[:, :-1, _TARGET]
    gap = np.where(held, np.abs(missed * nontargets - accepted[:, :-1, _NONTARGET] * targets), np.inf)
    threshold: FloatArray = np.where(held.any(axis=1), distinct[np.argmin(gap, axis=1)], np.nan)
    return threshold


def _cm_rates(
    cm_values: FloatArray, codes: NDArray[np.uint8], weights: FloatArray
) -> tuple[FloatArray, FloatArray, NDArray[np.bool_]]:
    """The CM's miss rate of bona fide trials and false-alarm rate of spoofs per draw at each threshold (distinct
    scores ascending, then reject-all), accepting at or above; and the draws where either has no weight."""
    bona_fide = np.where(codes == _SPOOF, 1, 0).astype(np.uint8)  # 0 bona fide, 1 spoof, as kind codes
    _, accepted, refused = _accepted_counts(cm_values, bona_fide, weights)
    totals = accepted[:, :1]
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - accepted[..., 0] / totals[..., 0], accepted[..., 1] / totals[..., 1], refused


def min_t_dcf(
    cm_scores: ArrayLike,
    asv_scores: ArrayLike,
    kinds: ArrayLike,
    costs: TDcfCosts | None = None,
    asv_threshold: float | None = None,
    weights: ArrayLike | None = None,
) -> float:
    """Normalised minimum tandem DCF of a countermeasure in front of an ASV at a fixed threshold (TASLP 2020).

    ``asv_threshold`` defaults to ``asv_eer_threshold``. Undefined (``MetricInputError``) when ``C1 < 0`` (an ASV
    that does worse than rejecting everyone) or when the normaliser is 0 (an error-free ASV that rejects every
    spoof: no countermeasure can help or harm).

    Example:
        An ASV at 0.8 misses no target, accepts no non-target and half the spoofs (``C0 = 0``, ``C1 = 0.9405``,
        ``C2 = 0.25``); a CM that passes every bona fide trial and stops every spoof costs nothing:

        >>> min_t_dcf([5, 4, 3, -1, -2], [0.9, 0.8, 0.1, 0.85, 0.3], [1, 1, 0, 2, 2])
        0.0
        >>> round(min_t_dcf([5, 4, 3, 4.5, -2], [0.9, 0.8, 0.1, 0.85, 0.3], [1, 1, 0, 2, 2]), 6)
        0.5
    """
    cm_values, asv_values, codes = _tandem_inputs(cm_scores, asv_scores, kinds)
    weight = trial_weights(weights, cm_values.size)[None, :]
    model = costs or TDcfCosts()
    values, thresholds, reasons = _min_t_dcf_rows(cm_values, asv_values, codes, weight, model, asv_threshold)
    if reasons[0] == _UNWEIGHTED:
        raise MetricInputError(_NO_WEIGHT)
    if reasons[0] == _COSTLIER:
        raise MetricInputError(f"t-DCF undefined: the ASV at threshold {thresholds[0]} costs more than rejecting all")
    if reasons[0] == _FLAWLESS:
        raise MetricInputError(f"t-DCF undefined: the ASV at threshold {thresholds[0]} makes no error and stops spoofs")
    return float(values[0])


def min_t_dcf_draws(
    cm_scores: ArrayLike,
    asv_scores: ArrayLike,
    kinds: ArrayLike,
    weights: ArrayLike,
    costs: TDcfCosts | None = None,
    asv_threshold: float | None = None,
) -> FloatArray:
    """``min_t_dcf`` under each row of ``weights`` (a bootstrap's draws x trials; the ASV threshold found per
    draw unless given), NaN where it is undefined: the same numbers as one call per row (identical for integer
    weights), the draws' counts taken together."""
    cm_values, asv_values, codes = _tandem_inputs(cm_scores, asv_scores, kinds)
    model = costs or TDcfCosts()
    n_thresholds = max(np.unique(cm_values).size, np.unique(asv_values).size)
    return _in_blocks(
        lambda rows: _min_t_dcf_rows(cm_values, asv_values, codes, rows, model, asv_threshold)[0],
        _weight_rows(weights, cm_values.size),
        n_thresholds,
    )


def _tandem_inputs(
    cm_scores: ArrayLike, asv_scores: ArrayLike, kinds: ArrayLike
) -> tuple[FloatArray, FloatArray, NDArray[np.uint8]]:
    cm_values = _scores(cm_scores, "CM scores")
    asv_values = _scores(asv_scores, "ASV scores")
    if cm_values.size != asv_values.size:
        raise MetricInputError(f"{cm_values.size} CM scores but {asv_values.size} ASV scores: one each per trial")
    return cm_values, asv_values, trial_kinds(kinds, cm_values.size, _TARGET, _NONTARGET, _SPOOF)


_UNWEIGHTED, _COSTLIER, _FLAWLESS = 1, 2, 3  # why a draw has no t-DCF: a kind without weight, C1 < 0, normaliser 0


def _min_t_dcf_rows(
    cm_values: FloatArray,
    asv_values: FloatArray,
    codes: NDArray[np.uint8],
    weights: FloatArray,
    model: TDcfCosts,
    asv_threshold: float | None,
) -> tuple[FloatArray, FloatArray, NDArray[np.int64]]:
    """Per row of ``weights``: the min t-DCF (NaN where undefined), the ASV threshold and why it is undefined
    (0 where it is not)."""
    kind_weights = [weights[:, codes == kind] for kind in (_TARGET, _NONTARGET, _SPOOF)]
    totals = [kind_weight.sum(axis=1) for kind_weight in kind_weights]
    unweighted = (np.stack(totals) <= 0).any(axis=0)
    thresholds = (
        _asv_thresholds(asv_values, codes, weights)
        if asv_threshold is None
        else np.full(weights.shape[0], float(asv_threshold))
    )
    accepted = asv_values[None, :] >= thresholds[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        p_miss_asv, p_fa_asv, p_fa_spoof_asv = (
            (kind_weight * (accepted[:, codes == kind] != (kind == _TARGET))).sum(axis=1) / total
            for kind, kind_weight, total in zip((_TARGET, _NONTARGET, _SPOOF), kind_weights, totals, strict=True)
        )
        c0 = model.p_target * model.c_miss * p_miss_asv + model.p_nontarget * model.c_fa * p_fa_asv
        c1 = model.p_target * model.c_miss - c0
        c2 = model.p_spoof * model.c_fa_spoof * p_fa_spoof_asv
        normaliser = c0 + np.minimum(c1, c2)
        p_miss_cm, p_fa_cm, _ = _cm_rates(cm_values, codes, weights)
        values = (c0[:, None] + c1[:, None] * p_miss_cm + c2[:, None] * p_fa_cm).min(axis=1) / normaliser
    reasons = np.zeros(weights.shape[0], dtype=np.int64)
    reasons[normaliser == 0] = _FLAWLESS
    reasons[c1 < 0] = _COSTLIER
    reasons[unweighted] = _UNWEIGHTED
    return np.where(reasons == 0, values, np.nan), thresholds, reasons


def t_eer(cm_scores: ArrayLike, asv_scores: ArrayLike, kinds: ArrayLike, weights: ArrayLike | None = None) -> float:
    """Concurrent tandem EER (Kinnunen et al., TPAMI 2023): the common value of the tandem's miss, non-target
    false-alarm and spoof false-alarm rates where they meet, by the paper's rule on empirical (step) curves.

    The rule (``compute_teer`` of the ASVspoof 5 evaluation package, spoof prevalence 0.5): for each ASV threshold
    ``a`` whose miss rate is below the mean of its two false-alarm rates (elsewhere no CM threshold brings the
    tandem's miss and false-alarm rates together), the CM threshold ``c(a)`` at which the tandem's miss rate is
    closest to the mean of its two false-alarm rates (the t-EER path); along the path, the point where the two
    false-alarm rates are closest, i.e. where ``Pfa_non_asv / Pfa_spf_asv`` is nearest ``Pfa_cm / (1 - Pmiss_cm)``;
    the value is the tandem's spoof false-alarm rate ``Pfa_cm Pfa_spf_asv`` there. Where the three curves cross,
    that is their common value; where they only approach each other (a CM that passes spoofs in front of an ASV
    that rejects most of them) it is the value at the closest approach, often far above the least largest of the
    three rates. Thresholds are the distinct scores (ties move together); closest is decided to 1e-12 (the rates
    are ratios of counts, so ties are real and rounding must not choose), the lowest threshold on ties. Tested
    equal to the rule in rational arithmetic, and within one spoof trial's step of ``compute_teer`` (which counts
    one curve point per trial and lets rounding break ties) on sets without ties. Undefined
    (``MetricInputError``) when no point of the path has both ratios finite.

    Example:
        Targets N(2, 1), bona fide non-targets N(0, 1) and spoofs N(0.5, 1) on the ASV, behind a CM that cannot
        tell spoofs from bona fide speech: the rates only approach each other, at about 1/2 (the largest of the
        three rates can be brought down to about 0.2 elsewhere, where they are far apart):

        >>> rng = np.random.default_rng(0)
        >>> kinds = np.repeat([1, 0, 2], 2000)
        >>> asv = rng.normal(np.select([kinds == 1, kinds == 2], [2.0, 0.5], 0.0))
        >>> round(t_eer(rng.normal(size=kinds.size), asv, kinds), 2)
        0.49
        >>> t_eer([5, 4, 3, -1, -2], [0.9, 0.8, 0.1, 0.85, 0.3], [1, 1, 0, 2, 2])  # a CM that stops every spoof
        0.0
    """
    cm_values, asv_values, codes = _tandem_inputs(cm_scores, asv_scores, kinds)
    (value,), refused = _t_eer_rows(cm_values, asv_values, codes, trial_weights(weights, cm_values.size)[None, :])
    if refused[0]:
        raise MetricInputError(_NO_WEIGHT)
    if np.isnan(value):
        raise MetricInputError("t-EER undefined: the tandem's false-alarm rates never approach each other")
    return float(value)


def t_eer_draws(cm_scores: ArrayLike, asv_scores: ArrayLike, kinds: ArrayLike, weights: ArrayLike) -> FloatArray:
    """``t_eer`` under each row of ``weights`` (a bootstrap's draws x trials), NaN where it is undefined: the same
    numbers as one call per row (identical for integer weights), every draw's path searched together."""
    cm_values, asv_values, codes = _tandem_inputs(cm_scores, asv_scores, kinds)
    n_thresholds = max(np.unique(cm_values).size, np.unique(asv_values).size)
    return _in_blocks(
        lambda rows: _t_eer_rows(cm_values, asv_values, codes, rows)[0],
        _weight_rows(weights, cm_values.size),
        n_thresholds,
    )


def _t_eer_rows(
    cm_values: FloatArray, asv_values: FloatArray, codes: NDArray[np.uint8], weights: FloatArray
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """The t-EER of each row of ``weights`` (NaN where undefined) and the rows where a kind has no weight: the
    points (draw, allowed ASV threshold) of every draw's path are searched together, each as ``t_eer`` describes."""
    asv_miss, asv_fa_non, asv_fa_spf, asv_refused = _asv_rates(asv_values, codes, weights)
    p_miss_cm, p_fa_cm, cm_refused = _cm_rates(cm_values, codes, weights)
    refused = asv_refused | cm_refused
    through = 1.0 - p_miss_cm  # bona fide passed by the CM, falling as its threshold rises
    with np.errstate(invalid="ignore"):
        draw, allowed = np.nonzero((asv_miss < 0.5 * (asv_fa_non + asv_fa_spf)) & ~refused[:, None])
    p_miss_asv, p_fa_non_asv, p_fa_spf_asv = (
        asv_miss[draw, allowed],
        asv_fa_non[draw, allowed],
        asv_fa_spf[draw, allowed],
    )

    asv_passed = 1.0 - p_miss_asv
    # Each point's CM rates read from its draw's row by one flat index (a third of the time of a 2-d gather): the
    # bisection reads them about 17 times over all the points.
    row_start, through_flat, p_fa_cm_flat = draw * through.shape[1], through.ravel(), p_fa_cm.ravel()

    def gap(cm_index: NDArray[np.intp]) -> FloatArray:
        """Tandem miss rate less the mean of its two false-alarm rates (non-decreasing in the CM threshold)."""
        at = row_start + cm_index
        passed = through_flat.take(at)
        false_alarm = 0.5 * (passed * p_fa_non_asv + p_fa_cm_flat.take(at) * p_fa_spf_asv)
        difference: FloatArray = (1.0 - passed * asv_passed) - false_alarm
        return difference

    def first_at_least(floor: FloatArray) -> NDArray[np.intp]:
        """Per point of the paths, the first CM threshold whose gap is at least ``floor`` (bisection)."""
        low = np.zeros(draw.size, dtype=np.intp)
        high = np.full(draw.size, through.shape[1] - 1, dtype=np.intp)  # reject-all: gap 1
        while (low < high).any():
            middle = (low + high) // 2
            reached = gap(middle) >= floor
            high, low = np.where(reached, middle, high), np.where(reached, low, middle + 1)
        return low

    crossing = first_at_least(np.zeros(draw.size))
    before = np.maximum(crossing - 1, 0)
    below = (crossing > 0) & (-gap(before) <= gap(crossing) + _TIED)  # the last negative gap is as close
    chosen = np.where(below, first_at_least(np.where(below, gap(before), 0.0)), crossing)
    with np.errstate(divide="ignore", invalid="ignore"):
        distance = np.abs(p_fa_non_asv / p_fa_spf_asv - p_fa_cm[draw, chosen] / through[draw, chosen])
    closest = np.where(np.isfinite(distance), distance, np.inf)
    least = np.full(weights.shape[0], np.inf)
    np.minimum.at(least, draw, closest)
    with np.errstate(invalid="ignore"):
        near = np.isfinite(least[draw]) & (closest <= least[draw] + _TIED * np.maximum(1.0, least[draw]))
    best = np.flatnonzero(near)
    rows, first = np.unique(draw[best], return_index=True)  # per draw, its first point as close as the closest
    values = np.full(weights.shape[0], np.nan)
    values[rows] = p_fa_cm[rows, chosen[best[first]]] * p_fa_spf_asv[best[first]]
    return values, refused
