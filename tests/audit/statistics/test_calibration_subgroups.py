"""Per-subgroup calibration gaps (audit.statistics.calibration.subgroup_calibration_gaps): each subgroup's
``Cllr - minCllr`` under one map fitted on development speakers, and its difference to the reference subgroup from
the same draws. Known truth from a generator of this module's own: equal-variance Gaussian scores with speaker effects
on both sides of non-target trials, whose population LLR is a known line; the map is fitted on unshifted development
trials, and a subgroup's scores shifted by ``delta`` are miscalibrated by exactly that shift, its loss an integral
computed here (``scipy.integrate.quad``) beside the reference subgroup's loss of zero."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from audit.metrics.calibration import fit_logistic_calibration
from audit.statistics.calibration import (
    CalibrationInput,
    DevelopmentTrials,
    calibration_statistics,
    subgroup_calibration_section,
)
from audit.statistics.contrasts import SpeakerDraws
from tests.audit.statistics.speaker_trials import speaker_trials

MEAN = 1.2  # targets N(MEAN, VARIANCE), non-targets N(-MEAN, VARIANCE) over speakers and trials
TARGET_EFFECT = 0.4  # SD of a speaker's effect on its target scores (tests.audit.statistics.speaker_trials)
VARIANCE = 1.0 + TARGET_EFFECT**2
SLOPE = 2.0 * MEAN / VARIANCE  # the population LLR: SLOPE * score


def _trials(
    rng: np.random.Generator, prefix: str, n_speakers: int, per_speaker: int, shift: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Enrolment and test speakers, labels and scores: per speaker ``per_speaker`` targets and as many non-targets
    against other speakers of the same set, every score moved by ``shift``."""
    names = np.asarray([f"{prefix}{i}" for i in range(n_speakers)])
    enrol, test, labels, scores = speaker_trials(rng, names, per_speaker, mean=MEAN, target_effect=TARGET_EFFECT)
    return enrol, test, labels, scores + shift


def _population_cllr(offset: float) -> float:
    """Cllr of the LLR ``SLOPE * y + offset`` when y is a target N(MEAN, VARIANCE) or a non-target N(-MEAN, VARIANCE)
    (the formula of Brümmer and du Preez, integrated)."""
    sd = math.sqrt(VARIANCE)

    def cost(mean: float, sign: float) -> float:
        density = lambda y: norm.pdf(y, mean, sd) * np.logaddexp(0.0, sign * (SLOPE * y + offset))  # noqa: E731
        return float(integrate.quad(density, mean - 12 * sd, mean + 12 * sd)[0])

    return (cost(MEAN, -1.0) + cost(-MEAN, 1.0)) / (2.0 * math.log(2.0))


def true_gap(shift: float) -> float:
    """The loss of scores shifted by ``shift`` under the population map (an LLR off by ``SLOPE * shift``) less the
    loss of unshifted ones (zero): the population's minCllr is the Cllr of its true LLR."""
    return _population_cllr(SLOPE * shift) - _population_cllr(0.0)


def _records(
    seed: int, shift: float, n_speakers: int = 20, per_speaker: int = 20, same_speakers: bool = False
) -> tuple[list[CalibrationInput], list[np.ndarray]]:
    """Two subgroups' records of one setting (A unshifted, B shifted) under one map fitted on development speakers."""
    rng = np.random.default_rng(seed)
    dev_enrol, dev_test, dev_labels, dev_scores = _trials(rng, "d", 20, per_speaker)
    development = DevelopmentTrials(dev_scores, dev_labels, dev_enrol, dev_test, 0.5, True)
    fit = fit_logistic_calibration(dev_scores, dev_labels, 0.5, platt=True)
    a = _trials(rng, "a", n_speakers, per_speaker)
    b = (a[0], a[1], a[2], a[3] + shift) if same_speakers else _trials(rng, "b", n_speakers, per_speaker, shift)
    key = {"experiment": "E", "model": "m", "corpus": "c", "condition": "noisy"}
    records = [
        CalibrationInput(
            key | {"subgroup": name, "record_id": f"r-{name}"}, fit, scores, labels, enrol, test, (0.5, 1.0, 1.0),
            development,
        )
        for name, (enrol, test, labels, scores) in (("A", a), ("B", b))
    ]  # fmt: skip
    speakers = [ids for record in records for ids in (record.enrol_speaker, record.test_speaker)]
    return records, [*speakers, dev_enrol, dev_test]


