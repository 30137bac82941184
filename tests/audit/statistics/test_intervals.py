"""Which interval each statistic gets, against simulations with known truth: the bias-corrected interval of a single
EER where the convex hull's optimism makes the percentile one under-cover, in every EER variant; no interval for a
subgroup of one speaker; an exact bound beside a zero count."""

from __future__ import annotations

import numpy as np
import pytest

from audit.statistics.contrasts import ONE_SPEAKER, ContrastInput, bootstrap_contrast
from audit.statistics.coverage import MEASURED_COVERAGE, CoverageDesign, measured_coverage, simulated_coverage
from audit.statistics.draws import bias_corrected_interval, bias_corrected_rows, percentile_interval, sorted_quantiles
from audit.statistics.subgroups import FixedThresholdInput, fixed_threshold_analysis
from audit.table.contrasts import TERMS

UNEQUAL = {"targets_per_speaker": 8, "nontargets_per_speaker": 16, "count_spread": 0.6}


def test_the_bias_correction_is_the_percentile_interval_when_the_draws_centre_on_the_estimate() -> None:
    draws = np.random.default_rng(1).normal(0.2, 0.01, 20001)
    median = float(np.median(draws))
    assert bias_corrected_interval(draws, median, 0.95) == pytest.approx(percentile_interval(draws, 0.95))
    # Draws centred 0.005 above the estimate (an optimistic estimator whose resamples reproduce its optimism): the
    # interval moves down by about twice that.
    moved, percentile = bias_corrected_interval(draws, median - 0.005, 0.95), percentile_interval(draws, 0.95)
    assert moved["low"] == pytest.approx(percentile["low"] - 0.01, abs=0.001)
    assert moved["high"] == pytest.approx(percentile["high"] - 0.01, abs=0.001)


