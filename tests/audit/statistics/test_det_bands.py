"""DET bands (audit.statistics.det_bands): the miss rate at a false-alarm rate, of the sample and of every draw of
the shared speaker bootstrap, against an oracle written here from the definition (the weighted share of targets
below the non-target whose step of the false-alarm rate holds the wanted rate: continuous scores, no tie across the
classes); the band is the percentile interval of those draws; and on a simulation with known truth (equal-variance
Gaussian classes with speaker effects on both sides, a generator of this module's own) the 95% bands cover the
true DET at three operating points about 95% of the time."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from audit.statistics import ScoredRecord
from audit.statistics.contrasts import SpeakerDraws
from audit.statistics.det_bands import BAND_P_FA, det_band, det_bands, score_bins
from tests.audit.statistics.speaker_trials import speaker_trials

MEAN = 1.0  # targets N(MEAN, VARIANCE), non-targets N(-MEAN, VARIANCE) over speakers and trials
TARGET_EFFECT = 0.5  # per speaker (tests.audit.statistics.speaker_trials)
VARIANCE = 1.0 + TARGET_EFFECT**2
OPERATING_POINTS = np.array([0.05, 0.1, 0.2])  # false-alarm rates of the coverage checks


def simulate(rng: np.random.Generator, n_speakers: int, per_speaker: int) -> ScoredRecord:
    """Per speaker ``per_speaker`` targets (its target effect) and as many non-targets against random others
    (both speakers' non-target effects), unit trial noise."""
    names = np.asarray([f"s{i:03d}" for i in range(n_speakers)])
    enrol, test, labels, scores = speaker_trials(rng, names, per_speaker, mean=MEAN, target_effect=TARGET_EFFECT)
    return ScoredRecord({"series": "sim"}, scores, labels, enrol, test)


def true_miss(p_fa: np.ndarray) -> np.ndarray:
    """The population's miss rate at each false-alarm rate: the threshold is the non-targets' (1 - p) quantile."""
    threshold = -MEAN + math.sqrt(VARIANCE) * norm.ppf(1.0 - p_fa)
    return np.asarray(norm.cdf((threshold - MEAN) / math.sqrt(VARIANCE)))


def oracle_miss(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray, p_fa: float) -> float:
    """Weighted share of targets below the non-target at which the false-alarm rate, counted from the top, first
    reaches ``p_fa`` (the DET is flat across that non-target's step)."""
    order = np.argsort(-scores[~labels])
    descending, weight = scores[~labels][order], weights[~labels][order]
    reached = np.cumsum(weight) / weight.sum()
    step = int(np.searchsorted(reached, p_fa))
    below = labels & (scores < descending[step])
    return float(weights[below].sum() / weights[labels].sum())


def test_the_sample_and_every_draw_against_the_oracle() -> None:
    """The estimate is the oracle's on unit weights, and the band the percentile interval of the oracle's miss on
    each draw's weights (enrolment multiplicity times test multiplicity)."""
    record = simulate(np.random.default_rng(2), 12, 8)
    rates = np.array([0.0537, 0.1313, 0.3071])  # no false-alarm step of these trials lands on them
    draws = SpeakerDraws.of([record.enrol_speaker, record.test_speaker], 50, 4)
    band = det_band(record, draws, 0.9, rates)
    ones = np.ones(record.scores.size)
    assert band["p_miss"] == pytest.approx(
        [oracle_miss(record.scores, record.labels, ones, p) for p in rates], abs=1e-5
    )
    weights = draws.trial_weights(record.enrol_speaker, record.test_speaker)
    drawn = np.array([[oracle_miss(record.scores, record.labels, w, p) for p in rates] for w in weights])
    low, high = np.quantile(drawn, [0.05, 0.95], axis=0)
    assert band["low"] == pytest.approx(low.tolist(), abs=1e-5)
    assert band["high"] == pytest.approx(high.tolist(), abs=1e-5)
    assert band["n_target"] == band["n_nontarget"] == 96 and band["n_speakers"] == 12 and band["n_undefined"] == 0


def test_rates_below_one_non_target_trial_are_left_out() -> None:
    """Below one non-target's share the curve is no measurement: 96 non-targets keep the grid's rates from about
    1.04 % up."""
    record = simulate(np.random.default_rng(3), 12, 8)
    band = det_band(record, SpeakerDraws.of([record.enrol_speaker, record.test_speaker], 20, 1), 0.95)
    kept = BAND_P_FA[BAND_P_FA * 96 >= 1.0]
    assert band["p_fa"] == pytest.approx(kept.round(5).tolist()) and len(band["p_fa"]) < BAND_P_FA.size


def test_many_distinct_scores_are_binned_at_each_class_quantiles() -> None:
    """Beyond ``max_bins`` distinct scores, bins follow the score order, number at most ``max_bins`` and each holds
    about as many trials of a class as the others (quantiles per class)."""
    rng = np.random.default_rng(5)
    scores, labels = rng.normal(size=4000), np.r_[np.ones(400, bool), np.zeros(3600, bool)]
    scores[labels] += 2.0
    bins, n = score_bins(scores, labels, max_bins=64)
    order = np.argsort(scores)
    assert np.all(np.diff(bins[order]) >= 0) and n <= 64
    per_bin = np.bincount(bins[labels], minlength=n)
    assert per_bin.max() <= 2 * 400 / 32 + 2


def test_a_record_without_a_class_says_why() -> None:
    record = simulate(np.random.default_rng(1), 6, 4)
    only_targets = ScoredRecord({"series": "t"}, record.scores[record.labels], record.labels[record.labels],
                             record.enrol_speaker[record.labels], record.test_speaker[record.labels])  # fmt: skip
    (band,) = det_bands([only_targets], SpeakerDraws.of([record.enrol_speaker], 10, 1), 0.95)
    assert band == {"key": {"series": "t"}, "skipped": "DET band {'series': 't'}: its scored trials lack a class"}


def band_coverage(n_datasets: int, n_speakers: int, per_speaker: int, n_resamples: int, seed: int) -> np.ndarray:
    """Per operating point, the share of data sets whose band covers the true miss rate."""
    rng = np.random.default_rng(seed)
    truth, covered = true_miss(OPERATING_POINTS), np.zeros(OPERATING_POINTS.size)
    for dataset in range(n_datasets):
        record = simulate(rng, n_speakers, per_speaker)
        draws = SpeakerDraws.of([record.enrol_speaker, record.test_speaker], n_resamples, seed + dataset)
        band = det_band(record, draws, 0.95, OPERATING_POINTS)
        covered += (np.asarray(band["low"]) <= truth) & (truth <= np.asarray(band["high"]))
    return covered / n_datasets


def test_the_bands_cover_the_true_det_at_three_operating_points() -> None:
    """80 data sets of 30 speakers (10 targets and 10 non-targets each), 200 draws: each point's 95% band covers
    the truth in at least 85% of them (Monte-Carlo SE about 0.024 at 0.95); full size in
    benchmarks/bench_det_bands.py."""
    assert np.all(band_coverage(80, 30, 10, 200, seed=17) >= 0.85)
