"""Calibration metrics: Cllr, minCllr (after PAV), actDCF at the Bayes threshold, and linear logistic calibration.

A score is *calibrated* when it is a log-likelihood ratio, ``llr = log p(s | target) / p(s | non-target)`` (natural
log). Cosine scores are not: ``fit_logistic_calibration`` maps them to LLRs by a line fitted, as BOSARIS does, by
prior-weighted logistic regression on a development set (never on the trials being evaluated).

- ``cllr``: ``Cllr = 1 / (2 ln 2) * (mean_tar log(1 + e^-llr) + mean_non log(1 + e^llr))`` in bits; 1 for a system
  that always says ``llr = 0``, 0 for a perfect, confident one (Brümmer and du Preez, CSL 20, 2006).
- ``min_cllr``: the Cllr of the best monotone recalibration of the scores (pool-adjacent-violators on the tie
  groups: the ROC convex hull's slopes), so ``Cllr - minCllr`` is the calibration loss (Brümmer and du Preez 2006;
  van Leeuwen and Brümmer, LNCS 4343, 2007; BOSARIS ``min_cllr``, PYLLR ``min_cllr``).
- ``act_dcf``: the detection cost when the LLRs are thresholded where Bayes' rule says, ``llr >=
  log(c_fa (1 - p) / (c_miss p))``, normalised like ``min_dcf`` by ``min(c_miss p, c_fa (1 - p))`` (NIST SRE;
  ASVspoof 5's ``compute_actDCF``). ``actDCF >= minDCF``; the gap is what miscalibration costs at that operating point.

Labels are 1 (target) and 0 (non-target), as in ``audit.metrics.point``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from audit.metrics.point import (
    NEGLIGIBLE_WEIGHT,
    FloatArray,
    MetricInputError,
    finite_scores,
    refuse_other_values,
    scores_and_labels,
    trial_weights,
)

_NEWTON_STEPS = 100
_NEWTON_TOLERANCE = 1e-12


def _cross_entropy_bits(llrs: FloatArray, targets: NDArray[np.bool_], weights: FloatArray) -> float:
    """The Cllr sum, each class's costs averaged with ``weights``; ``logaddexp`` keeps it finite where
    ``log1p(exp(-llr))`` overflows, ±inf LLRs on the right side cost 0, and a trial of weight 0 costs nothing."""
    with np.errstate(invalid="ignore"):  # NaN LLRs (pools of no weight) are left out below
        costs = np.logaddexp(0.0, np.where(targets, -llrs, llrs))
    weighed = weights > 0
    means = []
    for in_class in (targets, ~targets):
        total = float(weights[in_class].sum())
        if total <= 0:
            raise MetricInputError("one class has no weight: targets and non-targets are both needed")
        kept = in_class & weighed
        means.append(float(weights[kept] @ costs[kept]) / total)
    return sum(means) / (2.0 * math.log(2.0))


def _llrs_and_labels(llrs: ArrayLike, labels: ArrayLike) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Checked LLRs and a target mask: as ``scores_and_labels``, except that an LLR may be ``±inf`` (a certain
    decision, as PAV gives), never NaN."""
    array = np.asarray(llrs)
    if not np.issubdtype(array.dtype, np.floating):
        return scores_and_labels(array, labels)
    finite_stand_in = np.where(np.isinf(array), 0.0, array)
    _, targets = scores_and_labels(finite_stand_in, labels)
    return array.astype(np.float64, copy=False), targets


def cllr(llrs: ArrayLike, labels: ArrayLike, weights: ArrayLike | None = None) -> float:
    """Log-likelihood-ratio cost in bits: ``(mean_tar log2(1 + e^-llr) + mean_non log2(1 + e^llr)) / 2``.

    Args:
        llrs: one natural-log likelihood ratio per trial (calibrated scores); ``±inf`` is a certain decision.
        labels: 1 for a target trial, 0 for a non-target.
        weights: per-trial weights (a bootstrap's multiplicities) for the class means; all 1 when None.

    Example:
        A system that always answers ``llr = 0`` costs exactly one bit; targets at ``ln 3`` and non-targets at
        ``-ln 3`` cost ``log2(4 / 3)``:

        >>> cllr([0.0, 0.0], [1, 0])
        1.0
        >>> round(cllr([math.log(3), -math.log(3)], [1, 0]), 6)
        0.415037
    """
    values, targets = _llrs_and_labels(llrs, labels)
    return _cross_entropy_bits(values, targets, trial_weights(weights, values.size))


