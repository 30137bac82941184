"""AS-norm (audit.metrics.normalisation) against independent oracles: a plain sort with ``statistics``, the
score-normalisation step as SpeechBrain's recipe writes it in torch (``topk``, ``std``, unbiased) and as WeSpeaker's
``score_norm.py`` writes it in numpy (``sort``, ``std``, ddof 0), and a simulation with known truth
(speaker-dependent score offsets and scales that AS-norm must remove)."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from scipy.stats import norm

from audit.metrics.normalisation import as_norm, as_norm_metrics, top_cohort_statistics
from audit.metrics.point import MetricInputError, eer
from schemas.eer_method import EerMethod


def test_top_cohort_statistics_equal_a_plain_sort() -> None:
    rng = np.random.default_rng(3)
    scores = np.round(rng.normal(size=(40, 25)), 2)  # rounded: ties among the top scores too
    for top_n in (2, 7, 25):
        means, stds = top_cohort_statistics(scores, top_n)
        for row, mean, std in zip(scores.tolist(), means, stds, strict=True):
            top = sorted(row)[-top_n:]
            assert mean == pytest.approx(statistics.fmean(top), abs=1e-12)
            assert std == pytest.approx(statistics.stdev(top), abs=1e-12)
        _, population = top_cohort_statistics(scores, top_n, ddof=0)
        for row, std in zip(scores.tolist(), population, strict=True):
            assert std == pytest.approx(statistics.pstdev(sorted(row)[-top_n:]), abs=1e-12)


@pytest.mark.every_install  # skipped on the light install: torch is the oracle
def test_as_norm_equals_speechbrains_torch_form() -> None:
    """SpeechBrain's recipes/VoxCeleb/SpeakerRec/speaker_verification_cosine.py: ``topk`` of the cohort scores,
    ``mean`` and ``std`` (unbiased: ddof 1, the runner's ``COHORT_SD_DDOF``) of them, then the symmetric average."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    enrol, test, cohort = (rng.normal(size=(n, 16)) for n in (30, 30, 60))
    enrol, test, cohort = (x / np.linalg.norm(x, axis=1, keepdims=True) for x in (enrol, test, cohort))
    scores = np.sum(enrol * test, axis=1)
    top_n = 12
    mu_e, sd_e = top_cohort_statistics(enrol @ cohort.T, top_n)
    mu_t, sd_t = top_cohort_statistics(test @ cohort.T, top_n)
    ours = as_norm(scores, mu_e, sd_e, mu_t, sd_t)

    e_c = torch.topk(torch.from_numpy(enrol @ cohort.T), k=top_n, dim=1).values
    t_c = torch.topk(torch.from_numpy(test @ cohort.T), k=top_n, dim=1).values
    s = torch.from_numpy(scores)
    theirs = 0.5 * ((s - e_c.mean(dim=1)) / e_c.std(dim=1) + (s - t_c.mean(dim=1)) / t_c.std(dim=1))
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=0, atol=1e-12)


