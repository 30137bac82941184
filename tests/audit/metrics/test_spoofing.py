"""audit.metrics.spoofing against independent oracles.

- hand-worked cases (the working is in each test);
- reference values on tests/data/sasv_scores.txt (README there): the a-DCF package (shimhz/a_DCF at 0560623,
  ``calculate_a_dcf`` with its default cost model), the ASVspoof 5 evaluation package (asvspoof-challenge/asvspoof5
  at fe23d30: ``a_dcf._calculate_a_dcf`` with the track-2 costs, ``calculate_modules.compute_tDCF`` with the ASV
  rates of ``obtain_asv_error_rates`` at a given threshold, ``compute_teer`` on its own curves);
- SASV 2022's EER routine (``sklearn.metrics.roc_curve`` and ``brentq`` on the interpolated ROC) for the three EERs;
- brute force: the a-DCF over every threshold; the t-EER's published rule (Kinnunen et al. TPAMI 2023, as ASVspoof 5's
  ``compute_teer`` applies it) re-implemented from its description in rational arithmetic over the distinct scores,
  and with one curve point per trial in floating point as the package counts them; the t-DCF's ASV threshold and the
  whole t-DCF in rational arithmetic.
"""

from __future__ import annotations

from fractions import Fraction
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
    a_dcf_draws,
    asv_eer_threshold,
    min_t_dcf,
    min_t_dcf_draws,
    sasv_eer,
    spf_eer,
    sv_eer,
    t_eer,
    t_eer_draws,
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
    # ASVspoof 5 compute_teer returns 12.795918367346939 % (no ties in the file: the same curve points).
    assert t_eer(cm, asv, kinds) == pytest.approx(0.12795918367346939, rel=1e-12)


def test_hand_worked_cases() -> None:
    asv = [0.9, 0.8, 0.1, 0.85, 0.3]
    kinds = [TARGET, TARGET, NONTARGET, SPOOF, SPOOF]
    # ASV threshold 0.8: no miss, no non-target accepted, spoof 0.85 accepted (Pfa_spf 1/2): C0 = 0,
    # C1 = 0.9405, C2 = 0.05 * 10 * 0.5 = 0.25. A CM passing all bona fide and one spoof of two: 0.25 * 0.5 / 0.25.
    assert min_t_dcf([5, 4, 3, 4.5, -2], asv, kinds) == pytest.approx(0.5)
    # A CM that passes everything: C0 + C2 over C0 + min(C1, C2) = 1; a CM that blocks everything: C1 / C2.
    assert min_t_dcf([1, 1, 1, 1, 1], asv, kinds) == pytest.approx(1.0)
    assert min_t_dcf([1, 1, 1, 1, 1], asv, kinds, asv_threshold=0.85) == pytest.approx(1.0)
    # t-EER. ASV thresholds 0.1, 0.3, 0.8, 0.85, 0.9 give (Pmiss, Pfa_non, Pfa_spf) (0, 1, 1), (0, 0, 1),
    # (0, 0, 1/2), (1/2, 0, 1/2), (1/2, 0, 0): the first three have Pmiss below the mean false-alarm rate (the path's
    # region). A CM passing everything leaves (through, Pfa_cm) (1, 1) or, rejecting all, (0, 0): the tandem's gap
    # Pmiss - mean Pfa is -1 and 1 at ASV 0.1 (tied: the lower CM threshold), -1/2 and 1 at 0.3, -1/4 and 1 at 0.8,
    # all at the CM's accept-all, where Pfa_non_asv / Pfa_spf_asv is 1, 0, 0 against Pfa_cm / through = 1: the false
    # alarms meet at ASV 0.1, at the tandem's spoof false-alarm rate 1 * 1. The rates never meet the miss rate (0):
    # this is the closest approach the rule finds, not a least largest rate (that would be 1/2).
    assert t_eer([5, 5, 5, 5, 5], asv, kinds) == 1.0
    # A CM separating bona fide from spoofs: at ASV 0.3 (0, 0, 1) the path's CM threshold 3 passes every bona fide
    # trial and no spoof (gap 1 - 1 - 0 = 0), and both false-alarm ratios are 0: the t-EER is 1 * 0 = 0.
    assert t_eer([5, 4, 3, -1, -2], asv, kinds) == 0.0
    # CM scores 5, 1, 3 (bona fide) and 0, 2 (spoofs): (through, Pfa_cm) = (1, 1), (1, 1/2), (2/3, 1/2), (2/3, 0),
    # (1/3, 0), (0, 0) at 0, 1, 2, 3, 5, reject-all. At ASV 0.8 (0, 0, 1/2) the gaps 1 - t - Pfa_cm / 4 are -1/4,
    # -1/8, 5/24: CM 1, ratios 0 and (1/2) / 1, distance 1/2; at ASV 0.3 (0, 0, 1) gaps -1/2, -1/4, 1/12: CM 2,
    # distance (1/2) / (2/3) = 3/4; at ASV 0.1 (0, 1, 1) gaps -1, -3/4, -1/4, 0: CM 3, distance |1 - 0| = 1. The
    # closest is ASV 0.8 with CM 1: t-EER (1/2) (1/2). The rates multiply as if independent (the paper's model),
    # though here the spoof the CM passes is the one the ASV rejects.
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


