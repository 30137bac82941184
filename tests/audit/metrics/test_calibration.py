"""audit.metrics.calibration against independent oracles.

- hand-worked cases (the working is in each test);
- reference values of PYLLR (bsxfan/PYLLR at 442b10b, ``pyllr.cllr.cllr`` and ``min_cllr(PAV(scores, labels))``)
  and of the ASVspoof 5 evaluation package (asvspoof-challenge/asvspoof5 at fe23d30, ``evaluation-package/
  calculate_modules.py``: ``calculate_CLLR``, ``compute_actDCF``) on the score files of tests/data (README there);
- a second algorithm: minCllr from the ROC convex hull found by brute force (every chord tested against every
  point), against PAV; actDCF of the PAV LLRs against ``min_dcf`` (the Bayes threshold of optimally calibrated
  LLRs picks the best hull vertex);
- scikit-learn's logistic regression (no penalty, class weights from the prior) for the linear calibration.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from audit.metrics.calibration import (
    TieGroups,
    act_dcf,
    bayes_threshold,
    cllr,
    distinct_rows,
    fit_logistic_calibration,
    fit_logistic_calibration_draws,
    min_cllr,
    min_cllr_of_draws,
    min_dcf_of_draws,
    pav_llrs,
)
from audit.metrics.point import MetricInputError, min_dcf

DATA = Path(__file__).parents[2] / "data"


def _score_file(name: str) -> tuple[np.ndarray, np.ndarray]:
    rows = np.loadtxt(DATA / name)
    return rows[:, 1], rows[:, 0].astype(int)


def test_hand_worked_cases() -> None:
    # llr = 0 everywhere: log2(1 + 1) = 1 bit per trial.
    assert cllr([0.0, 0.0, 0.0], [1, 0, 0]) == 1.0
    # Targets at ln 3, non-targets at -ln 3: each trial costs log2(1 + 1/3).
    assert cllr([math.log(3), -math.log(3)], [1, 0]) == pytest.approx(math.log2(4 / 3), abs=1e-15)
    # A confidently wrong trial: a target at -20 costs log2(1 + e^20) ~ 20 / ln 2 bits; the non-target costs ~0.
    assert cllr([-20.0, -20.0], [1, 0]) == pytest.approx((20 + math.log1p(math.exp(-20))) / math.log(2) / 2)
    # Scores ordered perfectly: PAV gives +-inf, minCllr 0, whatever the scale.
    assert min_cllr([0.1, 0.2, 5.0, 6.0], [0, 0, 1, 1]) == 0.0
    # All tied: one pool at the empirical prior, llr 0, one bit.
    assert min_cllr([1.0, 1.0, 1.0], [1, 0, 0]) == 1.0
    assert pav_llrs([1.0, 1.0, 1.0], [1, 0, 0]).tolist() == [0.0, 0.0, 0.0]
    # Reversed scores: one pool, one bit (the constant map is the best monotone one).
    assert min_cllr([3.0, 2.0, 1.0, 0.0], [0, 0, 1, 1]) == 1.0
    # Bayes threshold at p = 0.01, c_fa = 1, c_miss = 1: ln 99.
    assert bayes_threshold(0.01) == pytest.approx(math.log(99))
    # p = 0.5: threshold 0; targets at 0.1, -0.1 (one miss), non-targets at 0.0 (accepted: >= 0), -1.
    assert act_dcf([0.1, -0.1, 0.0, -1.0], [1, 1, 0, 0], p_target=0.5) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("name", "cllr_bits", "min_cllr_bits", "act_dcfs"),
    [
        ("calibration_scores.txt", 0.5440938074933824, 0.4203098521128594, (0.4475, 0.35, 1.0)),
        ("calibration_scores_tied.txt", 0.730501970045569, 0.6334121989974567, (0.6568571428571428, 0.48, 1.0)),
    ],
)
def test_reference_values(name: str, cllr_bits: float, min_cllr_bits: float, act_dcfs: tuple[float, ...]) -> None:
    """PYLLR's cllr and min_cllr, ASVspoof 5's calculate_CLLR and compute_actDCF (tests/data/README.md).

    ASVspoof 5's actDCF takes bona fide as the positive class with prior ``1 - Pspoof``: (Pspoof, Cmiss, Cfa) =
    (0.05, 1, 10), (0.5, 1, 1), (0.99, 1, 1) are ``p_target`` 0.95, 0.5, 0.01 here.
    """
    scores, labels = _score_file(name)
    assert cllr(scores, labels) == pytest.approx(cllr_bits, rel=1e-12)
    assert min_cllr(scores, labels) == pytest.approx(min_cllr_bits, rel=1e-12)
    for (p_target, c_fa), expected in zip([(0.95, 10.0), (0.5, 1.0), (0.01, 1.0)], act_dcfs, strict=True):
        assert act_dcf(scores, labels, p_target=p_target, c_fa=c_fa) == pytest.approx(expected, rel=1e-12)


def _hull_llrs(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per trial, the slope LLR of the ROC convex hull edge its tie group lies on, the hull found by brute force.

    Points k = 0..G (accepting the k highest tie groups) in integer coordinates (false alarms * T, misses * N);
    a chord (i, j) is a hull edge when no point lies strictly below it; from each vertex the farthest such chord
    is taken. A group on edge (i, j) has ``llr = log((targets / T) / (non-targets / N))`` over the edge's groups.
    """
    distinct = np.unique(scores)[::-1]
    targets = np.array([np.sum((scores == value) & (labels == 1)) for value in distinct])
    nontargets = np.array([np.sum((scores == value) & (labels == 0)) for value in distinct])
    n_target, n_nontarget = int(targets.sum()), int(nontargets.sum())
    x = np.concatenate(([0], np.cumsum(nontargets))) * n_target
    y = (n_target - np.concatenate(([0], np.cumsum(targets)))) * n_nontarget
    group_llr = np.empty(distinct.size)
    start = 0
    while start < distinct.size:
        for end in range(distinct.size, start, -1):
            dx, dy = x[end] - x[start], y[end] - y[start]
            cross = dx * (y - y[start]) - dy * (x - x[start])
            if (cross >= 0).all():
                break
        edge_targets = targets[start:end].sum() / n_target
        edge_nontargets = nontargets[start:end].sum() / n_nontarget
        with np.errstate(divide="ignore"):
            group_llr[start:end] = np.log(edge_targets) - np.log(edge_nontargets)
        start = end
    return group_llr[np.searchsorted(-distinct, -scores)]


