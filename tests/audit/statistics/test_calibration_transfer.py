"""Calibration transfer intervals (audit.statistics.calibration): each draw is the metric of the trials repeated as
often as the two-way draw weighs them (oracle: the library's functions on the repeated trials), and, in a
simulation with known calibration (scores drawn as LLRs, speaker effects on both sides), the Cllr and actDCF
intervals cover the truth at about the nominal rate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from audit.metrics.calibration import LinearCalibration, act_dcf, cllr, fit_logistic_calibration, min_cllr
from audit.metrics.point import min_dcf
from audit.statistics.calibration import METRICS, CalibrationInput, calibration_transfer
from audit.statistics.contrasts import SpeakerDraws


def _trials(rng: np.random.Generator, speakers: list[str], per_speaker: int, mean: float, sds: tuple[float, float]):  # type: ignore[no-untyped-def]
    """Per enrolment speaker ``per_speaker`` targets N(m, 2m) + the speaker's target effect (SD ``sds[0]``) and as
    many non-targets against random other speakers N(-m, 2m) + both speakers' non-target effects (SD ``sds[1]``
    each): LLR scores with speaker effects on both sides, as ``audit.statistics.CoverageDesign`` lays them out."""
    n = len(speakers)
    target_effect, nontarget_effect = rng.normal(0, sds[0], n), rng.normal(0, sds[1], n)
    own = np.repeat(np.arange(n), per_speaker)
    other = (own + rng.integers(1, n, own.size)) % n
    noise = math.sqrt(2 * mean)
    targets = rng.normal(mean, noise, own.size) + target_effect[own]
    nontargets = rng.normal(-mean, noise, own.size) + nontarget_effect[own] + nontarget_effect[other]
    names = np.asarray(speakers)
    labels = np.r_[np.ones(own.size, dtype=bool), np.zeros(own.size, dtype=bool)]
    return names[np.r_[own, own]], names[np.r_[own, other]], labels, np.r_[targets, nontargets]


def test_each_draw_is_the_metric_of_the_repeated_trials() -> None:
    rng = np.random.default_rng(3)
    speakers = [f"s{i}" for i in range(6)]
    enrol, test, labels, scores = _trials(rng, speakers, 5, 1.5, (0.5, 0.3))
    scores = np.round(scores, 1)  # ties, as PAV and minDCF must handle them
    fit = LinearCalibration(0.9, -0.2)
    record = CalibrationInput({"record_id": "r"}, fit, scores, labels, enrol, test, (0.2, 1.0, 1.0))
    draws = SpeakerDraws.of([enrol, test], 25, 11)
    (row,) = calibration_transfer([record], draws, 0.9)
    index = {speaker: position for position, speaker in enumerate(draws.index)}
    multiplicity = draws.weights.tiles.transpose(0, 2, 1).reshape(-1, len(index) + 1)[:25].astype(int)
    expected: dict[str, list[float]] = {name: [] for name in METRICS}
    for m in multiplicity:
        repeat = np.array(
            [m[index[e]] * (1 if e == t else m[index[t]]) for e, t in zip(enrol, test, strict=True)], dtype=int
        )
        keep = np.repeat(np.arange(scores.size), repeat)
        s, lab = scores[keep], labels[keep]
        if not (lab.any() and (~lab).any()):
            for name in METRICS:
                expected[name].append(np.nan)
            continue
        values = {
            "cllr": cllr(fit.apply(s), lab),
            "min_cllr": min_cllr(s, lab),
            "act_dcf": act_dcf(fit.apply(s), lab, 0.2),
            "min_dcf": min_dcf(s, lab, 0.2),
        }
        values["cllr_minus_min_cllr"] = values["cllr"] - values["min_cllr"]
        values["act_dcf_minus_min_dcf"] = values["act_dcf"] - values["min_dcf"]
        for name in METRICS:
            expected[name].append(values[name])
    for name in METRICS:
        draws_of = np.array(expected[name])
        defined = draws_of[np.isfinite(draws_of)]
        assert row[name]["n_undefined"] == draws_of.size - defined.size, name
        assert (row[name]["low"], row[name]["high"]) == pytest.approx(tuple(np.quantile(defined, [0.05, 0.95]))), name
    assert row["cllr"]["estimate"] == pytest.approx(cllr(fit.apply(scores), labels))
    assert row["min_dcf"]["estimate"] == pytest.approx(min_dcf(scores, labels, 0.2))


def _truth(fit: LinearCalibration, mean: float, target_var: float, nontarget_var: float, p_target: float):  # type: ignore[no-untyped-def]
    """Population Cllr and actDCF of ``fit`` applied to targets N(m, target_var), non-targets N(-m, nontarget_var)."""
    t_sd, n_sd = math.sqrt(target_var), math.sqrt(nontarget_var)
    target = integrate.quad(lambda x: norm.pdf(x, mean, t_sd) * np.logaddexp(0, -(fit.scale * x + fit.offset)), -60, 60)
    nontarget = integrate.quad(
        lambda x: norm.pdf(x, -mean, n_sd) * np.logaddexp(0, fit.scale * x + fit.offset), -60, 60
    )
    threshold = (math.log((1 - p_target) / p_target) - fit.offset) / fit.scale  # in score units (scale > 0)
    p_miss, p_fa = norm.cdf(threshold, mean, t_sd), norm.sf(threshold, -mean, n_sd)
    dcf = (p_target * p_miss + (1 - p_target) * p_fa) / min(p_target, 1 - p_target)
    return (target[0] + nontarget[0]) / (2 * math.log(2)), dcf


@pytest.mark.slow
def test_cllr_and_act_dcf_intervals_cover_at_the_nominal_rate() -> None:
    """Scores drawn as LLRs (targets N(m, 2m), non-targets N(-m, 2m), m = 2) plus speaker effects in
    ``CoverageDesign``'s proportions to the trial noise (a target's speaker SD 0.6 of it, each side of a non-target
    0.5 of it). Per data set: a calibration fitted on 20 development speakers (as the bundle path fits it), then 40
    evaluation speakers x 10 targets and 10 non-targets and 200 two-way draws. The truth is the population Cllr
    and actDCF (p_target 0.2) of the fitted map on the marginal score distributions. Over 150 data sets the 95 %
    intervals cover it in 0.90..0.99 of them (about +-2.5 binomial standard errors of 150 at 0.95)."""
    mean, p_target = 2.0, 0.2
    noise = math.sqrt(2 * mean)
    sds = (0.6 * noise, 0.5 * noise)
    rng = np.random.default_rng(30)
    covered, n_sets = np.zeros(2), 150
    for data_set in range(n_sets):
        dev = _trials(rng, [f"d{i}" for i in range(20)], 10, mean, sds)
        fit = fit_logistic_calibration(dev[3], dev[2])
        enrol, test, labels, scores = _trials(rng, [f"e{i}" for i in range(40)], 10, mean, sds)
        record = CalibrationInput({"set": str(data_set)}, fit, scores, labels, enrol, test, (p_target, 1.0, 1.0))
        (row,) = calibration_transfer([record], SpeakerDraws.of([enrol, test], 200, data_set), 0.95)
        truth = _truth(fit, mean, noise**2 + sds[0] ** 2, noise**2 + 2 * sds[1] ** 2, p_target)
        for position, name in enumerate(("cllr", "act_dcf")):
            covered[position] += row[name]["low"] <= truth[position] <= row[name]["high"]
    rates = covered / n_sets
    assert ((rates >= 0.90) & (rates <= 0.99)).all(), rates


def test_a_record_of_one_enrolment_speaker_gets_its_values_and_no_interval() -> None:
    """Its draws would only reweigh that speaker's trials: a narrow interval that reads as a population's."""
    rng = np.random.default_rng(5)
    enrol, test, labels, scores = _trials(rng, [f"s{i}" for i in range(6)], 8, 1.5, (0.5, 0.3))
    alone = enrol == "s0"
    fit = LinearCalibration(0.9, -0.2)
    record = CalibrationInput(
        {"record_id": "one"}, fit, scores[alone], labels[alone], enrol[alone], test[alone], (0.2, 1.0, 1.0)
    )
    (row,) = calibration_transfer([record], SpeakerDraws.of([enrol, test], 50, 1), 0.95)
    assert row["cllr"]["estimate"] == pytest.approx(cllr(fit.apply(scores[alone]), labels[alone]), abs=1e-12)
    for name in METRICS:
        assert row[name]["low"] is None and row[name]["high"] is None
        assert row[name]["withheld"].startswith("one speaker")