def test_rows_sorted_once_give_numpys_quantiles_and_the_bias_corrected_bounds_to_the_bit() -> None:
    """``sorted_quantiles`` computes ``np.quantile`` of each row's defined draws as numpy does (shared or per-row
    levels, the ends, ties, signed zeros, undefined draws sorted last) and ``bias_corrected_rows`` is
    ``bias_corrected_interval`` row by row: the same floats, bit for bit."""
    rng = np.random.default_rng(4)
    for size in (1, 2, 7, 1000):
        rows = np.vstack([rng.normal(size=(3, size)), rng.integers(-3, 4, (3, size)) / 7.0, np.full((1, size), -0.0)])
        rows[1, : size // 2] = np.nan  # undefined draws
        ordered, n_defined = np.sort(rows, axis=1), np.count_nonzero(np.isfinite(rows), axis=1)
        levels = np.vstack([[0.0, 1.0], rng.uniform(size=(rows.shape[0] - 1, 2))])
        alone = [np.quantile(row[np.isfinite(row)], row_levels) for row, row_levels in zip(rows, levels, strict=True)]
        assert sorted_quantiles(ordered, levels, n_defined).tobytes() == np.array(alone).tobytes()
        shared = [np.quantile(row[np.isfinite(row)], [0.025, 0.975]) for row in rows]
        assert sorted_quantiles(ordered, [0.025, 0.975], n_defined).tobytes() == np.array(shared).tobytes()
        defined = np.isfinite(rows).all(axis=1)
        assert (
            sorted_quantiles(ordered[defined], [0.1, 0.9]).tobytes()
            == np.quantile(rows[defined], [0.1, 0.9], 1).T.tobytes()
        )
        estimates = np.append(rows[:-1, -1], 0.0)  # the estimate among the draws, and at the signed zeros
        bounds = [[bias_corrected_interval(row, float(e), 0.9)[end] for end in ("low", "high")] for row, e in
                  zip(rows, estimates, strict=True)]  # fmt: skip
        assert bias_corrected_rows(ordered, estimates, 0.9, n_defined).tobytes() == np.array(bounds).tobytes()


def test_rocch_single_eer_intervals_are_corrected_for_the_hulls_optimism() -> None:
    # 15 speakers with unequal trials: the percentile interval of the hull EER misses the truth from above
    # (DESIGN section 4: 0.844 over 1,000 datasets); the bias-corrected one, from the same draws, covers it more
    # often (0.897). The 400 datasets are paired (one set of draws, two intervals).
    result = simulated_coverage(
        CoverageDesign(15, **UNEQUAL), n_datasets=400, n_resamples=200, eer_method="rocch", seed=12
    )
    corrected, percentile = result["coverage"]["clean"], result["coverage_percentile"]["clean"]
    assert corrected >= percentile + 0.02 and corrected >= 0.86, result
    assert result["mc_se"]["clean"] == pytest.approx(np.sqrt(corrected * (1 - corrected) / 400))


@pytest.mark.slow
@pytest.mark.parametrize("eer_method", ["interp", "legacy", "rocch"])
def test_intervals_hold_in_every_variant_at_30_and_60_speakers(eer_method: str) -> None:
    # 300 datasets per cell (binomial SE 0.013 at 0.95): a rate from 0.92 up; DESIGN's table (1,000 datasets of
    # 1,000 resamples, benchmarks/coverage_table.py) has 0.932-0.984.
    for n_speakers in (30, 60):
        design = CoverageDesign(n_speakers, **UNEQUAL)
        result = simulated_coverage(design, n_datasets=300, n_resamples=300, eer_method=eer_method, seed=n_speakers)  # type: ignore[arg-type]
        assert all(0.91 <= rate <= 1.0 for rate in result["coverage"].values()), (n_speakers, result)


def test_the_measured_coverage_row_is_the_variants_at_or_below_the_speaker_count() -> None:
    assert {row[0] for row in MEASURED_COVERAGE} == {"interp", "legacy", "rocch"}
    assert {row[1] for row in MEASURED_COVERAGE} == {7, 15, 30, 60}
    row = measured_coverage("rocch", 45)
    assert row is not None and (row["n_speakers"], row["eer_method"]) == (30, "rocch")
    assert measured_coverage("interp", 3)["n_speakers"] == 7  # type: ignore[index]
    assert measured_coverage("interp", 30, level=0.9) is None  # the table is for 95 % intervals


def _one_male_speaker(rng: np.random.Generator) -> ContrastInput:
    speakers = np.array([f"f{i}" for i in range(8)] + ["m0"])
    enrol = np.repeat(speakers, 20)
    labels = np.tile(np.r_[np.ones(8, int), np.zeros(12, int)], speakers.size)
    test = np.where(labels == 1, enrol, rng.choice(speakers, enrol.size))
    test = np.where((labels == 0) & (test == enrol), np.roll(test, 1), test)
    scores = {term: rng.normal(2.0 * labels, 1.0) for term in TERMS}
    groups = np.where(np.char.startswith(enrol.astype(str), "m"), "M", "F")
    return ContrastInput({"c": "1"}, "E", scores, labels, enrol, groups, test_speakers=test)


def test_a_subgroup_of_one_speaker_gets_no_interval_and_no_gap_interval() -> None:
    summary = bootstrap_contrast(_one_male_speaker(np.random.default_rng(2)), n_resamples=100, seed=1)
    for term in TERMS:
        values = summary["subgroups"]["terms"][term]
        assert values["eer"]["F"]["low"] is not None
        for value in (values["eer"]["M"], values["gap_to_reference"]["M"], values["range"]):
            assert value["low"] is None and value["high"] is None and value["withheld"] == ONE_SPEAKER


def test_a_zero_count_gets_its_exact_bound() -> None:
    # Evaluation non-targets all far below every development score: no false accept, at any resampled threshold.
    rng = np.random.default_rng(6)
    dev = [f"d{i}" for i in range(10)]
    evaluation = [f"e{i}" for i in range(6)]
    rows = []
    for names, floor in ((dev, 0.0), (evaluation, -10.0)):
        for speaker in names:
            rows += [(speaker, speaker, 1, rng.normal(2.0), "F") for _ in range(4)]
            others = [s for s in names if s != speaker]
            rows += [(speaker, rng.choice(others), 0, floor + rng.normal(), "F") for _ in range(5)]
    enrol, test, labels, scores, groups = zip(*rows, strict=True)
    record = FixedThresholdInput({"r": "1"}, scores, labels, enrol, test, groups, dev)
    far = fixed_threshold_analysis(record, n_resamples=50)["subgroups"]["F"]["far"]
    assert (far["estimate"], far["low"], far["high"]) == (0.0, 0.0, 0.0)
    assert far["exact_bound"]["high"] == pytest.approx(1 - 0.025 ** (1 / 30))  # 0 of 30: Clopper-Pearson
    assert "0 of 30 trials" in far["exact_bound"]["reason"]


def test_a_contrast_flagged_near_chance_gets_no_equivalence_verdict() -> None:
    from audit.statistics.section import statistics_section

    rng = np.random.default_rng(8)
    base = CoverageDesign(40, means=(2.4, 2.4, 2.4, 2.4), subgroup_shift=0.0).dataset(rng)
    flagged = ContrastInput(**{**base.__dict__, "key": {"c": "near"}, "caveats": ("near-chance-prediction",)})
    result = statistics_section([base, flagged], margin=0.5, n_resamples=100, matched_simulations=2)
    plain, near = (contrast["tost"] for contrast in result["contrasts"])
    assert plain["verdict"] == near["verdict_before_withholding"] == "additive within margin"  # a wide margin
    assert near["verdict"] == "undetermined" and near["verdict_withheld"].startswith("near-chance-prediction")
    assert result["families"]["simulation"]["contrast_verdicts"]["undetermined"] == 1


def test_the_report_prints_no_interval_for_a_one_speaker_subgroup_and_lists_every_one() -> None:
    from audit.statistics.contrasts import SpeakerDraws
    from audit.statistics.subgroups import SubgroupInput, subgroup_gap_intervals
    from audit.statistics.wording import subgroup_gap_section

    contrast = _one_male_speaker(np.random.default_rng(3))
    results = []
    for setting in ("s1", "s2", "s3", "s4", "s5", "s6"):  # more one-speaker settings than a list of five shows
        record = SubgroupInput(
            {"setting": setting},
            contrast.scores["clean"],
            contrast.labels,  # type: ignore[arg-type]
            contrast.clusters,  # type: ignore[arg-type]
            contrast.test_speakers,  # type: ignore[arg-type]
            contrast.subgroups,  # type: ignore[arg-type]
        )
        draws = SpeakerDraws.of([np.asarray(contrast.clusters), np.asarray(contrast.test_speakers)], 50, seed=1)
        results.append(subgroup_gap_intervals(record, draws, 0.95, "interp"))  # type: ignore[arg-type]
    section = subgroup_gap_section(results)
    male = [row for row in section["table"] if row["subgroup"] == "M"]
    assert male and all("no interval" in row["EER"] and "no interval" in row["gap to F"] for row in male)
    assert all("[" in row["EER"] for row in section["table"] if row["subgroup"] == "F")
    assert "6 subgroup(s) of one speaker" in section["lines"][1] and "s6 M" in section["lines"][1]