def _rate(mask: np.ndarray) -> Fraction:
    return Fraction(int(mask.sum()), mask.size)


def _published_t_eer(cm: np.ndarray, asv: np.ndarray, kinds: np.ndarray) -> float | None:
    """The t-EER rule as the paper describes it (spoof prevalence 0.5 on the path), in rational arithmetic over the
    distinct scores (accept >= t, and reject-all), ties to the lowest threshold; None where no path point has both
    false-alarm ratios defined."""
    target, nontarget, spoof = (asv[kinds == kind] for kind in (TARGET, NONTARGET, SPOOF))
    cm_bona_fide, cm_spoof = cm[kinds != SPOOF], cm[kinds == SPOOF]
    cm_thresholds = [*np.unique(cm), np.inf]
    miss_cm = [_rate(cm_bona_fide < c) for c in cm_thresholds]
    fa_cm = [_rate(cm_spoof >= c) for c in cm_thresholds]
    best, value = None, None
    for a in [*np.unique(asv), np.inf]:
        miss, fa_non, fa_spf = _rate(target < a), _rate(nontarget >= a), _rate(spoof >= a)
        if not miss < (fa_non + fa_spf) / 2:
            continue
        gaps = [
            abs(m + (1 - m) * miss - ((1 - m) * fa_non + f * fa_spf) / 2) for m, f in zip(miss_cm, fa_cm, strict=True)
        ]
        i = gaps.index(min(gaps))
        if fa_spf == 0 or miss_cm[i] == 1:
            continue
        distance = abs(fa_non / fa_spf - fa_cm[i] / (1 - miss_cm[i]))
        if best is None or distance < best:
            best, value = distance, fa_spf * fa_cm[i]
    return None if value is None else float(value)


def _asvspoof5_t_eer(cm: np.ndarray, asv: np.ndarray, kinds: np.ndarray) -> float:
    """The same rule as the ASVspoof 5 package counts it: one curve point per trial (reject the i lowest), floating
    point, ``argmin`` and a strict ``<`` choosing among near ties."""
    target, nontarget, spoof = (asv[kinds == kind] for kind in (TARGET, NONTARGET, SPOOF))
    cm_bona_fide, cm_spoof = cm[kinds != SPOOF], cm[kinds == SPOOF]
    cm_points = np.r_[-np.inf, np.sort(cm)]
    miss_cm = np.array([np.mean(cm_bona_fide <= c) for c in cm_points])
    fa_cm = np.array([np.mean(cm_spoof > c) for c in cm_points])
    best, value = np.inf, np.nan
    for a in np.r_[-np.inf, np.sort(asv)]:
        miss, fa_non, fa_spf = np.mean(target <= a), np.mean(nontarget > a), np.mean(spoof > a)
        gap = miss_cm + (1 - miss_cm) * miss - 0.5 * ((1 - miss_cm) * fa_non + fa_cm * fa_spf)
        i = int(np.argmin(np.abs(gap)))
        if not miss < 0.5 * (fa_non + fa_spf):
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            distance = abs(fa_non / fa_spf - fa_cm[i] / (1 - miss_cm[i]))
        if distance < best:
            best, value = distance, fa_spf * fa_cm[i]
    return float(value)