def test_min_cllr_equals_the_brute_force_convex_hull() -> None:
    rng = np.random.default_rng(5)
    for _ in range(60):
        size = int(rng.integers(3, 40))
        labels = rng.integers(0, 2, size)
        labels[:2] = [0, 1]
        scores = rng.integers(0, int(rng.integers(2, 12)), size).astype(float) + labels * rng.integers(0, 3)
        hull = _hull_llrs(scores, labels)
        np.testing.assert_allclose(pav_llrs(scores, labels), hull, rtol=1e-12, atol=1e-12)
        tar, non = hull[labels == 1], hull[labels == 0]
        expected = (np.mean(np.logaddexp(0, -tar)) + np.mean(np.logaddexp(0, non))) / (2 * math.log(2))
        assert min_cllr(scores, labels) == pytest.approx(expected, rel=1e-12, abs=1e-15)
        assert min_cllr(scores, labels) <= 1.0 + 1e-12


def test_act_dcf_of_pav_llrs_is_min_dcf_and_never_below_it() -> None:
    """Optimally calibrated LLRs thresholded by Bayes' rule reach the minimum cost; any LLRs cost at least that."""
    rng = np.random.default_rng(9)
    for _ in range(40):
        size = int(rng.integers(4, 80))
        labels = rng.integers(0, 2, size)
        labels[:2] = [0, 1]
        scores = np.round(rng.normal(labels * rng.uniform(0, 3), 1.0), int(rng.integers(0, 3)))
        for p_target, c_fa in [(0.5, 1.0), (0.01, 1.0), (0.05, 10.0), (0.9, 2.0)]:
            best = min_dcf(scores, labels, p_target=p_target, c_fa=c_fa)
            optimal = act_dcf(pav_llrs(scores, labels), labels, p_target=p_target, c_fa=c_fa)
            assert optimal == pytest.approx(best, rel=1e-9)
            assert act_dcf(scores, labels, p_target=p_target, c_fa=c_fa) >= best - 1e-12


