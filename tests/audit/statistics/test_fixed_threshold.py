"""The fixed-threshold analysis against oracles: each resample's threshold and rates equal those of the trials
repeated as often as their speakers were drawn, and the FRR and FAR intervals cover the population's rates at the
population's development threshold in a simulation with known truth."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import ndtr

from audit.metrics.weighted_roc import ResampleWeights
from audit.statistics.contrasts import SpeakerDraws
from audit.statistics.draws import StatisticsInputError
from audit.statistics.subgroups import FixedThresholdInput, _threshold_indices, fixed_threshold_analysis

MU, TARGET_SD, NONTARGET_SD, SHIFT = 2.0, 0.6, 0.5, 0.5  # subgroup F's targets sit SHIFT higher


def _setting(rng: np.random.Generator, n_dev: int, n_per_group: int, targets: int = 8, nontargets: int = 16):
    """Development speakers (half F) and evaluation speakers (n_per_group each of F and M): a target scores
    MU (+ SHIFT for F) + a speaker effect + noise, a non-target the two speakers' effects + noise."""
    n = n_dev + 2 * n_per_group
    female = np.arange(n) % 2 == 0
    dev = np.arange(n) < n_dev
    target_effect, nontarget_effect = rng.normal(0, TARGET_SD, n), rng.normal(0, NONTARGET_SD, n)
    enrol_t = np.repeat(np.arange(n), targets)
    enrol_n = np.repeat(np.arange(n), nontargets)
    pool = {True: np.flatnonzero(dev), False: np.flatnonzero(~dev)}  # a non-target stays inside its split
    test_n = np.array([rng.choice(pool[bool(dev[s])][pool[bool(dev[s])] != s]) for s in enrol_n])
    enrol, test = np.r_[enrol_t, enrol_n], np.r_[enrol_t, test_n]
    labels = np.r_[np.ones(enrol_t.size, int), np.zeros(enrol_n.size, int)]
    target_mean = MU + SHIFT * female + target_effect
    scores = np.where(labels == 1, target_mean[enrol], nontarget_effect[enrol] + nontarget_effect[test])
    scores = scores + rng.normal(0, 1, labels.size)
    names = np.array([f"s{i:03d}" for i in range(n)])
    return FixedThresholdInput(
        {"setting": "sim"},
        scores,
        labels,
        names[enrol],
        names[test],
        np.where(female[enrol], "F", "M"),
        names[dev].tolist(),
    )


def _truth() -> dict[str, float]:
    """The population's development EER threshold (targets half F, half M) and each subgroup's rates at it."""
    target_sd, nontarget_sd = np.sqrt(1 + TARGET_SD**2), np.sqrt(1 + 2 * NONTARGET_SD**2)

    def miss(x: float) -> float:
        return 0.5 * (ndtr((x - MU - SHIFT) / target_sd) + ndtr((x - MU) / target_sd))

    threshold = brentq(lambda x: miss(x) - ndtr(-x / nontarget_sd), -10, 10, xtol=1e-13)
    far = float(ndtr(-threshold / nontarget_sd))
    return {
        "frr F": float(ndtr((threshold - MU - SHIFT) / target_sd)),
        "frr M": float(ndtr((threshold - MU) / target_sd)),
        "far F": far,
        "far M": far,
    }


def test_each_resample_rechooses_the_threshold_as_the_repeated_trials_would() -> None:
    rng = np.random.default_rng(3)
    record = _setting(rng, n_dev=10, n_per_group=4, targets=3, nontargets=4)
    scores, labels = np.round(np.asarray(record.scores), 1), np.asarray(record.labels).astype(bool)  # ties
    record = FixedThresholdInput(**{**record.__dict__, "scores": scores})
    draws = SpeakerDraws.of([np.asarray(record.enrol_speaker), np.asarray(record.test_speaker)], 40, seed=2)
    result = fixed_threshold_analysis(record, draws=draws, n_resamples=40)
    dev = np.isin(record.enrol_speaker, record.dev_speakers)
    dev_codes = draws.codes(np.asarray(record.enrol_speaker)[dev], np.asarray(record.test_speaker)[dev])
    candidates = np.unique(scores[dev])
    chosen = _threshold_indices(scores[dev], labels[dev], candidates, dev_codes, draws.weights, "eer")
    weights = draws.weights.tiles.transpose(0, 2, 1).reshape(-1, draws.index.size + 1)[: draws.weights.rows]
    for row, position in zip(weights, chosen, strict=True):
        copies = (row[dev_codes[0]] * row[dev_codes[1]]).astype(int)  # each development trial as often as drawn
        repeated = _threshold_indices(
            np.repeat(scores[dev], copies), np.repeat(labels[dev], copies), candidates, None, None, "eer"
        )[0]
        assert position == repeated
    assert isinstance(draws.weights, ResampleWeights) and result["threshold_resampled"]
    assert result["threshold_draws"]["distinct"] > 1  # the threshold varies between resamples


