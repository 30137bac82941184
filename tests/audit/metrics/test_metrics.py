"""audit.metrics.point against independent oracles: hand-worked cases, sklearn, VoxSRC's routine, brute force.

Oracles used here and where they come from:
- hand-worked cases (the working is in each test's comment);
- ``sklearn.metrics.roc_curve`` + the paper's snippet for ``legacy``, ``roc_auc_score`` for AUC;
- VoxSRC's ``brentq(lambda x: 1 - x - interp1d(fpr, tpr)(x), 0, 1)`` for ``interp``;
- a brute-force ROC-convex-hull EER (the lowest crossing of the diagonal by any segment joining two ROC
  points) for ``rocch``, and a brute-force minDCF over every threshold;
- ESPnet's published score files (tests/data/README.md);
- hyperion's published test vector (tests/hyperion/metrics/test_eer.py in hyperion-ml/hyperion, Apache-2.0):
  targets ``linspace(-2, 10, 1000)``, non-targets ``linspace(-10, 2, 1000)``, EER in (0.166, 0.167).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.interpolate import interp1d
from scipy.optimize import brentq
from sklearn.metrics import roc_auc_score, roc_curve

from audit.metrics.point import (
    EER_METHODS,
    MetricInputError,
    _order_codes,
    auc,
    eer,
    grouped_metrics,
    min_dcf,
)


def _paper_legacy_eer(scores: np.ndarray, labels: np.ndarray) -> float:
    fpr, tpr, _ = roc_curve(labels, scores)
    fnr = 1 - tpr
    best = np.nanargmin(np.abs(fnr - fpr))
    return float((fpr[best] + fnr[best]) / 2)


def _voxsrc_eer(scores: np.ndarray, labels: np.ndarray) -> float:
    fpr, tpr, _ = roc_curve(labels, scores)
    return float(brentq(lambda x: 1.0 - x - interp1d(fpr, tpr)(x), 0.0, 1.0))


def _det_points(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Pfa, Pmiss) when accepting scores >= t, for t over every distinct score and above the maximum."""
    thresholds = np.append(np.unique(scores), np.inf)
    targets, nontargets = scores[labels == 1], scores[labels == 0]
    p_miss = np.array([np.mean(targets < t) for t in thresholds])
    p_fa = np.array([np.mean(nontargets >= t) for t in thresholds])
    return p_fa, p_miss


def _brute_force_rocch_eer(scores: np.ndarray, labels: np.ndarray) -> float:
    """Lowest point of the diagonal Pfa = Pmiss inside the convex hull of the DET points."""
    p_fa, p_miss = _det_points(scores, labels)
    best = 1.0
    for a in range(p_fa.size):
        for b in range(p_fa.size):
            if p_fa[a] <= p_miss[a] and p_fa[b] >= p_miss[b]:
                gap_a, gap_b = p_miss[a] - p_fa[a], p_fa[b] - p_miss[b]
                if gap_a + gap_b == 0:
                    best = min(best, p_fa[a])
                    continue
                weight = gap_a / (gap_a + gap_b)
                best = min(best, p_fa[a] + weight * (p_fa[b] - p_fa[a]))
    return best


def _brute_force_min_dcf(scores: np.ndarray, labels: np.ndarray, p_target: float) -> float:
    p_fa, p_miss = _det_points(scores, labels)
    cost = p_target * p_miss + (1 - p_target) * p_fa
    return float(min(cost.min(), p_target) / min(p_target, 1 - p_target))


