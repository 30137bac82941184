"""audit.metrics.spoofing against independent oracles.

- hand-worked cases (the working is in each test);
- reference values on tests/data/sasv_scores.txt (README there): the a-DCF package (shimhz/a_DCF at 0560623,
  ``calculate_a_dcf`` with its default cost model), the ASVspoof 5 evaluation package (asvspoof-challenge/asvspoof5
  at fe23d30: ``a_dcf._calculate_a_dcf`` with the track-2 costs, ``calculate_modules.compute_tDCF`` with the ASV
  rates of ``obtain_asv_error_rates`` at a given threshold, ``compute_teer`` on its own curves);
- SASV 2022's EER routine (``sklearn.metrics.roc_curve`` and ``brentq`` on the interpolated ROC) for the three EERs;
- brute force: the a-DCF over every threshold, the t-EER over every pair of thresholds (a grid search).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.interpolate import interp1d
from scipy.optimize import brentq
from sklearn.metrics import roc_curve

from audit.metrics.point import MetricInputError
from audit.metrics.spoofing import (
    ADcfCosts,
    TDcfCosts,
    a_dcf,
    asv_eer_threshold,
    min_t_dcf,
    sasv_eer,
    spf_eer,
    sv_eer,
    t_eer,
)
from schemas.eer_method import EerMethod
from schemas.trials import TrialKind

DATA = Path(__file__).parents[2] / "data"
TARGET, NONTARGET, SPOOF = int(TrialKind.TARGET), int(TrialKind.NONTARGET), int(TrialKind.SPOOF)


@pytest.fixture(scope="module")
def sasv() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ASV scores, CM scores, kinds) of tests/data/sasv_scores.txt: 60 targets, 80 non-targets, 70 spoofs."""
    rows = np.loadtxt(DATA / "sasv_scores.txt", dtype=str)
    kinds = np.array([TrialKind[word.upper()] for word in rows[:, 0]], dtype=np.int64)
    return rows[:, 1].astype(float), rows[:, 2].astype(float), kinds


def _sasv2022_eer(scores: np.ndarray, positives: np.ndarray) -> float:
    fpr, tpr, _ = roc_curve(positives, scores)
    return float(brentq(lambda x: 1.0 - x - interp1d(fpr, tpr)(x), 0.0, 1.0))