def test_t_eer_is_the_published_rule_in_exact_arithmetic() -> None:
    """Tied and untied sets: the rule in rational arithmetic, or undefined on the same sets."""
    rng = np.random.default_rng(2)
    undefined = 0
    for index in range(300):
        if index % 2:
            asv, cm, kinds = _random_three_kinds(rng, int(rng.integers(3, 40)), int(rng.integers(2, 9)))
        else:
            kinds = rng.integers(0, 3, int(rng.integers(3, 50)))
            kinds[:3] = [NONTARGET, TARGET, SPOOF]
            asv = rng.normal(size=kinds.size) + (kinds == TARGET) * rng.normal(1) + (kinds == SPOOF) * rng.normal()
            cm = rng.normal(size=kinds.size) - (kinds == SPOOF) * rng.normal(1)
        expected = _published_t_eer(cm, asv, kinds)
        if expected is None:
            undefined += 1
            with pytest.raises(MetricInputError, match="t-EER undefined"):
                t_eer(cm, asv, kinds)
            continue
        assert t_eer(cm, asv, kinds) == pytest.approx(expected, abs=1e-12)
    assert undefined < 30


def test_t_eer_agrees_with_asvspoof5_within_a_spoof_step_on_untied_sets() -> None:
    """Where rounding decides a tie the package may land one curve point away: one spoof trial's step at most."""
    rng = np.random.default_rng(3)
    apart = 0
    for _ in range(150):
        kinds = rng.integers(0, 3, int(rng.integers(10, 120)))
        kinds[:3] = [NONTARGET, TARGET, SPOOF]
        asv = rng.normal(size=kinds.size) + (kinds == TARGET) * rng.normal(1.5) + (kinds == SPOOF) * rng.normal()
        cm = rng.normal(size=kinds.size) - (kinds == SPOOF) * rng.normal(1)
        difference = abs(t_eer(cm, asv, kinds) - _asvspoof5_t_eer(cm, asv, kinds))
        assert difference <= 1 / (kinds == SPOOF).sum() + 1e-12
        apart += difference > 1e-12
    assert apart <= 5


def test_t_eer_where_the_rates_cannot_meet_is_the_closest_approach_not_the_minimax() -> None:
    """Issue 42's case: spoof ASV scores N(0.5, 1) between non-targets N(0, 1) and targets N(2, 1), a CM with no
    power. The three rates cannot meet; the closest approach is near 1/2 (ASV accepting all, CM passing half),
    while the least largest rate (a grid search over both thresholds) is about 0.2 (0.199 in the issue's draw) and
    was what t_eer returned."""
    rng = np.random.default_rng(42)
    for _ in range(3):
        kinds = np.repeat([TARGET, NONTARGET, SPOOF], 300)
        asv = rng.normal(np.select([kinds == TARGET, kinds == SPOOF], [2.0, 0.5], 0.0), 1.0)
        cm = rng.normal(size=kinds.size)
        value = t_eer(cm, asv, kinds)
        assert value == pytest.approx(_asvspoof5_t_eer(cm, asv, kinds), abs=1 / 300 + 1e-12)
        assert 0.4 < value < 0.6
        accepted = asv[None, :] >= np.r_[np.unique(asv), np.inf][:, None]  # ASV thresholds x trials
        passed = cm[None, :] >= np.r_[np.unique(cm), np.inf][:, None]
        asv_rate = {kind: accepted[:, kinds == kind].mean(axis=1)[:, None] for kind in (TARGET, NONTARGET, SPOOF)}
        through = passed[:, kinds != SPOOF].mean(axis=1)[None, :]
        miss = 1 - through * asv_rate[TARGET]
        fa_non = through * asv_rate[NONTARGET]
        fa_spf = passed[:, kinds == SPOOF].mean(axis=1)[None, :] * asv_rate[SPOOF]
        minimax = np.maximum(np.maximum(miss, fa_non), fa_spf).min()
        assert minimax < 0.3 and value - minimax > 0.15


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


