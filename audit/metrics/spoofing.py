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


def _accepted_counts(
    values: FloatArray, codes: NDArray[np.uint8], weights: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """The distinct scores ascending, and per threshold (each of them, then reject-all) each kind's weight of
    trials at or above it: a (thresholds + 1) x 3 array indexed by kind code (row 0: every trial). A kind without
    weight is refused."""
    distinct, group = np.unique(values, return_inverse=True)
    per_group = np.zeros((distinct.size + 1, 3))
    np.add.at(per_group, (group, codes), weights)
    at_or_above = np.cumsum(per_group[::-1], axis=0)[::-1]
    present = np.unique(codes)
    if (at_or_above[0, present] <= 0).any():
        raise MetricInputError("a kind of trial present has no weight: the metric needs weight on each")
    return distinct, at_or_above


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
    model = costs or ADcfCosts()
    values = _scores(scores, "scores")
    codes = trial_kinds(kinds, values.size, _TARGET, _NONTARGET, _SPOOF)
    _, accepted = _accepted_counts(values, codes, trial_weights(weights, values.size))
    totals = accepted[0]
    p_miss = 1.0 - accepted[:, _TARGET] / totals[_TARGET]
    p_fa_non = accepted[:, _NONTARGET] / totals[_NONTARGET]
    p_fa_spoof = accepted[:, _SPOOF] / totals[_SPOOF]
    cost = (
        model.c_miss * model.p_target * p_miss
        + model.c_fa_asv * model.p_nontarget * p_fa_non
        + model.c_fa_cm * model.p_spoof * p_fa_spoof
    )
    trivial = min(model.c_miss * model.p_target, model.c_fa_asv * model.p_nontarget + model.c_fa_cm * model.p_spoof)
    return float(cost.min() / trivial)


@dataclass(frozen=True)
class _AsvRates:
    """An ASV's rates at each of its thresholds (distinct scores ascending, then reject-all), accepting at or
    above: misses of targets, false alarms of non-targets and of spoofs."""

    thresholds: FloatArray  # the distinct scores; the last row of the rates is reject-all
    p_miss: FloatArray
    p_fa_nontarget: FloatArray
    p_fa_spoof: FloatArray


def _asv_rates(values: FloatArray, codes: NDArray[np.uint8], weights: FloatArray) -> _AsvRates:
    distinct, accepted = _accepted_counts(values, codes, weights)
    totals = accepted[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        return _AsvRates(
            distinct,
            1.0 - accepted[:, _TARGET] / totals[_TARGET],
            accepted[:, _NONTARGET] / totals[_NONTARGET],
            accepted[:, _SPOOF] / totals[_SPOOF],
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
    weight = trial_weights(weights, values.size)
    candidates = (codes != _SPOOF) & (weight > 0)  # a trial of weight 0 is absent: its score is no threshold
    distinct, accepted = _accepted_counts(values[candidates], codes[candidates], weight[candidates])
    targets, nontargets = accepted[0, _TARGET], accepted[0, _NONTARGET]
    missed = targets - accepted[:-1, _TARGET]
    gap = np.abs(missed * nontargets - accepted[:-1, _NONTARGET] * targets)
    return float(distinct[int(np.argmin(gap))])


def _cm_rates(cm_values: FloatArray, codes: NDArray[np.uint8], weights: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The CM's miss rate of bona fide trials and false-alarm rate of spoofs at each threshold (distinct scores
    ascending, then reject-all), accepting at or above."""
    bona_fide = np.where(codes == _SPOOF, 1, 0).astype(np.uint8)  # 0 bona fide, 1 spoof, as kind codes
    _, accepted = _accepted_counts(cm_values, bona_fide, weights)
    totals = accepted[0]
    return 1.0 - accepted[:, 0] / totals[0], accepted[:, 1] / totals[1]


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
    model = costs or TDcfCosts()
    cm_values = _scores(cm_scores, "CM scores")
    asv_values = _scores(asv_scores, "ASV scores")
    if cm_values.size != asv_values.size:
        raise MetricInputError(f"{cm_values.size} CM scores but {asv_values.size} ASV scores: one each per trial")
    codes = trial_kinds(kinds, cm_values.size, _TARGET, _NONTARGET, _SPOOF)
    weight = trial_weights(weights, cm_values.size)
    if any(weight[codes == kind].sum() <= 0 for kind in (_TARGET, _NONTARGET, _SPOOF)):
        raise MetricInputError("a kind of trial present has no weight: the metric needs weight on each")
    threshold = asv_eer_threshold(asv_values, codes, weight) if asv_threshold is None else float(asv_threshold)
    accepted = asv_values >= threshold
    p_miss_asv, p_fa_asv, p_fa_spoof_asv = (
        float(weight[codes == kind] @ (accepted[codes == kind] != (kind == _TARGET)) / weight[codes == kind].sum())
        for kind in (_TARGET, _NONTARGET, _SPOOF)
    )
    c0 = model.p_target * model.c_miss * p_miss_asv + model.p_nontarget * model.c_fa * p_fa_asv
    c1 = model.p_target * model.c_miss - c0
    c2 = model.p_spoof * model.c_fa_spoof * p_fa_spoof_asv
    if c1 < 0:
        raise MetricInputError(f"t-DCF undefined: the ASV at threshold {threshold} costs more than rejecting all")
    normaliser = c0 + min(c1, c2)
    if normaliser == 0:
        raise MetricInputError(f"t-DCF undefined: the ASV at threshold {threshold} makes no error and stops spoofs")
    p_miss_cm, p_fa_cm = _cm_rates(cm_values, codes, weight)
    return float(np.min(c0 + c1 * p_miss_cm + c2 * p_fa_cm) / normaliser)


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
    cm_values = _scores(cm_scores, "CM scores")
    asv_values = _scores(asv_scores, "ASV scores")
    if cm_values.size != asv_values.size:
        raise MetricInputError(f"{cm_values.size} CM scores but {asv_values.size} ASV scores: one each per trial")
    codes = trial_kinds(kinds, cm_values.size, _TARGET, _NONTARGET, _SPOOF)
    weight = trial_weights(weights, cm_values.size)
    asv = _asv_rates(asv_values, codes, weight)
    p_miss_cm, p_fa_cm = _cm_rates(cm_values, codes, weight)
    through = 1.0 - p_miss_cm  # bona fide passed by the CM, falling as its threshold rises
    allowed = np.flatnonzero(asv.p_miss < 0.5 * (asv.p_fa_nontarget + asv.p_fa_spoof))
    p_miss_asv, p_fa_non_asv, p_fa_spf_asv = asv.p_miss[allowed], asv.p_fa_nontarget[allowed], asv.p_fa_spoof[allowed]

    def gap(cm_index: NDArray[np.intp]) -> FloatArray:
        """Tandem miss rate less the mean of its two false-alarm rates (non-decreasing in the CM threshold)."""
        passed = through[cm_index]
        false_alarm = 0.5 * (passed * p_fa_non_asv + p_fa_cm[cm_index] * p_fa_spf_asv)
        difference: FloatArray = (1.0 - passed * (1.0 - p_miss_asv)) - false_alarm
        return difference

    def first_at_least(floor: FloatArray) -> NDArray[np.intp]:
        """Per allowed ASV threshold, the first CM threshold whose gap is at least ``floor`` (bisection)."""
        low = np.zeros(allowed.size, dtype=np.intp)
        high = np.full(allowed.size, through.size - 1, dtype=np.intp)  # reject-all: gap 1
        while (low < high).any():
            middle = (low + high) // 2
            reached = gap(middle) >= floor
            high, low = np.where(reached, middle, high), np.where(reached, low, middle + 1)
        return low

    crossing = first_at_least(np.zeros(allowed.size))
    before = np.maximum(crossing - 1, 0)
    below = (crossing > 0) & (-gap(before) <= gap(crossing) + _TIED)  # the last negative gap is as close
    chosen = np.where(below, first_at_least(np.where(below, gap(before), 0.0)), crossing)
    with np.errstate(divide="ignore", invalid="ignore"):
        distance = np.abs(p_fa_non_asv / p_fa_spf_asv - p_fa_cm[chosen] / through[chosen])
    usable = np.isfinite(distance)
    if not usable.any():
        raise MetricInputError("t-EER undefined: the tandem's false-alarm rates never approach each other")
    closest = np.where(usable, distance, np.inf)
    best = int(np.flatnonzero(closest <= closest.min() + _TIED * max(1.0, closest.min()))[0])
    return float(p_fa_cm[chosen[best]] * p_fa_spf_asv[best])