def test_too_few_development_speakers_stop_the_analysis_with_the_reason() -> None:
    record = _setting(np.random.default_rng(4), n_dev=6, n_per_group=5)
    with pytest.raises(StatisticsInputError, match=r"6 speaker\(s\) with target trials.*minimum of 10 per class"):
        fixed_threshold_analysis(record, n_resamples=20, min_dev_speakers=10)


def test_speakers_named_by_numbers_or_text_give_the_same_analysis() -> None:
    """Speakers and subgroups are compared as text, whatever their type: a speaker named by a number on the enrolment
    side and by its text on the test side (objects of both kinds) gives the analysis of the ids all as text, with and
    without shared draws; a speaker the shared draws lack is refused by name."""
    record = _setting(np.random.default_rng(5), n_dev=10, n_per_group=4)
    number = {f"s{i:03d}": i for i in range(100)}
    mixed = FixedThresholdInput(
        **{
            **record.__dict__,
            "enrol_speaker": np.array([number[s] for s in record.enrol_speaker], dtype=object),
            "test_speaker": np.array([str(number[s]) for s in record.test_speaker], dtype=object),
            "subgroups": np.array(list(record.subgroups), dtype=object),
            "dev_speakers": [number[s] for s in record.dev_speakers],
        }
    )
    text = FixedThresholdInput(
        **{
            **record.__dict__,
            "enrol_speaker": np.array([str(number[s]) for s in record.enrol_speaker]),
            "test_speaker": np.array([str(number[s]) for s in record.test_speaker]),
            "dev_speakers": [str(number[s]) for s in record.dev_speakers],
        }
    )
    assert fixed_threshold_analysis(mixed, n_resamples=30) == fixed_threshold_analysis(text, n_resamples=30)
    draws = SpeakerDraws.of([np.asarray(text.enrol_speaker), np.asarray(text.test_speaker)], 30, seed=1)
    assert fixed_threshold_analysis(mixed, draws=draws) == fixed_threshold_analysis(text, draws=draws)
    enrolled = np.asarray(text.enrol_speaker)
    lacking = SpeakerDraws.of([enrolled[enrolled != "17"]], 30, seed=1)
    with pytest.raises(StatisticsInputError, match="'17' is not among the drawn speakers"):
        fixed_threshold_analysis(text, draws=lacking)


def _coverage(n_datasets: int, n_resamples: int, n_dev: int, n_per_group: int, seed: int) -> dict[str, float]:
    truth = _truth()
    covered = dict.fromkeys(truth, 0)
    for index in range(n_datasets):
        record = _setting(np.random.default_rng(seed + index), n_dev, n_per_group)
        result = fixed_threshold_analysis(record, n_resamples=n_resamples, seed=index)
        for name, value in truth.items():
            rate, group = name.split()
            interval = result["subgroups"][group][rate]
            covered[name] += interval["low"] <= value <= interval["high"]
    return {name: hits / n_datasets for name, hits in covered.items()}


def test_frr_and_far_intervals_cover_the_rates_at_the_population_threshold() -> None:
    # 20 development speakers, 15 per subgroup: the threshold moves with the development speakers drawn, and the
    # intervals carry it. 150 datasets: a 95 % rate lies above 0.89 with probability ~0.999 (binomial SE 0.018).
    # A larger run: tests marked slow below (about 0.94-0.97 for each rate).
    coverage = _coverage(150, 200, n_dev=20, n_per_group=15, seed=10_000)
    assert all(0.89 <= rate <= 1.0 for rate in coverage.values()), coverage


@pytest.mark.slow
@pytest.mark.parametrize(("n_dev", "n_per_group"), [(20, 15), (10, 30)])
def test_frr_coverage_at_15_and_more_speakers_per_subgroup(n_dev: int, n_per_group: int) -> None:
    # 600 datasets, 300 resamples: binomial SE 0.009; the band 0.925-0.985 allows 2.5 SE below 0.95.
    coverage = _coverage(600, 300, n_dev=n_dev, n_per_group=n_per_group, seed=20_000 + n_dev)
    assert all(0.925 <= rate <= 0.985 for rate in coverage.values()), coverage


def test_binned_sums_are_the_one_hot_columns_of_weighted_sums() -> None:
    from audit.metrics.weighted_roc import binned_sums, weighted_sums
    from audit.statistics.draws import draw_cluster_weights

    rng = np.random.default_rng(9)
    enrol, partner = rng.integers(0, 7, 300), rng.integers(0, 8, 300)  # partner 7: weight 1
    bins = rng.integers(0, 5, 300)
    weights = draw_cluster_weights(7, 70, seed=1)
    one_hot = np.eye(5)[bins]
    assert binned_sums(weights, enrol, partner, bins, 5) == pytest.approx(
        weighted_sums(weights, enrol, partner, one_hot).T
    )