def _exact_asv_threshold(asv: np.ndarray, kinds: np.ndarray) -> float:
    """The lowest bona fide score at which |Pmiss - Pfa| (accepting >=) is least, in rational arithmetic."""
    target, nontarget = asv[kinds == TARGET], asv[kinds == NONTARGET]
    candidates = np.unique(asv[kinds != SPOOF])
    gaps = [abs(_rate(target < t) - _rate(nontarget >= t)) for t in candidates]
    return float(candidates[gaps.index(min(gaps))])


def _exact_min_t_dcf(cm: np.ndarray, asv: np.ndarray, kinds: np.ndarray, costs: TDcfCosts) -> float:
    """TASLP 2020's normalised min t-DCF in rational arithmetic, the ASV at ``_exact_asv_threshold``."""
    threshold = _exact_asv_threshold(asv, kinds)
    p_tar, p_non, p_spf, c_miss, c_fa, c_fa_spoof = map(
        Fraction, (costs.p_target, costs.p_nontarget, costs.p_spoof, costs.c_miss, costs.c_fa, costs.c_fa_spoof)
    )
    c0 = p_tar * c_miss * _rate(asv[kinds == TARGET] < threshold) + p_non * c_fa * _rate(
        asv[kinds == NONTARGET] >= threshold
    )
    c1, c2 = p_tar * c_miss - c0, p_spf * c_fa_spoof * _rate(asv[kinds == SPOOF] >= threshold)
    costs_at = [
        c0 + c1 * _rate(cm[kinds != SPOOF] < s) + c2 * _rate(cm[kinds == SPOOF] >= s) for s in [*np.unique(cm), np.inf]
    ]
    return float(min(costs_at) / (c0 + min(c1, c2)))


def test_the_asv_threshold_is_chosen_on_bona_fide_trials_with_ties_decided_on_counts() -> None:
    """Issue 42's tied rational gaps: targets 1.0, 0.9, 0.8, 0.7, 0.6, non-targets 0.6, 0.2, 0.1, 0.0, -0.1 (five
    each): at 0.6 Pmiss 0 and Pfa 1/5, at 0.7 Pmiss 1 - 4/5 and Pfa 0, the same gap, which floating point makes
    0.19999999999999996 at 0.7 against 0.2 at 0.6. The lowest, 0.6, is the convention. A spoof at 0.65 is no
    candidate: chosen from all scores, it gave the 0.7 gap at 0.65 and the ASV rejected it, moving the t-DCF."""
    targets, nontargets = [1.0, 0.9, 0.8, 0.7, 0.6], [0.6, 0.2, 0.1, 0.0, -0.1]
    asv = np.array([*targets, *nontargets, 0.65, 0.3])
    kinds = np.array([TARGET] * 5 + [NONTARGET] * 5 + [SPOOF] * 2)
    assert asv_eer_threshold(asv, kinds) == 0.6
    cm = np.array([3.0, 2.0, 2.5, 1.0, 0.5, 1.5, 0.2, 0.8, 2.2, 0.1, 1.2, -1.0])
    assert min_t_dcf(cm, asv, kinds) == pytest.approx(_exact_min_t_dcf(cm, asv, kinds, TDcfCosts()), rel=1e-12)
    # At 0.6 the ASV accepts the spoof at 0.65 (Pfa_spf_asv 1/2): C2 = 0.05 * 10 / 2 = 0.25.
    assert min_t_dcf(cm, asv, kinds) != pytest.approx(min_t_dcf(cm, asv, kinds, asv_threshold=0.65))