@pytest.mark.parametrize("prior", [0.5, 0.2])
def test_logistic_calibration_matches_scikit_learn(prior: float) -> None:
    """Weighted logistic regression without penalty: weights prior / T and (1 - prior) / N, intercept b + logit."""
    rng = np.random.default_rng(3)
    labels = np.repeat([1, 0], [300, 900])
    scores = rng.normal(np.where(labels == 1, 0.6, 0.2), 0.15)
    fitted = fit_logistic_calibration(scores, labels, prior=prior)
    weights = np.where(labels == 1, prior / 300, (1 - prior) / 900)
    reference = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000)
    reference.fit(scores[:, None], labels, sample_weight=weights * labels.size)
    assert fitted.scale == pytest.approx(reference.coef_[0, 0], rel=1e-5)
    assert fitted.offset == pytest.approx(reference.intercept_[0] - math.log(prior / (1 - prior)), abs=1e-5)
    np.testing.assert_allclose(fitted.apply(scores), fitted.scale * scores + fitted.offset)


@pytest.mark.parametrize("repeats", [6, 11, 240, 1005])
@pytest.mark.parametrize("platt", [False, True])
def test_constant_scores_are_refused_by_name(repeats: int, platt: bool) -> None:
    """Issue 42: 0.7 repeated has a standard deviation of about 1e-16, not 0 (the trap that made Newton's Hessian
    singular); both fits name the reason instead."""
    scores, labels = np.full(repeats, 0.7), np.arange(repeats) % 2
    assert np.unique(scores).size == 1
    with pytest.raises(MetricInputError, match=rf"constant \({repeats} trials at 0.7\): no slope to fit"):
        fit_logistic_calibration(scores, labels, platt=platt)
    nearly = scores.copy()
    nearly[::2] = np.nextafter(0.7, 1.0)  # one unit in the last place apart: constant to rounding
    with pytest.raises(MetricInputError, match="constant to rounding"):
        fit_logistic_calibration(nearly, labels, platt=platt)


def test_separation_is_refused_without_platt_targets_and_fitted_with_them() -> None:
    """Complete separation and quasi-complete separation (a tie at the class boundary) have no finite maximum
    likelihood; Platt's targets have a finite optimum there, scikit-learn's ``_sigmoid_calibration``'s."""
    from sklearn.calibration import _sigmoid_calibration

    complete = ([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1])
    with pytest.raises(MetricInputError, match=r"separate targets from non-targets \(complete separation\)"):
        fit_logistic_calibration(*complete)
    with pytest.raises(MetricInputError, match="complete separation"):
        fit_logistic_calibration([0.8, 0.9, 0.1, 0.2], [0, 0, 1, 1])
    quasi = (np.array([0.1, 0.3, 0.5, 0.5, 0.6, 0.9, 0.5]), np.array([0, 0, 0, 1, 1, 1, 1]))
    with pytest.raises(MetricInputError, match="quasi-complete separation"):
        fit_logistic_calibration(*quasi)
    for scores, labels in (complete, quasi):
        scores, labels = np.asarray(scores, float), np.asarray(labels)
        prior = float(labels.mean())
        slope, intercept = _sigmoid_calibration(scores, labels)
        fitted = fit_logistic_calibration(scores, labels, prior, platt=True)
        assert fitted.scale == pytest.approx(-slope, rel=1e-4)
        assert fitted.offset + math.log(prior / (1 - prior)) == pytest.approx(-intercept, rel=1e-4, abs=1e-4)
    with pytest.raises(MetricInputError, match="prior"):
        fit_logistic_calibration([0.1, 0.5, 0.3], [0, 0, 1], prior=1.0)


def _separated(scores: np.ndarray, labels: np.ndarray) -> bool:
    """Brute force: some threshold puts every target on one side (ties allowed) and every non-target on the other."""
    for threshold in np.unique(scores):
        for sign in (1, -1):
            if (sign * scores[labels == 1] >= sign * threshold).all() and (
                sign * scores[labels == 0] <= sign * threshold
            ).all():
                return True
    return False