def _gap(seed: int, shift: float, n_resamples: int = 200, **options: Any) -> dict[str, Any]:
    records, speakers = _records(seed, shift, **options)
    draws = SpeakerDraws.of(speakers, n_resamples, seed)
    _, (gap,) = calibration_statistics(records, draws, 0.95)
    return gap


def test_the_truth_of_the_generator() -> None:
    """The oracle itself: the unshifted population's LLR is calibrated (no loss), a shift costs more the larger it
    is, the same either way round for these symmetric classes."""
    assert true_gap(0.0) == 0.0
    assert 0 < true_gap(0.25) < true_gap(0.5)
    assert true_gap(0.5) == pytest.approx(true_gap(-0.5), rel=1e-9)


def test_a_gap_of_zero_by_construction_is_zero_in_every_draw() -> None:
    """Subgroup B is subgroup A's very trials: both losses are the same number in every draw, so the difference is
    exactly 0 and its interval has no width (said so): the difference is taken per draw, on the same draws."""
    gap = _gap(5, 0.0, n_resamples=60, same_speakers=True)
    difference = gap["subgroups"]["B"]["difference_to_reference"]
    assert gap["reference"] == "A" and "difference_to_reference" not in gap["subgroups"]["A"]
    assert difference["estimate"] == 0.0 and difference["low"] == difference["high"] == 0.0
    assert "degenerate" in difference


def test_a_planted_gap_is_found_and_its_interval_holds_the_truth() -> None:
    """B's scores shifted by 1.0 under the one map: the interval of B - A holds the integral's gap and excludes 0;
    each subgroup's own loss is the calibration-transfer row's."""
    shift = 1.0
    records, speakers = _records(11, shift)
    draws = SpeakerDraws.of(speakers, 200, 11)
    rows, (gap,) = calibration_statistics(records, draws, 0.95)
    difference = gap["subgroups"]["B"]["difference_to_reference"]
    truth = true_gap(shift)
    assert 0.0 < difference["low"] <= truth <= difference["high"]
    assert difference["estimate"] == pytest.approx(truth, abs=0.05)
    assert [gap["subgroups"][name]["cllr_minus_min_cllr"] for name in "AB"] == [
        row["cllr_minus_min_cllr"] for row in rows
    ]
    assert gap["subgroups"]["A"]["n_speakers"] == 20 and gap["key"]["condition"] == "noisy"


def test_a_subgroup_of_one_speaker_gives_no_interval() -> None:
    """A subgroup whose trials all belong to one enrolment speaker has no interval, nor has its difference."""
    records, speakers = _records(3, 0.3, n_speakers=20)
    lone = records[1]
    one = lone.enrol_speaker == lone.enrol_speaker[0]
    records[1] = CalibrationInput(
        lone.key, lone.fit, lone.scores[one], lone.labels[one], lone.enrol_speaker[one], lone.test_speaker[one],
        lone.costs, lone.development,
    )  # fmt: skip
    _, (gap,) = calibration_statistics(records, SpeakerDraws.of(speakers, 40, 3), 0.95)
    difference = gap["subgroups"]["B"]["difference_to_reference"]
    assert difference["low"] is None and "one speaker" in difference["withheld"]


def test_the_section_names_each_subgroup_and_its_difference() -> None:
    gap = _gap(7, 0.6, n_resamples=60)
    section = subgroup_calibration_section([gap], lambda value: f"{value['estimate']:.3f}")
    assert section["id"] == "calibration-subgroups"
    assert [(row["subgroup"], row["difference to reference"]) for row in section["table"]] == [
        ("A", "reference"),
        ("B", f"{gap['subgroups']['B']['difference_to_reference']['estimate']:.3f}"),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("shift", [0.0, 0.6])
def test_the_intervals_cover_a_zero_and_a_planted_gap(shift: float) -> None:
    """Over 60 data sets at 20 speakers per subgroup, the 95% interval of B - A covers the true gap (zero, or the
    integral's) in at least 85% of them (Monte-Carlo SE about 0.03 at 0.95)."""
    truth = true_gap(shift)
    covered = [
        (lambda d: d["low"] <= truth <= d["high"])(_gap(seed, shift)["subgroups"]["B"]["difference_to_reference"])
        for seed in range(60)
    ]
    assert np.mean(covered) >= 0.85