def test_the_asv_threshold_and_min_t_dcf_equal_exact_arithmetic() -> None:
    rng = np.random.default_rng(9)
    checked = 0
    for _ in range(150):
        asv, cm, kinds = _random_three_kinds(rng, int(rng.integers(4, 40)), int(rng.integers(2, 7)))
        assert asv_eer_threshold(asv, kinds) == _exact_asv_threshold(asv, kinds)
        try:
            value = min_t_dcf(cm, asv, kinds)
        except MetricInputError:
            continue
        assert value == pytest.approx(_exact_min_t_dcf(cm, asv, kinds, TDcfCosts()), rel=1e-12, abs=1e-12)
        checked += 1
    assert checked > 100


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
    """Weight 0 is an absent trial: its score is no candidate for the t-DCF's ASV threshold either (a candidate
    below the next weighed score gave the same bona fide rates and moved the spoofs' rate)."""
    asv = np.array([0.9, 0.8, 0.1, 0.5, 0.6, 0.95])
    kinds = np.array([TARGET, TARGET, NONTARGET, NONTARGET, SPOOF, SPOOF])
    weights = np.array([1, 1, 1, 0, 1, 1])  # the non-target at 0.5 is absent; the spoof at 0.6 lies above it
    assert asv_eer_threshold(asv, kinds, weights) == asv_eer_threshold(asv[weights > 0], kinds[weights > 0]) == 0.8
    cm = np.array([2.0, 1.0, 3.0, 0.0, 1.5, 0.5])
    assert min_t_dcf(cm, asv, kinds, weights=weights) == pytest.approx(min_t_dcf(cm[weights > 0], asv[weights > 0],
                                                                                 kinds[weights > 0]))  # fmt: skip
    with pytest.raises(MetricInputError, match="no weight"):  # was NaN: the non-targets' rate divided 0 by 0
        min_t_dcf(cm, asv, kinds, weights=[1, 1, 0, 0, 1, 1])
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


def test_the_draws_of_each_metric_are_its_repeated_trials() -> None:
    """A bootstrap's draws at once: row r of ``*_draws`` is the metric of the trials repeated as row r weighs them,
    against the oracles above (brute force for the a-DCF, the t-EER's rule and the t-DCF in rational arithmetic);
    NaN where that metric is undefined, a draw without weight on a kind among them."""
    rng = np.random.default_rng(31)
    checked = {"a_dcf": 0, "t_eer": 0, "min_t_dcf": 0}
    for _ in range(12):
        asv, cm, kinds = _random_three_kinds(rng, int(rng.integers(6, 40)), int(rng.integers(2, 9)))
        weights = rng.integers(0, 4, (15, asv.size))
        weights[0] = 1
        weights[1, kinds == SPOOF] = 0  # a draw without spoofs: no metric
        drawn = {
            "a_dcf": a_dcf_draws(asv, kinds, weights),
            "t_eer": t_eer_draws(cm, asv, kinds, weights),
            "min_t_dcf": min_t_dcf_draws(cm, asv, kinds, weights),
        }
        for row, weight in enumerate(weights):
            repeated = np.repeat(np.arange(asv.size), weight)
            r_asv, r_cm, r_kinds = asv[repeated], cm[repeated], kinds[repeated]
            if not all((r_kinds == kind).any() for kind in (TARGET, NONTARGET, SPOOF)):
                assert all(np.isnan(values[row]) for values in drawn.values())
                continue
            thresholds = [*np.unique(r_asv), np.inf]
            brute = min(
                0.9 * np.mean(r_asv[r_kinds == TARGET] < t) + 0.5 * np.mean(r_asv[r_kinds == NONTARGET] >= t)
                + 1.0 * np.mean(r_asv[r_kinds == SPOOF] >= t) for t in thresholds
            ) / 0.9  # fmt: skip
            assert drawn["a_dcf"][row] == pytest.approx(brute, rel=1e-12, abs=1e-12)
            expected = _published_t_eer(r_cm, r_asv, r_kinds)
            if expected is None:
                assert np.isnan(drawn["t_eer"][row])
            else:
                assert drawn["t_eer"][row] == pytest.approx(expected, abs=1e-12)
            try:
                min_t_dcf(r_cm, r_asv, r_kinds)
            except MetricInputError:
                assert np.isnan(drawn["min_t_dcf"][row])
            else:
                exact = _exact_min_t_dcf(r_cm, r_asv, r_kinds, TDcfCosts())
                assert drawn["min_t_dcf"][row] == pytest.approx(exact, rel=1e-12, abs=1e-12)
            checked = {name: count + int(np.isfinite(drawn[name][row])) for name, count in checked.items()}
    assert min(checked.values()) > 100
    with pytest.raises(MetricInputError, match="trial weights must be >= 0"):
        a_dcf_draws([0.1, 0.5, 0.9], [NONTARGET, TARGET, SPOOF], [[1, -1, 1]])
    with pytest.raises(MetricInputError, match="expected draws x 3 trial weights"):
        t_eer_draws([0.1, 0.5, 0.9], [0.1, 0.5, 0.9], [NONTARGET, TARGET, SPOOF], [1, 1, 1])