@dataclass(frozen=True)
class TieGroups:
    """Trials grouped by tied score, in ascending score order: all PAV needs of the scores, worked out once so that
    many weightings of the same trials (a bootstrap's resamples) cost a pass over the trials each, not a sort."""

    group: NDArray[np.int64]  # per trial, its tie group
    targets: NDArray[np.bool_]
    n_groups: int

    @classmethod
    def of(cls, scores: ArrayLike, labels: ArrayLike) -> TieGroups:
        values, targets = scores_and_labels(scores, labels)
        distinct, group = np.unique(values, return_inverse=True)
        return cls(group.astype(np.int64), targets, distinct.size)

    def counts(self, weights: ArrayLike | None = None) -> tuple[FloatArray, FloatArray]:
        """Each tie group's target and non-target weight under ``weights`` (one pass over the trials)."""
        weight = trial_weights(weights, self.group.size)
        sizes = np.bincount(self.group, weights=weight, minlength=self.n_groups)
        targets = np.bincount(self.group, weights=weight * self.targets, minlength=self.n_groups)
        return targets.astype(np.float64), np.asarray(sizes - targets, dtype=np.float64)

    def draw_minima(
        self,
        multiplicities: FloatArray,
        enrol: NDArray[np.int64],
        partner: NDArray[np.int64],
        p_target: float = 0.01,
        c_miss: float = 1.0,
        c_fa: float = 1.0,
    ) -> tuple[FloatArray, FloatArray]:
        """minCllr and minDCF of every draw of a speaker bootstrap (``min_cllr_of_draws`` and ``min_dcf_of_draws``
        of each draw's tie-group weights, the same bits), in one compiled pass per draw that keeps no draws x groups
        array: a trial weighs ``multiplicities[draw, enrol] * multiplicities[draw, partner]`` (draws x speakers; the
        codes index its columns), as ``audit.statistics.SpeakerDraws.trial_weights`` weighs it. A bootstrap of few
        speakers repeats itself: pass its distinct draws (``audit.statistics.SpeakerDraws.distinct``)."""
        import audit.metrics.calibration_kernels as kernels

        weights = finite_scores(multiplicities, "speaker multiplicities")
        codes = [np.asarray(code, dtype=np.int64) for code in (enrol, partner)]
        if weights.ndim != 2 or any(code.shape != self.group.shape for code in codes):
            raise MetricInputError(f"expected draws x speakers and {self.group.size} codes of each side")
        if any(code.size and (code.min() < 0 or code.max() >= weights.shape[1]) for code in codes):
            raise MetricInputError(f"speaker codes must index the {weights.shape[1]} columns of the multiplicities")
        refuse_other_values(weights.ravel(), weights.ravel() < 0, "speaker multiplicities must be >= 0")
        bayes_threshold(p_target, c_miss, c_fa)  # the costs checked
        enrol_codes, partner_codes = codes
        minima: tuple[FloatArray, FloatArray] = kernels.minima_of_draws(
            np.ascontiguousarray(weights), enrol_codes, partner_codes, self.group, self.targets, self.n_groups,
            c_miss * p_target, c_fa * (1.0 - p_target),
        )  # fmt: skip
        return minima

    def pool_llrs(self, weights: ArrayLike | None = None) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Each tie group's LLR under PAV (``group_llrs``), and its target and non-target weight."""
        targets, nontargets = self.counts(weights)
        return group_llrs(targets, nontargets), targets, nontargets

    def min_cllr(self, weights: ArrayLike | None = None) -> float:
        """minCllr of the trials under ``weights`` (``min_cllr_of_groups`` of their group weights)."""
        return min_cllr_of_groups(*self.counts(weights))


