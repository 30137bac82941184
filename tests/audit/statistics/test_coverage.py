"""audit.statistics.coverage against independent oracles: its design's closed-form true EER (a root finder's, a large
sample's), the intervals' simulated coverage rates, and the coverage count scoring the intervals the audit gives."""

from __future__ import annotations

import numpy as np
import pytest

from audit.metrics.point import eer
from audit.statistics.contrasts import bootstrap_contrast
from audit.statistics.coverage import CoverageDesign, simulated_coverage
from audit.statistics.section import small_sample_warnings


def test_coverage_design_truth_matches_a_large_sample() -> None:
    # The closed-form truth (normal mixtures, root-found threshold) against the EER of a large simulated sample.
    design = CoverageDesign(n_speakers=3000, targets_per_speaker=20, nontargets_per_speaker=40)
    dataset = design.dataset(np.random.default_rng(31))
    scores, labels = np.asarray(dataset.scores["clean"]), np.asarray(dataset.labels)
    assert eer(scores, labels, "interp") == pytest.approx(design.truth()["clean"], abs=0.004)


@pytest.mark.slow
def test_two_way_intervals_hold_their_rate() -> None:
    # Headline design: 30 speakers, speaker effects on both sides of non-target trials and speaker-by-condition
    # effects, 1,000 datasets. A binomial 95 % rate over 1,000 datasets lies within +-0.014 with probability
    # 0.95; the target is 0.93-0.97, so the test allows 0.92-0.98. The one-way bootstrap (enrolment speaker
    # only) under-covers the single EER on the same design.
    two_way = simulated_coverage(CoverageDesign(30), n_datasets=1000, n_resamples=200, seed=30)["coverage"]
    for name in ("clean", "ie", "gap"):
        assert 0.92 <= two_way[name] <= 0.98, (name, two_way)
    one_way = simulated_coverage(CoverageDesign(30), n_datasets=300, two_way=False, seed=31)["coverage"]
    assert one_way["clean"] < two_way["clean"] - 0.03


@pytest.mark.slow
@pytest.mark.parametrize(("n_speakers", "n_datasets", "low"), [(10, 200, 0.84), (100, 120, 0.88), (300, 40, 0.85)])
def test_two_way_coverage_across_speaker_counts(n_speakers: int, n_datasets: int, low: float) -> None:
    # Fewer datasets, wider binomial bounds; at 10 speakers the rate is reported, not promised (about 0.89).
    design = CoverageDesign(n_speakers, targets_per_speaker=6, nontargets_per_speaker=10)
    coverage = simulated_coverage(design, n_datasets=n_datasets, n_resamples=150, seed=n_speakers)["coverage"]
    for name in ("clean", "ie", "gap"):
        assert low <= coverage[name] <= 1.0, (name, coverage)


def test_few_speakers_warn_with_the_matched_coverage() -> None:
    rng = np.random.default_rng(37)
    small = CoverageDesign(7, targets_per_speaker=4, nontargets_per_speaker=6).dataset(rng)
    large = CoverageDesign(40, targets_per_speaker=2, nontargets_per_speaker=3).dataset(rng)
    summaries = [bootstrap_contrast(c, n_resamples=40) for c in (small, large)]
    warnings = small_sample_warnings(summaries, "interp", 0.95, n_datasets=30)
    assert len(warnings) == 1 and "7 speakers" in warnings[0] and "fewer than 30" in warnings[0]
    assert summaries[0]["matched_coverage"]["n_speakers"] == 7 and "matched_coverage" not in summaries[1]
    se = summaries[0]["matched_coverage"]["mc_se"]["ie"]
    assert f"(Monte-Carlo SE {se:.0%})" in warnings[0] or f"({se:.0%})" in warnings[0]


def test_a_report_states_one_coverage_the_matched_simulations_where_they_ran() -> None:
    """Issue 42: the default printed DESIGN's table row (IE 0.963 at 7 speakers) beside its own matched simulation
    (IE 89 %). Where matched simulations ran, theirs is the one statement; else the table's row."""
    from audit.statistics.coverage import measured_coverage
    from audit.statistics.wording import coverage_statement

    table_row = measured_coverage("rocch", 7) | {"median_speakers": 7}
    matched = ["Warning: 32 contrast(s) rest on 7 speakers ... 89% for IE (3%) ..."]
    assert coverage_statement({"coverage_warnings": matched, "measured_coverage": table_row}) == matched
    (line,) = coverage_statement({"coverage_warnings": [], "measured_coverage": table_row})
    assert line.startswith("Measured coverage of these 95% intervals in rocch at 7 speakers")
    assert coverage_statement({"coverage_warnings": [], "measured_coverage": None}) == []


@pytest.mark.parametrize("eer_method", ["interp", "rocch"])
def test_the_coverage_count_scores_the_intervals_bootstrap_contrast_gives(eer_method: str) -> None:
    from audit.statistics.coverage import _simulated_intervals

    design = CoverageDesign(n_speakers=12, targets_per_speaker=6, nontargets_per_speaker=9)
    rng = np.random.default_rng(5)
    for index in range(3):
        dataset = design.dataset(rng)
        summary = bootstrap_contrast(dataset, n_resamples=50, seed=index, eer_method=eer_method)  # type: ignore[arg-type]
        lean = _simulated_intervals(dataset, 50, index, 0.95, eer_method)  # type: ignore[arg-type]
        expected = {
            "clean": summary["estimates"]["clean"],
            "ie": summary["estimates"]["ie"],
            "gap": summary["subgroups"]["terms"]["clean"]["gap_to_reference"]["M"],
        }
        for (kind, name), interval in lean.items():
            if kind == "audit":
                assert {key: expected[name][key] for key in interval} == interval


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_the_designs_true_eer_is_where_the_population_rates_meet(share: float) -> None:
    """The bisection against scipy's root finder (the oracle) and, with no subgroup mixed in, the closed form
    ``Phi(-mu / (s_target + s_nontarget))`` (the shifted subgroup alone is ``mu + shift``'s)."""
    from scipy.optimize import brentq
    from scipy.special import ndtr

    design = CoverageDesign(n_speakers=20)
    target = np.sqrt(1.0 + design.target_sd**2 + design.condition_sd**2)
    nontarget = np.sqrt(1.0 + 2.0 * design.nontarget_sd**2)
    for mu in design.means:

        def rates_apart(x: float, mu: float = mu) -> float:
            shifted = share * ndtr((x - mu - design.subgroup_shift) / target) + (1 - share) * ndtr((x - mu) / target)
            return float(shifted - ndtr(-x / nontarget))

        expected = ndtr(-brentq(rates_apart, -20.0, 20.0, xtol=1e-14) / nontarget)
        assert design.true_eer(mu, share) == pytest.approx(expected, abs=1e-13)
        if share in (0.0, 1.0):
            closed = ndtr(-(mu + share * design.subgroup_shift) / (target + nontarget))
            assert design.true_eer(mu, share) == pytest.approx(closed, abs=1e-13)