def test_the_three_eers_are_sasv2022s(sasv: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    asv, _, kinds = sasv
    target = kinds == TARGET
    for metric, kept in [
        (sv_eer, kinds != SPOOF),
        (spf_eer, kinds != NONTARGET),
        (sasv_eer, np.ones_like(target)),
    ]:
        expected = _sasv2022_eer(asv[kept], target[kept])
        assert metric(asv, kinds, method=EerMethod.INTERP) == pytest.approx(expected, abs=1e-9)
    assert sv_eer(asv, kinds) <= sasv_eer(asv, kinds) <= spf_eer(asv, kinds)  # spoofs are the harder negatives here


def test_reference_values(sasv: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    asv, cm, kinds = sasv
    # shimhz/a_DCF calculate_a_dcf, default CostModel (0.9, 0.05, 0.05; 1, 10, 20).
    assert a_dcf(asv, kinds) == pytest.approx(0.6513888888888889, rel=1e-12)
    # ASVspoof 5 a_dcf._calculate_a_dcf with its track-2 cost model.
    track2 = ADcfCosts(0.95 * 0.99, 0.95 * 0.01, 0.05, 1.0, 10.0, 10.0)
    assert a_dcf(asv, kinds, track2) == pytest.approx(0.6399159663865546, rel=1e-12)
    # ASVspoof 5 compute_tDCF (ASVspoof 2019 constants), ASV rates by obtain_asv_error_rates at the threshold.
    assert min_t_dcf(cm, asv, kinds, asv_threshold=0.5) == pytest.approx(0.4325941123585145, rel=1e-12)
    assert asv_eer_threshold(asv, kinds) == 0.498654758
    assert min_t_dcf(cm, asv, kinds) == pytest.approx(0.43394024652046337, rel=1e-12)
    # ASVspoof 5 compute_teer returns 12.795918367346939 %: its discrete search for the concurrent point lands on a
    # grid point of the curves; ours is the exact minimax on the same curves. They agree within one spoof trial's
    # step of the ASV's spoof false-alarm rate (1/70).
    assert t_eer(cm, asv, kinds) == pytest.approx(0.12795918367346939, abs=1 / 70)


def test_hand_worked_cases() -> None:
    asv = [0.9, 0.8, 0.1, 0.85, 0.3]
    kinds = [TARGET, TARGET, NONTARGET, SPOOF, SPOOF]
    # ASV threshold 0.8: no miss, no non-target accepted, spoof 0.85 accepted (Pfa_spf 1/2): C0 = 0,
    # C1 = 0.9405, C2 = 0.05 * 10 * 0.5 = 0.25. A CM passing all bona fide and one spoof of two: 0.25 * 0.5 / 0.25.
    assert min_t_dcf([5, 4, 3, 4.5, -2], asv, kinds) == pytest.approx(0.5)
    # A CM that passes everything: C0 + C2 over C0 + min(C1, C2) = 1; a CM that blocks everything: C1 / C2.
    assert min_t_dcf([1, 1, 1, 1, 1], asv, kinds) == pytest.approx(1.0)
    assert min_t_dcf([1, 1, 1, 1, 1], asv, kinds, asv_threshold=0.85) == pytest.approx(1.0)
    # t-EER, CM passing everything: ASV thresholds give (miss, Pfa_non, Pfa_spf) (0, 0, 1/2) at 0.8,
    # (1/2, 0, 1/2) at 0.85, (1/2, 0, 0) at 0.9: the least largest rate is 1/2. A CM separating bona fide from
    # spoofs leaves the ASV at 0.8 error-free: 0.
    assert t_eer([5, 5, 5, 5, 5], asv, kinds) == 0.5
    assert t_eer([5, 4, 3, -1, -2], asv, kinds) == 0.0
    # CM scores 5, 1, 3 (bona fide) and 0, 2 (spoofs) at threshold 1: every bona fide trial passes, half the
    # spoofs; the ASV at 0.8 passes half the spoofs. The rates multiply as if independent (the paper's model),
    # so Pfa_spf = 1/4, though here the spoof the CM passes is the one the ASV rejects.
    assert t_eer([5, 1, 3, 0, 2], asv, kinds) == 0.25
    # a-DCF, default costs: thresholds 0.1 (accept all) 1.5, 0.3: 10 * 0.05 * 0 + 20 * 0.05 * 1 = 1.0,
    # 0.8: 20 * 0.05 * 0.5 = 0.5, 0.85: 0.45 + 0.5, 0.9: 0.45, reject all: 0.9; over min(0.9, 1.5).
    assert a_dcf(asv, kinds) == pytest.approx(0.5)


def _random_three_kinds(rng: np.random.Generator, size: int, levels: int) -> tuple[np.ndarray, ...]:
    kinds = rng.integers(0, 3, size)
    kinds[:3] = [NONTARGET, TARGET, SPOOF]
    asv = rng.integers(0, levels, size) + (kinds == TARGET) * rng.integers(0, 3) + (kinds == SPOOF)
    cm = rng.integers(0, levels, size) - 2 * (kinds == SPOOF) * rng.integers(0, 2)
    return asv.astype(float), cm.astype(float), kinds


def _brute_rates(scores: np.ndarray, mask: np.ndarray, threshold: float) -> float:
    return float(np.mean(scores[mask] >= threshold))


def test_a_dcf_equals_brute_force() -> None:
    rng = np.random.default_rng(1)
    costs = ADcfCosts()
    for _ in range(40):
        asv, _, kinds = _random_three_kinds(rng, int(rng.integers(3, 40)), int(rng.integers(2, 9)))
        best = np.inf
        for threshold in [*np.unique(asv), np.inf]:
            cost = (
                costs.c_miss * costs.p_target * (1 - _brute_rates(asv, kinds == TARGET, threshold))
                + costs.c_fa_asv * costs.p_nontarget * _brute_rates(asv, kinds == NONTARGET, threshold)
                + costs.c_fa_cm * costs.p_spoof * _brute_rates(asv, kinds == SPOOF, threshold)
            )
            best = min(best, cost)
        assert a_dcf(asv, kinds) == pytest.approx(best / 0.9, rel=1e-12)


def test_t_eer_equals_a_grid_search() -> None:
    """Every pair of thresholds (distinct scores and reject-all on each side): the least largest tandem rate."""
    rng = np.random.default_rng(2)
    for _ in range(40):
        asv, cm, kinds = _random_three_kinds(rng, int(rng.integers(3, 40)), int(rng.integers(2, 9)))
        bona_fide = kinds != SPOOF
        best = np.inf
        for asv_threshold in [*np.unique(asv), np.inf]:
            miss_asv = 1 - _brute_rates(asv, kinds == TARGET, asv_threshold)
            fa_non_asv = _brute_rates(asv, kinds == NONTARGET, asv_threshold)
            fa_spf_asv = _brute_rates(asv, kinds == SPOOF, asv_threshold)
            for cm_threshold in [*np.unique(cm), np.inf]:
                through = _brute_rates(cm, bona_fide, cm_threshold)
                fa_cm = _brute_rates(cm, ~bona_fide, cm_threshold)
                rates = (1 - through * (1 - miss_asv), through * fa_non_asv, fa_cm * fa_spf_asv)
                best = min(best, max(rates))
        assert t_eer(cm, asv, kinds) == pytest.approx(best, abs=1e-12)


def test_t_eer_lies_between_the_asv_eers_and_is_the_sv_eer_behind_a_perfect_cm() -> None:
    """A useful CM puts the t-EER between the ASV's EER against non-targets and against spoofs; a perfect one
    leaves the ASV's EER against non-targets (to one trial's step)."""
    rng = np.random.default_rng(4)
    kinds = np.repeat([TARGET, NONTARGET, SPOOF], [2000, 2000, 2000])
    asv = rng.normal(np.select([kinds == TARGET, kinds == SPOOF], [2.5, 1.5], 0.0), 1.0)
    cm = rng.normal(np.where(kinds == SPOOF, -1.0, 1.0), 1.0)
    assert sv_eer(asv, kinds) < t_eer(cm, asv, kinds) < spf_eer(asv, kinds)
    separated = np.where(kinds == SPOOF, -10.0, 10.0) + rng.normal(0, 0.1, kinds.size)
    assert t_eer(separated, asv, kinds) == pytest.approx(sv_eer(asv, kinds), abs=2 / 2000)


def test_costs_and_kinds_are_checked() -> None:
    with pytest.raises(MetricInputError, match="sum to 1"):
        ADcfCosts(0.9, 0.1, 0.1)
    with pytest.raises(MetricInputError, match="positive"):
        TDcfCosts(c_fa=0.0)
    with pytest.raises(MetricInputError, match="no spoof trials"):
        a_dcf([0.1, 0.9], [NONTARGET, TARGET])
    with pytest.raises(MetricInputError, match=r"0 \(non-target\), 1 \(target\) or 2 \(spoof\)"):
        sasv_eer([0.1, 0.9, 0.3], [0, 1, 3])
    with pytest.raises(MetricInputError, match="integer codes"):
        sasv_eer([0.1, 0.9, 0.3], ["nontarget", "target", "spoof"])
    with pytest.raises(MetricInputError, match="one each per trial"):
        t_eer([0.1, 0.2], [0.1, 0.2, 0.3], [0, 1, 2])
    with pytest.raises(MetricInputError, match="finite"):
        t_eer([0.1, np.nan, 0.3], [0.1, 0.2, 0.3], [0, 1, 2])
    # An ASV that rejects every target but accepts non-targets costs more than rejecting all: C1 < 0.
    with pytest.raises(MetricInputError, match="costs more than rejecting all"):
        min_t_dcf([1, 2, 3], [0.0, 1.0, 1.0], [TARGET, NONTARGET, SPOOF], asv_threshold=0.5)
    # An error-free ASV that rejects every spoof: nothing for a CM to do.
    with pytest.raises(MetricInputError, match="makes no error"):
        min_t_dcf([1, 2, 3], [1.0, 0.0, 0.0], [TARGET, NONTARGET, SPOOF], asv_threshold=0.5)


def test_integer_weights_are_repeated_trials() -> None:
    rng = np.random.default_rng(12)
    for _ in range(20):
        asv, cm, kinds = _random_three_kinds(rng, int(rng.integers(6, 40)), int(rng.integers(3, 9)))
        weights = rng.integers(0, 4, asv.size)
        weights[:3] = 1
        repeated = np.repeat(np.arange(asv.size), weights)
        assert a_dcf(asv, kinds, weights=weights) == pytest.approx(a_dcf(asv[repeated], kinds[repeated]))
        expected = t_eer(cm[repeated], asv[repeated], kinds[repeated])
        assert t_eer(cm, asv, kinds, weights=weights) == pytest.approx(expected)
        try:
            expected = min_t_dcf(cm[repeated], asv[repeated], kinds[repeated])
        except MetricInputError:
            continue
        assert min_t_dcf(cm, asv, kinds, weights=weights) == pytest.approx(expected)