def _random_tied(rng: np.random.Generator, size: int, levels: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer-valued scores (many ties) with both classes and at least two distinct values."""
    while True:
        labels = rng.integers(0, 2, size)
        scores = (rng.integers(0, levels, size) + labels * rng.integers(0, 3)).astype(float)
        if 0 < labels.sum() < size and np.unique(scores).size > 1:
            return scores, labels


# Targets [2, 3, 4, 5], non-targets [1, 2, 3, 4] (issue 2). ROC at thresholds 5..1: (fpr, tpr) = (0, .25),
# (.25, .5), (.5, .75), (.75, 1), (1, 1). roc_curve keeps (0, 0), (0, .25), (.75, 1), (1, 1) (equal steps
# between), |fnr - fpr| = 1, .75, .75, 1: the first minimum (0, .25) gives (0 + .75) / 2 = .375. The polyline
# crosses fpr = fnr halfway between (.25, .5) and (.5, .75): .375; the hull is that same straight line.
# AUC: 11.5 winning pairs of 16 (ties count half) = .71875.
TIED_SCORES = np.array([2, 3, 4, 5, 1, 2, 3, 4], dtype=float)
TIED_LABELS = np.array([1, 1, 1, 1, 0, 0, 0, 0])


@pytest.mark.parametrize("method", EER_METHODS)
def test_issue_example_gives_three_eighths(method: str) -> None:
    assert eer(TIED_SCORES, TIED_LABELS, method) == pytest.approx(0.375, abs=1e-15)  # type: ignore[arg-type]


def test_issue_example_auc_and_min_dcf() -> None:
    assert auc(TIED_SCORES, TIED_LABELS) == 0.71875
    # p_target .5: accept >= 5 gives Pmiss .75, Pfa 0 -> (.5 * .75) / .5 = .75, and every threshold ties it.
    assert min_dcf(TIED_SCORES, TIED_LABELS, p_target=0.5) == pytest.approx(0.75, abs=1e-15)


def test_dropped_point_changes_legacy_but_not_the_others() -> None:
    # Descending: 4 (non), 3 (tar), 1 (tar), 0 (non); ROC (.5, 0), (.5, .5), (.5, 1), (1, 1). roc_curve drops
    # (.5, .5) (equal steps either side), so the first smallest |fnr - fpr| is .5 at (.5, 0): (.5 + 1) / 2.
    # The crossing itself is at (.5, .5): interp .5. Hull (0, 0) -> (.5, 1) -> (1, 1): tpr = 2 fpr meets
    # fpr = 1 - tpr at 1/3. AUC: 2 of 4 pairs won.
    scores, labels = np.array([1.0, 4.0, 0.0, 3.0]), np.array([1, 0, 0, 1])
    assert eer(scores, labels, "legacy") == 0.75 == _paper_legacy_eer(scores, labels)
    assert eer(scores, labels, "interp") == pytest.approx(0.5, abs=1e-15)
    assert eer(scores, labels, "rocch") == pytest.approx(1 / 3, abs=1e-15)
    assert auc(scores, labels) == 0.5


def test_min_dcf_hand_worked() -> None:
    # Targets [3, 4], non-targets [1, 2, 3], p_target .5: accept >= 4: Pmiss .5, Pfa 0 -> .5; accept >= 3:
    # Pmiss 0, Pfa 1/3 -> 1/3; accept >= 2: Pfa 2/3; reject all: 1. Normalised by .5: 1/3 is the minimum.
    scores, labels = np.array([3.0, 4.0, 1.0, 2.0, 3.0]), np.array([1, 1, 0, 0, 0])
    assert min_dcf(scores, labels, p_target=0.5) == pytest.approx(1 / 3, abs=1e-15)
    # p_target .01: accept >= 4 misses half the targets and admits no non-target: (.01 * .5) / .01 = .5;
    # every lower threshold adds .99 / 3 per false alarm, and reject-all costs 1.
    assert min_dcf(scores, labels) == pytest.approx(0.5, abs=1e-15)


def test_perfect_separation() -> None:
    scores, labels = np.array([0.1, 0.2, 0.8, 0.9]), np.array([0, 0, 1, 1])
    for method in EER_METHODS:
        assert eer(scores, labels, method) == 0.0
    assert auc(scores, labels) == 1.0
    assert min_dcf(scores, labels) == 0.0


def test_inverted_scores_are_never_reversed() -> None:
    # Targets [1, 2] below non-targets [3, 4]: ROC (.5, 0), (1, 0), (1, .5), (1, 1); legacy keeps (1, 0) where
    # |fnr - fpr| = 0: EER 1.0. The polyline meets fpr = fnr at (1, 0): 1.0. The convex hull is the chance
    # diagonal: .5 (rocch is at most .5 by construction).
    scores, labels = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 1, 0, 0])
    assert eer(scores, labels, "legacy") == 1.0
    assert eer(scores, labels, "interp") == 1.0
    assert eer(scores, labels, "rocch") == 0.5
    assert auc(scores, labels) == 0.0


def test_hyperion_published_vector() -> None:
    targets, nontargets = np.linspace(-2, 10, 1000), np.linspace(-10, 2, 1000)
    scores = np.concatenate([targets, nontargets])
    labels = np.concatenate([np.ones(1000, dtype=int), np.zeros(1000, dtype=int)])
    # Mirror images about 0: at threshold 0, 167 targets lie below (j <= 166) and 167 non-targets above
    # (k >= 833), so the ROC has a vertex with fpr = fnr = .167 exactly, which is where interp crosses.
    assert eer(scores, labels, "interp") == pytest.approx(0.167, abs=1e-12)
    assert 0.166 < eer(scores, labels, "rocch") < 0.167
    assert eer(scores, labels, "legacy") == _paper_legacy_eer(scores, labels)


def test_legacy_equals_the_paper_snippet_on_random_tied_inputs() -> None:
    rng = np.random.default_rng(2)
    for _ in range(600):
        scores, labels = _random_tied(rng, int(rng.integers(2, 60)), int(rng.integers(2, 9)))
        assert eer(scores, labels, "legacy") == _paper_legacy_eer(scores, labels)
    for _ in range(20):  # continuous scores, larger
        labels = rng.integers(0, 2, 3000)
        scores = rng.normal(labels * rng.uniform(-1, 2), 1.0)
        assert eer(scores, labels, "legacy") == _paper_legacy_eer(scores, labels)


def test_auc_interp_rocch_min_dcf_against_their_oracles() -> None:
    rng = np.random.default_rng(3)
    for _ in range(150):
        scores, labels = _random_tied(rng, int(rng.integers(2, 40)), int(rng.integers(2, 7)))
        assert auc(scores, labels) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
        assert eer(scores, labels, "interp") == pytest.approx(_voxsrc_eer(scores, labels), abs=1e-9)
        assert eer(scores, labels, "rocch") == pytest.approx(_brute_force_rocch_eer(scores, labels), abs=1e-12)
        for p_target in (0.01, 0.05, 0.5):
            expected = _brute_force_min_dcf(scores, labels, p_target)
            assert min_dcf(scores, labels, p_target=p_target) == pytest.approx(expected, rel=1e-12)


def test_rocch_is_the_hull_lower_bound() -> None:
    rng = np.random.default_rng(4)
    for _ in range(50):
        labels = rng.integers(0, 2, 500)
        scores = rng.normal(labels, 1.0)
        assert eer(scores, labels, "rocch") <= eer(scores, labels, "interp") + 1e-15


def test_min_dcf_costs_are_applied() -> None:
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 2, 400)
    scores = rng.normal(labels, 1.0)
    # Doubling both costs changes nothing after normalisation; c_miss scales like p_target's odds.
    assert min_dcf(scores, labels, 0.05, 2.0, 2.0) == pytest.approx(min_dcf(scores, labels, 0.05), rel=1e-12)
    odds = 0.05 / 0.95 * 3.0
    assert min_dcf(scores, labels, 0.05, 3.0, 1.0) == pytest.approx(
        min_dcf(scores, labels, odds / (1 + odds)), rel=1e-12
    )


def test_grouped_equals_scalar_on_random_records_with_ties() -> None:
    rng = np.random.default_rng(6)
    n_records = 40
    sizes = rng.integers(2, 300, n_records)
    record_index = np.repeat(np.arange(n_records), sizes)
    rng.shuffle(record_index)
    labels = rng.integers(0, 2, record_index.size)
    scale = np.where(rng.random(n_records) < 0.5, 1.0, 0.01)[record_index]  # some records heavily tied
    scores = np.round(rng.normal(labels * 0.8, 1.0) / scale) * scale
    for record in range(n_records):  # make sure every record is scoreable
        member = np.flatnonzero(record_index == record)
        labels[member[0]], labels[member[1]] = 0, 1
        scores[member[0]], scores[member[1]] = -10.0, 10.0
    grouped = grouped_metrics(scores, labels, record_index, p_target=0.05)
    for record in range(n_records):
        member = record_index == record
        s, y = scores[member], labels[member]
        assert grouped["eer_legacy"][record] == eer(s, y, "legacy")
        assert grouped["auc"][record] == auc(s, y)
        assert grouped["min_dcf"][record] == min_dcf(s, y, p_target=0.05)
        assert grouped["eer_rocch"][record] == pytest.approx(eer(s, y, "rocch"), abs=1e-12)
        assert grouped["eer_interp"][record] == pytest.approx(eer(s, y, "interp"), abs=1e-12)
        assert grouped["n_target"][record] == y.sum()
        assert grouped["n_nontarget"][record] == y.size - y.sum()
        assert grouped["eer_legacy"][record] == _paper_legacy_eer(s, y)


@pytest.mark.parametrize(
    ("values", "code_bits"),
    [
        (np.float32(np.random.default_rng(7).normal(size=5000)).astype(float), 40),  # float32: low bits zero
        (np.random.default_rng(8).normal(size=5000), 50),  # packed bucket by bucket
        (1.0 + np.arange(5000) * 2.0**-52, 40),  # neighbours one ulp apart: nothing dropped, still packed
        (1.0 + np.r_[np.arange(1000), 2**40 + np.arange(1000)] * 2.0**-52, 20),  # too wide: the argsort path
        (np.array([-0.0, 0.0, -1.0, 1.0, 1e-300, -1e300, 5e-324]), 30),
    ],
)
def test_order_codes_order_and_tie_exactly(values: np.ndarray, code_bits: int) -> None:
    codes = _order_codes(values.copy(), code_bits)
    assert codes.max() < 2**code_bits
    _, dense_rank = np.unique(values, return_inverse=True)  # -0.0 == 0.0, as np.unique treats them
    _, code_rank = np.unique(codes, return_inverse=True)
    np.testing.assert_array_equal(code_rank, dense_rank)


@pytest.mark.parametrize(
    ("scores", "labels", "message"),
    [
        ([0.1, np.nan, 0.3], [1, 0, 1], "finite"),
        ([0.1, np.inf, 0.3], [1, 0, 1], "finite"),
        ([0.1, 0.2, 0.3], [1, 1, 1], "only one class"),
        ([0.1, 0.2], [1, 0, 1], "differ in length"),
        ([0.1, 0.2, 0.3], [1, 2, 0], "labels must be 0"),
        ([], [], "no trials"),
        ([[0.1, 0.2]], [[1, 0]], "one-dimensional"),
        (["a", "b"], [1, 0], "real numbers"),
    ],
)
def test_bad_input_raises_a_clear_error(scores: list, labels: list, message: str) -> None:
    with pytest.raises(MetricInputError, match=message):
        eer(scores, labels)
    with pytest.raises(MetricInputError, match=message):
        auc(scores, labels)


def test_unknown_method_and_bad_costs() -> None:
    with pytest.raises(MetricInputError, match="unknown EER method"):
        eer(TIED_SCORES, TIED_LABELS, "bosaris")  # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match="p_target"):
        min_dcf(TIED_SCORES, TIED_LABELS, p_target=1.0)
    with pytest.raises(MetricInputError, match="positive"):
        min_dcf(TIED_SCORES, TIED_LABELS, c_fa=0.0)


def test_grouped_names_the_offending_records() -> None:
    scores = np.array([0.1, 0.9, 0.2, 0.3, 0.4, 0.4])
    labels = np.array([0, 1, 1, 1, 0, 1])
    with pytest.raises(MetricInputError, match=r"record\(s\) 1 hold only one class"):
        grouped_metrics(scores, labels, np.array([0, 0, 1, 1, 2, 2]))
    with pytest.raises(MetricInputError, match=r"record\(s\) 2, 3 have no trials"):
        grouped_metrics(scores[:4], labels[:4], np.array([0, 0, 1, 1]), n_records=4)
    with pytest.raises(MetricInputError, match=r"record_index must lie in 0\.\.1"):
        grouped_metrics(scores, labels, np.array([0, 0, 1, 1, 2, 2]), n_records=2)


@pytest.mark.parametrize("p_target", [0.01, 0.05, 0.5])
def test_constant_scores_are_the_chance_values_of_the_references(p_target: float) -> None:
    # sklearn's roc_curve on constant scores gives the points (0, 0) and (1, 1): the paper's snippet returns
    # 0.5, the interpolated crossing is 0.5, the hull is the chance diagonal (0.5), roc_auc_score is 0.5 and
    # the best threshold costs as much as the best trivial decision (minDCF 1).
    scores, labels = np.full(7, 0.3), np.array([1, 0, 0, 1, 0, 0, 0])
    fpr, tpr, _ = roc_curve(labels, scores)
    fnr = 1 - tpr
    index = np.nanargmin(np.abs(fnr - fpr))
    assert (fpr[index] + fnr[index]) / 2 == 0.5 == roc_auc_score(labels, scores)
    for method in ("legacy", "rocch", "interp"):
        assert eer(scores, labels, method) == 0.5  # type: ignore[arg-type]
    assert auc(scores, labels) == 0.5
    assert min_dcf(scores, labels, p_target=p_target) == 1.0
    grouped = grouped_metrics(np.r_[scores, 0.1, 0.9], np.r_[labels, 0, 1], np.r_[np.zeros(7, int), 1, 1])
    assert grouped["eer_legacy"].tolist() == [0.5, 0.0] and grouped["auc"].tolist() == [0.5, 1.0]


def test_importing_metrics_does_not_import_torch() -> None:
    import subprocess
    import sys

    probe = "import sys, audit.metrics.point; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip() == "False"


DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.mark.parametrize(("name", "published_eer", "published_min_dcf"), [("eer0", 0.0, 0.0), ("eer100", 1.0, 1.0)])
def test_espnet_published_score_files(name: str, published_eer: float, published_min_dcf: float) -> None:
    # tests/data/README.md: ESPnet's calculate_eer_mindcf tests publish EER (percent) and minDCF (p_target .05).
    rows = [line.split() for line in (DATA / f"espnet_scores_{name}.txt").read_text().splitlines()]
    scores = np.array([float(score) for _, score, _ in rows])
    labels = np.array([int(label) for _, _, label in rows])
    assert eer(scores, labels, "legacy") == published_eer
    assert min_dcf(scores, labels, p_target=0.05) == published_min_dcf


def test_grouped_metrics_in_chunks_equal_one_pass_and_name_records_by_their_own_codes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import audit.metrics.point

    rng = np.random.default_rng(17)
    records = np.repeat(np.arange(40), rng.integers(5, 60, 40))  # in order: chunked (interleaved: one pass)
    labels = (rng.random(records.size) < 0.4).astype(int)
    for record in range(40):  # both classes in every record
        labels[np.flatnonzero(records == record)[:2]] = [0, 1]
    scores = np.round(rng.normal(labels, 1.0), 1)
    one_pass = grouped_metrics(scores, labels, records, 40)
    monkeypatch.setattr(audit.metrics.point, "_CHUNK_TRIALS", 64)
    chunked = grouped_metrics(scores, labels, records, 40)
    forked = grouped_metrics(scores, labels, records, 40, forked=True)  # the later chunks in a fork: the same floats
    assert all(np.array_equal(forked[name], values) for name, values in chunked.items())
    shuffled = rng.permutation(records.size)
    interleaved = grouped_metrics(scores[shuffled], labels[shuffled], records[shuffled], 40)
    for name, values in one_pass.items():
        tolerance = 1e-15 if name == "eer_rocch" else 0.0  # PAV may pool collinear points differently
        np.testing.assert_allclose(chunked[name], values, rtol=0, atol=tolerance)
        np.testing.assert_allclose(interleaved[name], values, rtol=0, atol=tolerance)
    one_class = labels.copy()
    one_class[records == 27] = 1
    with pytest.raises(MetricInputError, match=r"record\(s\) 27 hold only one class"):
        grouped_metrics(scores, one_class, records, 40)
    with pytest.raises(MetricInputError, match=r"record\(s\) 40 have no trials"):
        grouped_metrics(scores, labels, records, 41)