def test_every_set_is_fitted_at_a_stationary_point_or_refused_with_the_reason() -> None:
    """400 sets drawn as the issue's check drew them (ties, tiny sets, separable, all-equal, float32, large scores):
    the fit is finite with a zero gradient of its objective (written out here from the formula), or refused with
    ``MetricInputError`` for the reason a brute force finds (one distinct score; a separating threshold)."""
    rng = np.random.default_rng(42)
    kinds = {"fitted": 0, "constant": 0, "separated": 0}
    for index in range(400):
        size = int(rng.choice([3, 6, 11, 40, 240]))
        labels = rng.integers(0, 2, size)
        labels[:2] = [0, 1]
        shape = index % 5
        if shape == 0:
            scores = np.full(size, rng.choice([0.7, 0.1, -3.3, 1e6]))
        elif shape == 1:
            scores = np.round(rng.normal(labels * rng.uniform(0, 4), 1.0), int(rng.integers(0, 2)))
        elif shape == 2:
            scores = rng.normal(labels * 3.0, 0.5).astype(np.float32).astype(float)
        elif shape == 3:
            scores = rng.normal(labels, 1.0) * 1e4
        else:
            scores = np.where(labels == 1, rng.uniform(0.5, 1.0, size), rng.uniform(0.0, 0.5, size))
            scores[: size // 3] = 0.5
        platt, prior = bool(index % 2), float(rng.choice([0.5, 0.2]))
        try:
            fitted = fit_logistic_calibration(scores, labels, prior, platt=platt)
        except MetricInputError as error:
            message = str(error)
            if "constant" in message:
                assert np.ptp(scores) <= 1e-12 * np.abs(scores).max(), message
                kinds["constant"] += 1
            else:
                assert not platt and "separation" in message and _separated(scores, labels), message
                kinds["separated"] += 1
            continue
        assert np.ptp(scores) > 0 and (platt or not _separated(scores, labels))
        n_tar, n_non = labels.sum(), (1 - labels).sum()
        truth = np.where(labels == 1, (n_tar + 1) / (n_tar + 2), 1 / (n_non + 2)) if platt else labels.astype(float)
        weight = np.where(labels == 1, prior / n_tar, (1 - prior) / n_non)
        posterior = 1 / (1 + np.exp(-(fitted.scale * scores + fitted.offset + math.log(prior / (1 - prior)))))
        gradient = weight * (posterior - truth)
        scale = float(np.std(scores))
        assert abs(gradient.sum()) < 1e-8 and abs(gradient @ (scores - scores.mean()) / scale) < 1e-8
        kinds["fitted"] += 1
    assert min(kinds.values()) > 30, kinds


def test_the_fit_under_weights_is_the_fit_of_repeated_trials() -> None:
    """Integer weights list a trial that many times, for one weighting and for many at once; a row the fit refuses
    (here: a class left without weight, or separating scores) is NaN."""
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 2, 40)
    labels[:2] = [0, 1]
    scores = np.round(rng.normal(labels * 1.5, 1.0), 2)
    rows = rng.integers(0, 3, (12, 40)).astype(float)
    rows[-1] = labels  # non-targets left out
    rows[-2] = np.where((labels == 1) & (scores > 1.0) | (labels == 0) & (scores < 0.0), 1.0, 0.0)  # separated
    for platt in (False, True):
        scale, offset = fit_logistic_calibration_draws(scores, labels, rows, 0.3, platt=platt)
        for row, weights in enumerate(rows[:-2]):
            repeated = np.repeat(np.arange(40), weights.astype(int))
            expected = fit_logistic_calibration(scores[repeated], labels[repeated], 0.3, platt=platt)
            single = fit_logistic_calibration(scores, labels, 0.3, platt=platt, weights=weights)
            assert (scale[row], offset[row]) == pytest.approx((expected.scale, expected.offset), rel=1e-7, abs=1e-9)
            assert (single.scale, single.offset) == pytest.approx((expected.scale, expected.offset), rel=1e-7, abs=1e-9)
        assert np.isnan(scale[-1]) and np.isnan(offset[-1])
        assert np.isnan(scale[-2]) != platt


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: cllr([0.0, math.nan], [1, 0]), "finite"),
        (lambda: cllr([0.0, 1.0], [1, 1]), "only one class"),
        (lambda: min_cllr([0.0, 1.0], [1, 2]), "labels must be 0"),
        (lambda: act_dcf([0.0, 1.0], [1, 0], p_target=0.0), "p_target"),
        (lambda: act_dcf([0.0, 1.0], [1, 0], c_fa=-1.0), "positive"),
    ],
)
def test_bad_inputs_are_refused(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(MetricInputError, match=message):
        call()


def test_integer_weights_are_repeated_trials() -> None:
    """A bootstrap's multiplicities: weighting a trial by k is listing it k times (0: leaving it out)."""
    rng = np.random.default_rng(11)
    for _ in range(20):
        size = int(rng.integers(6, 50))
        labels = rng.integers(0, 2, size)
        labels[:4] = [0, 1, 0, 1]
        scores = np.round(rng.normal(labels, 1.0), 1)
        weights = rng.integers(0, 4, size)
        weights[:2] = 1
        repeated = np.repeat(np.arange(size), weights)
        for metric in (cllr, min_cllr, lambda s, y, weights=None: act_dcf(s, y, 0.3, weights=weights)):
            assert metric(scores, labels, weights=weights) == pytest.approx(
                metric(scores[repeated], labels[repeated]), rel=1e-12
            )
    with pytest.raises(MetricInputError, match="no weight"):
        cllr([0.0, 1.0], [1, 0], weights=[0, 1])
    with pytest.raises(MetricInputError, match="trial weights must be >= 0"):
        min_cllr([0.0, 1.0], [1, 0], weights=[-1, 1])


@pytest.mark.parametrize("separated", [False, True])
@pytest.mark.parametrize("n_trials", [12, 300])
def test_platt_targets_match_scikit_learn_s_sigmoid_calibration(separated: bool, n_trials: int) -> None:
    """Oracle: scikit-learn's ``_sigmoid_calibration`` (Platt's targets, unweighted), whose posterior logit
    ``-(A s + B)`` is ``scale s + offset + logit(prior)`` at the prior of the targets' share; separating scores
    (refused without Platt's targets) get a finite fit too."""
    from sklearn.calibration import _sigmoid_calibration

    rng = np.random.default_rng(n_trials + separated)
    labels = (rng.random(n_trials) < 0.3).astype(int)
    labels[:2] = [1, 0]
    scores = rng.normal(np.where(labels, 1.5, -1.0), 1.0)
    if separated:
        scores = np.where(labels, np.abs(scores) + 0.1, -np.abs(scores))
        with pytest.raises(MetricInputError, match="separate"):
            fit_logistic_calibration(scores, labels)
    slope, intercept = _sigmoid_calibration(scores, labels)
    prior = float(labels.mean())
    fitted = fit_logistic_calibration(scores, labels, prior, platt=True)
    assert fitted.scale == pytest.approx(-slope, rel=1e-5)  # scikit-learn stops its L-BFGS near 1e-6
    assert fitted.offset + math.log(prior / (1 - prior)) == pytest.approx(-intercept, rel=1e-5, abs=1e-5)


def test_the_bayes_error_curves_are_act_dcf_and_min_dcf_at_each_prior() -> None:
    """Actual: ``act_dcf`` of the LLRs at each effective prior; minimum: ``min_dcf`` of the scores there (the
    convex-hull sweep of ``audit.metrics.point``, a second algorithm to PAV)."""
    from audit.metrics.calibration import bayes_error_curve
    from audit.metrics.point import min_dcf

    rng = np.random.default_rng(12)
    labels = rng.integers(0, 2, 300)
    llrs = np.round(rng.normal(np.where(labels == 1, 1.5, -1.5), 1.5), 1) + 0.7  # rounded: ties; shifted
    log_odds = np.linspace(-5, 5, 21)
    actual, minimum = bayes_error_curve(llrs, labels, log_odds)
    for point, prior in enumerate(1 / (1 + np.exp(-log_odds))):
        assert actual[point] == pytest.approx(act_dcf(llrs, labels, prior), abs=1e-12)
        assert minimum[point] == pytest.approx(min_dcf(llrs, labels, prior), abs=1e-9)
        assert minimum[point] <= actual[point] + 1e-12


def test_the_minima_of_draws_are_those_of_each_draw() -> None:
    """Row r of ``min_cllr_of_draws`` (a bootstrap's draws of tie-group weights) is the minCllr of the trials
    repeated as row r weighs them, with the best monotone map found by scikit-learn's isotonic regression (tied
    scores pooled, as its ``IsotonicRegression`` pools equal inputs); row r of ``min_dcf_of_draws`` is ``min_dcf``
    of those trials; NaN where a class has no weight."""
    from sklearn.isotonic import IsotonicRegression

    rng = np.random.default_rng(43)
    checked = 0
    for _ in range(25):
        size = int(rng.integers(4, 60))
        labels = rng.integers(0, 2, size)
        labels[:2] = [0, 1]
        scores = rng.integers(0, int(rng.integers(2, 30)), size) + labels * rng.integers(0, 4)
        distinct, group = np.unique(scores, return_inverse=True)
        weights = rng.integers(0, 4, (20, size)) * (rng.random((20, size)) < rng.random((20, 1)))
        weights[0, labels == 0] = 0  # a draw without non-targets: no minCllr
        targets = np.stack([np.bincount(group, row * labels, distinct.size) for row in weights])
        nontargets = np.stack([np.bincount(group, row * (1 - labels), distinct.size) for row in weights])
        drawn, dcfs = min_cllr_of_draws(targets, nontargets), min_dcf_of_draws(targets, nontargets, 0.2, 2.0, 1.0)
        for row, weight in enumerate(weights):
            kept = weight > 0
            n_target, n_nontarget = weight[kept & (labels == 1)].sum(), weight[kept & (labels == 0)].sum()
            if n_target == 0 or n_nontarget == 0:
                assert np.isnan(drawn[row]) and np.isnan(dcfs[row])
                continue
            fitted = IsotonicRegression().fit(scores[kept], labels[kept], sample_weight=weight[kept])
            posterior = fitted.predict(scores[kept])
            with np.errstate(divide="ignore"):
                llrs = np.log(posterior) - np.log1p(-posterior) - math.log(n_target / n_nontarget)
            on_target, on_nontarget = kept & (labels == 1), kept & (labels == 0)
            expected = (
                weight[on_target] @ np.logaddexp(0, -llrs[labels[kept] == 1]) / n_target
                + weight[on_nontarget] @ np.logaddexp(0, llrs[labels[kept] == 0]) / n_nontarget
            ) / (2 * math.log(2))
            assert drawn[row] == pytest.approx(expected, rel=1e-12, abs=1e-13)
            assert drawn[row] == pytest.approx(min_cllr(scores, labels, weights=weight), rel=1e-12, abs=1e-15)
            repeated = np.repeat(np.arange(size), weight)
            assert dcfs[row] == pytest.approx(min_dcf(scores[repeated], labels[repeated], 0.2, 2.0, 1.0), rel=1e-12)
            checked += 1
    assert checked > 300
    with pytest.raises(MetricInputError, match="target weights must be >= 0"):
        min_cllr_of_draws([[1.0, -1.0]], [[1.0, 1.0]])
    with pytest.raises(MetricInputError, match="of one shape"):
        min_cllr_of_draws([[1.0, 1.0]], [1.0, 1.0])


def test_draw_minima_are_the_minima_of_each_draws_trial_weights() -> None:
    """A speaker bootstrap's draws: a trial weighs its enrolment speaker's multiplicity times its partner's; the
    compiled minima of every draw are ``min_cllr_of_draws`` and ``min_dcf_of_draws`` of ``TieGroups.counts`` of
    those weights (bincount), bit for bit, and ``min_dcf`` of the trials repeated that often (to 1e-12)."""
    rng = np.random.default_rng(8)
    size, n_speakers = 70, 6
    labels = rng.integers(0, 2, size)
    scores = rng.integers(0, 15, size) + labels
    enrol, partner = rng.integers(0, n_speakers, size), rng.integers(0, n_speakers + 1, size)
    multiplicities = np.column_stack([rng.multinomial(n_speakers, np.ones(n_speakers) / n_speakers, 50), np.ones(50)])
    multiplicities[0, :n_speakers] = 0  # only the one-speaker trials (partner n_speakers) lack a factor of 0
    groups = TieGroups.of(scores, labels)
    drawn_cllr, drawn_dcf = groups.draw_minima(multiplicities, enrol, partner, 0.2, 2.0, 1.0)
    counts = [groups.counts(draw[enrol] * draw[partner]) for draw in multiplicities]
    targets, nontargets = np.stack([count[0] for count in counts]), np.stack([count[1] for count in counts])
    np.testing.assert_array_equal(drawn_cllr, min_cllr_of_draws(targets, nontargets))
    np.testing.assert_array_equal(drawn_dcf, min_dcf_of_draws(targets, nontargets, 0.2, 2.0, 1.0))
    assert np.isnan(drawn_cllr[0]) and np.isnan(drawn_dcf[0])
    for row, draw in enumerate(multiplicities[1:], start=1):
        repeated = np.repeat(np.arange(size), (draw[enrol] * draw[partner]).astype(int))
        assert drawn_dcf[row] == pytest.approx(min_dcf(scores[repeated], labels[repeated], 0.2, 2.0, 1.0), rel=1e-12)
    with pytest.raises(MetricInputError, match="must index the 7 columns"):
        groups.draw_minima(multiplicities, enrol, np.full(size, 7))
    with pytest.raises(MetricInputError, match="multiplicities must be >= 0"):
        groups.draw_minima(-multiplicities, enrol, partner)


def test_distinct_rows_are_numpy_unique_of_the_rows() -> None:
    rng = np.random.default_rng(5)
    for rows in (rng.integers(0, 3, (200, 4)).astype(float), np.round(rng.uniform(0, 1, (50, 2)), 1), np.ones((3, 1))):
        distinct, inverse = distinct_rows(rows)
        expected, expected_inverse = np.unique(rows, axis=0, return_inverse=True)
        np.testing.assert_array_equal(distinct, expected)
        np.testing.assert_array_equal(inverse, expected_inverse.reshape(-1))


@pytest.mark.parametrize("increasing", [True, False])
def test_pav_blocks_are_scipy_s_isotonic_regression_blocks(increasing: bool) -> None:
    """The compiled PAV repeats scipy's arithmetic, so its blocks are scipy's on every input: target fractions of
    tie groups (many exact ties), negligible weights beside heavy ones, curves laid end to end with an offset (the
    ROCCH EER's input), runs of equal values, one value; no value is one empty block list."""
    from scipy.optimize import isotonic_regression

    from audit.metrics.calibration_kernels import pav_blocks
    from audit.metrics.point import NEGLIGIBLE_WEIGHT

    rng = np.random.default_rng(11)
    assert pav_blocks(np.zeros(0), np.zeros(0), increasing).tolist() == [0]
    cases = [(np.array([0.3]), np.array([2.0])), (np.full(5, 0.5), np.ones(5))]
    for size in (2, 7, 60, 1000):
        sizes = rng.integers(0, 4, size).astype(float)
        targets = np.minimum(sizes, rng.integers(0, 3, size))
        rates = np.divide(targets, sizes, out=np.full(size, 0.5), where=sizes > 0)
        cases.append((rates, np.where(sizes == 0, NEGLIGIBLE_WEIGHT, sizes)))
        offset = 2.0 * np.repeat(np.arange(4)[::-1], -(-size // 4))[:size]
        cases.append((rates + offset, np.where(sizes == 0, NEGLIGIBLE_WEIGHT, sizes)))
        cases.append((rng.normal(size=size), rng.uniform(0.1, 3.0, size)))
    for values, weights in cases:
        before = values.copy(), weights.copy()
        expected = isotonic_regression(values, weights=weights, increasing=increasing).blocks
        np.testing.assert_array_equal(pav_blocks(values, weights, increasing), expected)
        np.testing.assert_array_equal(values, before[0])  # the inputs are left as they were
        np.testing.assert_array_equal(weights, before[1])