def distinct_rows(rows: FloatArray) -> tuple[FloatArray, NDArray[np.int64]]:
    """``numpy.unique(rows, axis=0, return_inverse=True)``: the distinct rows in the same (lexicographic) order and
    each row's position among them, from one stable sort per column and a comparison of neighbours; unique sorts
    the rows as structured items, six times slower on a bootstrap's 1,000 draws of a few speakers (at least one
    column: a record has trials)."""
    order = np.lexsort(rows.T[::-1])  # the first column the primary key
    ordered = rows[order]
    starts = np.ones(order.size, dtype=bool)
    starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    inverse = np.empty(order.size, dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[starts], inverse


def group_llrs(targets: FloatArray, nontargets: FloatArray) -> FloatArray:
    """The PAV LLR of each tie group from its target and non-target weight, groups in ascending score order.

    Each group's target fraction is pooled with its neighbours until the fractions rise with the score
    (``calibration_kernels.pav_blocks``, weighted by the group sizes); a pool of ``t`` targets and ``n``
    non-targets has ``llr = log((t / T) / (n / N))``, the slope of its ROC convex hull edge, so equal odds give
    exactly 0 on integer weights. Pools of one class get ``±inf``; a group of weight 0 enters PAV with a negligible
    weight, moving no pool, and its LLR is NaN if it pools alone."""
    from audit.metrics.calibration_kernels import pav_blocks

    sizes = targets + nontargets
    empty = sizes == 0
    rates = np.divide(targets, sizes, out=np.full(sizes.size, 0.5), where=~empty)
    starts = pav_blocks(rates, np.where(empty, NEGLIGIBLE_WEIGHT, sizes), increasing=True)[:-1]
    pool_targets = np.add.reduceat(targets, starts)
    pool_nontargets = np.add.reduceat(sizes, starts) - pool_targets
    n_target = float(targets.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        pool_llr = np.log(pool_targets * (sizes.sum() - n_target)) - np.log(pool_nontargets * n_target)
    llrs: FloatArray = np.repeat(pool_llr, np.diff(np.append(starts, sizes.size)))
    return llrs


def min_cllr_of_groups(targets: FloatArray, nontargets: FloatArray) -> float:
    """minCllr from the tie groups' target and non-target weights (ascending score order): the Cllr of their PAV
    LLRs, each group's costs weighed by its weight of each class; for callers that count the groups themselves
    (a bootstrap's draws)."""
    llrs = group_llrs(targets, nontargets)
    total_targets, total_nontargets = float(targets.sum()), float(nontargets.sum())
    if total_targets <= 0 or total_nontargets <= 0:
        raise MetricInputError("one class has no weight: targets and non-targets are both needed")
    held, other = targets > 0, nontargets > 0  # a pool of no weight of a class costs that class nothing
    target_cost = float(np.logaddexp(0.0, -llrs[held]) @ targets[held]) / total_targets
    nontarget_cost = float(np.logaddexp(0.0, llrs[other]) @ nontargets[other]) / total_nontargets
    return (target_cost + nontarget_cost) / (2.0 * math.log(2.0))


def min_cllr_of_draws(targets: ArrayLike, nontargets: ArrayLike) -> FloatArray:
    """``min_cllr_of_groups`` of each row of tie-group weights (a bootstrap's draws x groups, ascending score
    order), NaN on a row that leaves a class without weight: PAV runs on every row in one compiled loop
    (``audit.metrics.calibration_kernels``), as the statistics measure a thousand draws of a record at a time.

    Example:
        The groups of ``min_cllr``'s example, then a draw that leaves the non-targets out:

        >>> min_cllr_of_draws([[0, 0, 1, 1], [0, 0, 1, 1]], [[1, 1, 0, 0], [0, 0, 0, 0]]).tolist()
        [0.0, nan]
    """
    import audit.metrics.calibration_kernels as kernels

    values: FloatArray = kernels.min_cllr_rows(*_group_weights(targets, nontargets))
    return values


def min_dcf_of_draws(
    targets: ArrayLike, nontargets: ArrayLike, p_target: float = 0.01, c_miss: float = 1.0, c_fa: float = 1.0
) -> FloatArray:
    """``min_dcf`` of each row of tie-group weights (draws x groups, ascending score order; a threshold accepts a
    group and those above it, or none), NaN on a row that leaves a class without weight: one compiled pass per row,
    beside ``min_cllr_of_draws``. Sums of integer weights (a bootstrap's) are exact in any order.

    Example:
        Non-target 0.1, target 0.35, non-target 0.4, target 0.8 at even odds: the best thresholds (0.35, 0.8)
        accept one non-target or miss one target of two, cost 0.5 * 0.5 over the trivial 0.5:

        >>> min_dcf_of_draws([[0, 1, 0, 1]], [[1, 0, 1, 0]], p_target=0.5).tolist()
        [0.5]
    """
    import audit.metrics.calibration_kernels as kernels

    target_rows, nontarget_rows = _group_weights(targets, nontargets)
    bayes_threshold(p_target, c_miss, c_fa)  # the costs checked
    values: FloatArray = kernels.min_dcf_rows(target_rows, nontarget_rows, c_miss * p_target, c_fa * (1.0 - p_target))
    return values


def _group_weights(targets: ArrayLike, nontargets: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Draws x groups of target and non-target weights, checked (finite, >= 0, one shape) and C-contiguous."""
    target_rows = finite_scores(np.asarray(targets, dtype=np.float64), "target weights")
    nontarget_rows = finite_scores(np.asarray(nontargets, dtype=np.float64), "non-target weights")
    if target_rows.ndim != 2 or target_rows.shape != nontarget_rows.shape:
        raise MetricInputError(
            f"expected draws x groups of target and non-target weights of one shape, got {target_rows.shape} and "
            f"{nontarget_rows.shape}"
        )
    for rows, name in ((target_rows, "target"), (nontarget_rows, "non-target")):
        refuse_other_values(rows.ravel(), rows.ravel() < 0, f"{name} weights must be >= 0")
    return np.ascontiguousarray(target_rows), np.ascontiguousarray(nontarget_rows)


def pav_llrs(scores: ArrayLike, labels: ArrayLike, weights: ArrayLike | None = None) -> FloatArray:
    """The LLR of each trial under the best monotone (non-decreasing) map of the scores: PAV on the tie groups
    (``TieGroups.pool_llrs``: tied scores must get one LLR).

    Example:
        Non-target 0.1, target 0.35, non-target 0.4, target 0.8: the middle two pool at ``p = 1/2``:

        >>> pav_llrs([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]).tolist()
        [-inf, 0.0, 0.0, inf]
    """
    groups = TieGroups.of(scores, labels)
    llrs: FloatArray = groups.pool_llrs(weights)[0][groups.group]
    return llrs


def min_cllr(scores: ArrayLike, labels: ArrayLike, weights: ArrayLike | None = None) -> float:
    """Cllr after the best monotone recalibration (``pav_llrs``): the discrimination part of Cllr, in bits.

    Ties are one group, so the value does not depend on the order of tied trials. ``minCllr <= Cllr`` for any
    LLRs whose order is the scores' order, and ``minCllr <= 1`` (a constant LLR of 0 is one monotone map). Many
    weightings of the same trials: ``TieGroups.of(scores, labels).min_cllr(weights)``.

    Example:
        PAV gives ``-inf, 0, 0, +inf`` (see ``pav_llrs``): the two pooled trials cost one bit each, the others none,
        one bit over four trials of two classes:

        >>> min_cllr([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
        0.5
    """
    return TieGroups.of(scores, labels).min_cllr(weights)


def bayes_threshold(p_target: float, c_miss: float = 1.0, c_fa: float = 1.0) -> float:
    """The LLR above which accepting costs less than rejecting: ``log(c_fa (1 - p_target) / (c_miss p_target))``.

    Example:
        >>> bayes_threshold(0.5)
        0.0
        >>> round(bayes_threshold(0.01), 4)
        4.5951
    """
    if not 0.0 < p_target < 1.0:
        raise MetricInputError(f"p_target must lie strictly between 0 and 1, got {p_target}")
    if not (c_miss > 0 and c_fa > 0 and math.isfinite(c_miss) and math.isfinite(c_fa)):
        raise MetricInputError(f"c_miss and c_fa must be positive and finite, got {c_miss} and {c_fa}")
    return math.log(c_fa * (1.0 - p_target)) - math.log(c_miss * p_target)


def act_dcf(
    llrs: ArrayLike,
    labels: ArrayLike,
    p_target: float = 0.01,
    c_miss: float = 1.0,
    c_fa: float = 1.0,
    weights: ArrayLike | None = None,
) -> float:
    """Normalised detection cost of accepting ``llr >= bayes_threshold(p_target, c_miss, c_fa)``.

    ``(c_miss p Pmiss + c_fa (1 - p) Pfa) / min(c_miss p, c_fa (1 - p))`` with ``Pmiss`` the targets below the
    threshold and ``Pfa`` the non-targets at or above it (weighted by ``weights`` when given). Defaults as
    ``min_dcf``'s.

    Example:
        At ``p_target`` 0.5 the threshold is 0: one target of two is missed (LLR -1), no non-target accepted,
        cost ``0.5 * 0.5`` over the trivial 0.5:

        >>> act_dcf([2.0, -1.0, -3.0, -0.5], [1, 1, 0, 0], p_target=0.5)
        0.5
    """
    threshold = bayes_threshold(p_target, c_miss, c_fa)
    values, targets = _llrs_and_labels(llrs, labels)
    weight = trial_weights(weights, values.size)
    target_weight, nontarget_weight = float(weight[targets].sum()), float(weight[~targets].sum())
    if target_weight <= 0 or nontarget_weight <= 0:
        raise MetricInputError("one class has no weight: targets and non-targets are both needed")
    p_miss = float(weight[targets] @ (values[targets] < threshold)) / target_weight
    p_fa = float(weight[~targets] @ (values[~targets] >= threshold)) / nontarget_weight
    weight_miss, weight_fa = c_miss * p_target, c_fa * (1.0 - p_target)
    return (weight_miss * p_miss + weight_fa * p_fa) / min(weight_miss, weight_fa)


def bayes_error_curve(llrs: ArrayLike, labels: ArrayLike, prior_log_odds: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """The normalised Bayes error of ``llrs`` (actual) and of their PAV recalibration (minimum) at each effective
    prior log-odds: the two curves of the normalised Bayes error-rate plot (Brümmer and du Preez, CSL 2006;
    BOSARIS' ``ape_plot``), unit costs, so each point is ``act_dcf`` at ``p_target = sigmoid(log-odds)`` and the
    minimum is ``min_dcf`` there. The gap between them is what the calibration costs at that operating point.

    Example:
        Targets 3 and 1, non-targets -2 and 0.5: at even odds the threshold 0 accepts the non-target 0.5 (cost 0.5);
        the scores separate the classes, so the best monotone map costs nothing:

        >>> actual, minimum = bayes_error_curve([3.0, 1.0, -2.0, 0.5], [1, 1, 0, 0], [0.0])
        >>> actual.tolist(), minimum.tolist()
        ([0.5], [0.0])
    """
    values, targets = _llrs_and_labels(llrs, labels)
    best = pav_llrs(values, targets)
    priors = 1.0 / (1.0 + np.exp(-np.asarray(prior_log_odds, dtype=np.float64)))
    actual = np.array([act_dcf(values, targets, float(prior)) for prior in priors])
    minimum = np.array([act_dcf(best, targets, float(prior)) for prior in priors])
    return actual, minimum


@dataclass(frozen=True)
class LinearCalibration:
    """``llr = scale * score + offset``, fitted by ``fit_logistic_calibration`` at ``prior``."""

    scale: float
    offset: float
    prior: float = 0.5

    def apply(self, scores: ArrayLike) -> FloatArray:
        """The calibrated LLRs of ``scores`` (finite numbers)."""
        llrs: FloatArray = self.scale * finite_scores(scores) + self.offset
        return llrs


def fit_logistic_calibration(
    scores: ArrayLike,
    labels: ArrayLike,
    prior: float = 0.5,
    *,
    platt: bool = False,
    weights: ArrayLike | None = None,
) -> LinearCalibration:
    """Linear calibration by prior-weighted logistic regression (BOSARIS ``train_linear_calibration``).

    Minimises ``prior * mean_tar softplus(-(a s + b + logit prior)) + (1 - prior) * mean_non softplus(a s + b +
    logit prior)``, the Cllr at that prior, over ``(a, b)`` by Newton's method with step halving (the objective is
    convex); ``llr = a s + b``. ``weights`` (a bootstrap's multiplicities) weigh each class's mean; integer weights
    are repeated trials. Many weightings at once: ``fit_logistic_calibration_draws``.

    With ``platt`` the labels are Platt's smoothed targets (Platt, "Probabilistic outputs for support vector
    machines", 1999, section 2.2): a target counts as ``(N_tar + 1) / (N_tar + 2)`` of a target, a non-target as
    ``1 / (N_non + 2)``, as if one more trial of each class had been seen. The loss is then bounded below away from
    zero, so separating scores (a small development set, a good encoder) have a finite fit, whose slope shrinks
    as the set shrinks; with ``prior`` the targets' share it is scikit-learn's ``_sigmoid_calibration``.

    What no line can fit is refused (``MetricInputError`` naming why), never fitted to rounding noise: scores that
    are constant, or constant to rounding (their range within ``1e-12`` of their magnitude: ``0.7`` repeated has a
    standard deviation of 1e-16, not 0), which carry no slope; and, without Platt's targets, scores that separate
    the classes completely (every target above every non-target, or below) or quasi-completely (the same but for
    ties at the boundary), whose likelihood has no finite maximum (Albert and Anderson, Biometrika 71, 1984).

    Example:
        Target and non-target scores drawn as ``N(+1, 1)`` and ``N(-1, 1)`` have the LLR ``2 s``; the fit on 20,000
        trials finds about that, with or without Platt's targets. Six scores of 0.7 have no slope:

        >>> rng = np.random.default_rng(0)
        >>> labels = np.repeat([1, 0], 10_000)
        >>> scores = rng.normal(2 * labels - 1, 1.0)
        >>> fitted = fit_logistic_calibration(scores, labels)
        >>> round(fitted.scale, 1), round(fitted.offset, 1)
        (2.0, -0.0)
        >>> round(fit_logistic_calibration(scores, labels, platt=True).scale, 1)
        2.0
        >>> fit_logistic_calibration([0.7] * 6, [1, 0, 1, 0, 1, 0], platt=True)
        Traceback (most recent call last):
        audit.metrics.point.MetricInputError: the calibration scores are constant (6 trials at 0.7): no slope to fit
    """
    values, targets = scores_and_labels(scores, labels)
    _check_prior(prior)
    weight = trial_weights(weights, values.size)[None, :]
    (reason,) = _unfittable(values, targets, weight, platt=platt)
    if reason:
        kept = values[weight[0] > 0]
        raise MetricInputError(_UNFITTABLE[reason].format(n=kept.size, at=float(kept[0]) if kept.size else math.nan))
    scale, offset = _fit_lines(values, targets, weight, prior, platt)
    if not np.isfinite(scale[0]):
        raise MetricInputError(_UNFITTABLE[_SINGULAR])
    return LinearCalibration(float(scale[0]), float(offset[0]), prior)


def fit_logistic_calibration_draws(
    scores: ArrayLike, labels: ArrayLike, weights: ArrayLike, prior: float = 0.5, *, platt: bool = False
) -> tuple[FloatArray, FloatArray]:
    """``fit_logistic_calibration`` under each row of ``weights`` (a bootstrap's resamples x trials): the scales and
    offsets, NaN on a row the fit refuses (a class without weight, constant or, without ``platt``, separating
    scores, or a singular fit). All rows are fitted together (Newton steps on every row at once).

    Example:
        The second row leaves out the non-target at 0.4: the rest separate, and only Platt's targets fit them:

        >>> rows = np.array([[1, 1, 1, 1, 1], [1, 1, 0, 1, 1]])
        >>> scale, _ = fit_logistic_calibration_draws([0.1, 0.3, 0.4, 0.35, 0.9], [0, 0, 0, 1, 1], rows)
        >>> bool(np.isfinite(scale[0])), bool(np.isnan(scale[1]))
        (True, True)
        >>> scale, _ = fit_logistic_calibration_draws([0.1, 0.3, 0.4, 0.35, 0.9], [0, 0, 0, 1, 1], rows, platt=True)
        >>> bool(np.isfinite(scale).all())
        True
    """
    values, targets = scores_and_labels(scores, labels)
    _check_prior(prior)
    matrix = np.asarray(weights)
    if matrix.ndim != 2 or matrix.shape[1] != values.size:
        raise MetricInputError(f"expected resamples x {values.size} trial weights, got shape {matrix.shape}")
    matrix = finite_scores(matrix, "trial weights")
    refuse_other_values(matrix, matrix < 0, "trial weights must be >= 0")
    fittable = np.flatnonzero(_unfittable(values, targets, matrix, platt=platt) == 0)
    scale, offset = np.full(matrix.shape[0], np.nan), np.full(matrix.shape[0], np.nan)
    if fittable.size:
        scale[fittable], offset[fittable] = _fit_lines(values, targets, matrix[fittable], prior, platt)
    return scale, offset


def _check_prior(prior: float) -> None:
    if not 0.0 < prior < 1.0:
        raise MetricInputError(f"the calibration prior must lie strictly between 0 and 1, got {prior}")


_FLAT = 1e-12  # scores whose range is within this share of their magnitude are constant to rounding
_NO_CLASS, _CONSTANT, _ROUNDING, _SEPARATED, _QUASI_SEPARATED, _SINGULAR = range(1, 7)
_UNFITTABLE = {
    _NO_CLASS: "one class has no weight: targets and non-targets are both needed",
    _CONSTANT: "the calibration scores are constant ({n} trials at {at:.6g}): no slope to fit",
    _ROUNDING: "the calibration scores are constant to rounding ({n} trials at {at:.6g}): no slope to fit",
    _SEPARATED: "the calibration scores separate targets from non-targets (complete separation): logistic "
    "regression has no finite fit",
    _QUASI_SEPARATED: "the calibration scores separate targets from non-targets but for ties at the boundary "
    "(quasi-complete separation): logistic regression has no finite fit",
    _SINGULAR: "the calibration fit is numerically singular (its curvature vanished): the scores give no usable line",
}


def _unfittable(
    values: FloatArray, targets: NDArray[np.bool_], weights: FloatArray, *, platt: bool
) -> NDArray[np.int64]:
    """Per row of ``weights``, 0 where a line can be fitted to the trials of positive weight, else the reason's code
    (``_UNFITTABLE``): a class without weight; constant scores, exactly or to rounding; complete or (ties at the
    boundary) quasi-complete separation, which only Platt's targets can fit."""
    kept = weights > 0
    in_target, in_nontarget = kept & targets, kept & ~targets

    def extreme(mask: NDArray[np.bool_], lowest: bool) -> FloatArray:
        extremum: FloatArray = np.where(mask, values, np.inf if lowest else -np.inf)
        return extremum.min(axis=1) if lowest else extremum.max(axis=1)

    target_low, target_high = extreme(in_target, True), extreme(in_target, False)
    nontarget_low, nontarget_high = extreme(in_nontarget, True), extreme(in_nontarget, False)
    low, high = np.minimum(target_low, nontarget_low), np.maximum(target_high, nontarget_high)
    with np.errstate(invalid="ignore"):
        flat = high - low <= _FLAT * np.maximum(np.abs(low), np.abs(high))
    reasons = np.zeros(weights.shape[0], dtype=np.int64)
    if not platt:
        quasi = (target_low == nontarget_high) | (target_high == nontarget_low)
        reasons[quasi] = _QUASI_SEPARATED
        reasons[(target_low > nontarget_high) | (target_high < nontarget_low)] = _SEPARATED
    reasons[flat & (high > low)] = _ROUNDING
    reasons[high == low] = _CONSTANT
    reasons[~in_target.any(axis=1) | ~in_nontarget.any(axis=1)] = _NO_CLASS
    return reasons


def _fit_lines(
    values: FloatArray, targets: NDArray[np.bool_], weights: FloatArray, prior: float, platt: bool
) -> tuple[FloatArray, FloatArray]:
    """Newton's method with step halving on every row of ``weights`` at once (the objective of
    ``fit_logistic_calibration``, convex in the line): scales and offsets, NaN where the curvature vanished. The
    scores are standardised first (their mean and spread over all trials), which changes no fitted line."""
    centre, spread = float(values.mean()), float(values.std())
    x = (values - centre) / spread
    n_target = (weights * targets).sum(axis=1, keepdims=True)
    n_nontarget = (weights * ~targets).sum(axis=1, keepdims=True)
    weighed = weights * np.where(targets, prior / n_target, (1.0 - prior) / n_nontarget)
    truth = (
        np.where(targets, (n_target + 1.0) / (n_target + 2.0), 1.0 / (n_nontarget + 2.0))
        if platt
        else np.broadcast_to(targets.astype(np.float64), weights.shape)
    )
    prior_logit = math.log(prior / (1.0 - prior))

    def logits(slope: FloatArray, intercept: FloatArray) -> FloatArray:
        z: FloatArray = slope[:, None] * x + intercept[:, None] + prior_logit
        return z

    def loss(rows: NDArray[np.intp], slope: FloatArray, intercept: FloatArray) -> FloatArray:
        z, t = logits(slope, intercept), truth[rows]
        return np.asarray((weighed[rows] * (t * np.logaddexp(0.0, -z) + (1.0 - t) * np.logaddexp(0.0, z))).sum(axis=1))

    slope, intercept = np.zeros(weights.shape[0]), np.zeros(weights.shape[0])
    current = loss(np.arange(weights.shape[0]), slope, intercept)
    active = np.arange(weights.shape[0])
    for _ in range(_NEWTON_STEPS):
        if not active.size:
            break
        w, a, b = weighed[active], slope[active], intercept[active]
        posterior = 0.5 * (1.0 + np.tanh(logits(a, b) / 2.0))  # sigmoid, stable at both ends
        residual, curvature = w * (posterior - truth[active]), w * posterior * (1.0 - posterior)
        g_a, g_b = residual @ x, residual.sum(axis=1)
        h_aa, h_ab, h_bb = curvature @ (x * x), curvature @ x, curvature.sum(axis=1)
        determinant = h_aa * h_bb - h_ab**2
        singular = ~(determinant > 0)
        slope[active[singular]] = intercept[active[singular]] = np.nan
        with np.errstate(divide="ignore", invalid="ignore"):
            step_a, step_b = (h_bb * g_a - h_ab * g_b) / determinant, (h_aa * g_b - h_ab * g_a) / determinant
        length = np.ones(active.size)
        candidate = loss(active, a - step_a, b - step_b)
        while (worse := (candidate > current[active]) & (length > _NEWTON_TOLERANCE) & ~singular).any():
            length[worse] /= 2.0
            candidate[worse] = loss(active[worse], a[worse] - length[worse] * step_a[worse], b[worse] - length[
                worse] * step_b[worse])  # fmt: skip
        # A row stops at the optimum to rounding (no step lowers its loss) or when its step is below the tolerance.
        improved = (candidate <= current[active]) & ~singular
        moved = active[improved]
        slope[moved] = a[improved] - length[improved] * step_a[improved]
        intercept[moved] = b[improved] - length[improved] * step_b[improved]
        current[moved] = candidate[improved]
        small = np.maximum(np.abs(length * step_a), np.abs(length * step_b)) < _NEWTON_TOLERANCE
        active = active[improved & ~small]
    scale = slope / spread
    return scale, intercept - scale * centre