def test_as_norm_with_ddof_0_equals_wespeakers_numpy_form_and_keeps_the_eer() -> None:
    """WeSpeaker's examples/voxceleb/v2/wespeaker/bin/score_norm.py: the cohort scores sorted descending, the first
    ``top_n``, ``np.mean`` and ``np.std`` (ddof 0). With either divisor the normalised scores of one ``top_n`` differ
    by the factor ``sqrt(top_n / (top_n - 1))``: the same EER, not the same scores."""
    rng = np.random.default_rng(6)
    enrol, test, cohort = (rng.normal(size=(n, 16)) for n in (40, 40, 50))
    enrol, test, cohort = (x / np.linalg.norm(x, axis=1, keepdims=True) for x in (enrol, test, cohort))
    scores, labels, top_n = np.sum(enrol * test, axis=1), np.arange(40) % 2, 10
    ours = as_norm(scores, *top_cohort_statistics(enrol @ cohort.T, top_n, ddof=0), *top_cohort_statistics(
        test @ cohort.T, top_n, ddof=0))  # fmt: skip

    def wespeaker_side(side: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        top = np.sort(side @ cohort.T, axis=1)[:, ::-1][:, :top_n]
        return np.mean(top, axis=1), np.std(top, axis=1)

    (mu_e, sd_e), (mu_t, sd_t) = wespeaker_side(enrol), wespeaker_side(test)
    theirs = ((scores - mu_e) / sd_e + (scores - mu_t) / sd_t) / 2
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    sample = as_norm(scores, *top_cohort_statistics(enrol @ cohort.T, top_n), *top_cohort_statistics(
        test @ cohort.T, top_n))  # fmt: skip
    np.testing.assert_allclose(ours, sample * np.sqrt(top_n / (top_n - 1)), rtol=1e-12)
    assert eer(ours, labels, EerMethod.ROCCH) == eer(sample, labels, EerMethod.ROCCH)


def test_as_norm_removes_condition_shifts_a_simulation_with_known_truth() -> None:
    """Trials under 30 conditions, each shifting and scaling every score made under it (a channel's effect), the
    cohort scores of both sides included: the pooled raw EER is inflated, the AS-normalised EER is the EER of the
    undistorted scores, Phi(-d/2), up to the cohort's sampling error (top_n = cohort size: s-norm)."""
    rng = np.random.default_rng(5)
    n_conditions, per_condition, n_cohort, d = 30, 400, 300, 2.0
    shifts, scales = rng.normal(0, 1.0, n_conditions), rng.uniform(0.5, 2.0, n_conditions)
    condition = np.repeat(np.arange(n_conditions), per_condition)
    labels = rng.integers(0, 2, condition.size)
    z = rng.normal(0, 1, condition.size) + d * labels
    raw = shifts[condition] + scales[condition] * z
    # Each side's cohort: impostor scores (the non-target distribution, mean 0) made under the trial's condition.
    cohorts = [shifts[condition, None] + scales[condition, None] * rng.normal(0, 1, (z.size, n_cohort)) for _ in "et"]
    (mu_e, sd_e), (mu_t, sd_t) = (top_cohort_statistics(cohort, n_cohort) for cohort in cohorts)
    normalised = as_norm(raw, mu_e, sd_e, mu_t, sd_t)
    truth = norm.cdf(-d / 2)
    assert eer(z, labels) == pytest.approx(truth, abs=0.01)
    assert eer(raw, labels) > truth + 0.05
    assert eer(normalised, labels) == pytest.approx(eer(z, labels), abs=0.005)


def test_as_norm_metrics_count_what_cannot_be_normalised() -> None:
    labels = np.array([1, 0, 1, 0])
    scores = np.array([0.9, 0.1, np.nan, 0.2])  # the third trial is unscored
    cohort = np.array([[0.1, 0.2, 0.0, 0.1]] * 4)
    row = as_norm_metrics(labels, scores, cohort, method=EerMethod.ROCCH, p_target=0.5, c_miss=1, c_fa=1)
    assert row == {"eer_as_norm": 0.0, "min_dcf_as_norm": 0.0, "n_unnormalised": 0}
    cohort[1, 1] = 0.0  # a scored trial whose enrolment cohort has no spread
    row = as_norm_metrics(labels, scores, cohort, method=EerMethod.ROCCH, p_target=0.5, c_miss=1, c_fa=1)
    assert row == {"eer_as_norm": None, "min_dcf_as_norm": None, "n_unnormalised": 1}
    one_class = as_norm_metrics(np.ones(4), np.ones(4), np.ones((4, 4)), method="rocch", p_target=0.5, c_miss=1,
                                c_fa=1)  # fmt: skip
    assert one_class["eer_as_norm"] is None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: top_cohort_statistics([[0.1, 0.2]], 1), "top_n must be an integer >= 2"),
        (lambda: top_cohort_statistics([[0.1, 0.2]], 3), "top_n 3 is more than the cohort's 2"),
        (lambda: top_cohort_statistics([[0.1, np.inf]], 2), "not finite"),
        (lambda: top_cohort_statistics([0.1, 0.2], 2), "one row of cohort scores per side"),
        (lambda: top_cohort_statistics([[0.1, 0.2]], True), "top_n must be an integer"),
        (lambda: top_cohort_statistics([[0.1, 0.2]], 2, ddof=2), "ddof must be 0"),
        (lambda: as_norm([0.1, 0.2], [0.0], [1.0], [0.0], [1.0]), "one value per trial"),
    ],
)
def test_bad_inputs_are_refused(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(MetricInputError, match=message):
        call()
