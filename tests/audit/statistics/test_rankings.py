"""Paired encoder comparisons (issue 41): differences on shared draws against an independent oracle, Holm over the
declared family, and, on a simulation with known truth, the false-separation rate and what the MDD means."""

from __future__ import annotations

import numpy as np
import pytest

from audit.statistics import SpeakerDraws
from audit.statistics.rankings import RankingInput, paired_rankings, speaker_ids
from schemas import EerMethod
from tests.audit.statistics.ranking_simulation import PairedDesign
from tests.provenance.synthetic_bundle import legacy_eer_oracle


def oracle_draws(setting: RankingInput, draws: SpeakerDraws, model: str) -> np.ndarray:
    """Each resample's legacy EER of the trials repeated as often as their speakers were drawn (enrolment speaker's
    multiplicity times the test speaker's, a target once per copy of its speaker), by sklearn's ROC."""
    scores, labels = np.asarray(setting.scores[model]), np.asarray(setting.labels)
    position = {speaker: i for i, speaker in enumerate(draws.index)}
    enrol = np.array([position[s] for s in setting.enrol_speaker])
    test = np.array([position[s] for s in setting.test_speaker])
    values = []
    for row in draws.multiplicities[:, : len(draws.index)]:
        repeats = np.where(enrol == test, row[enrol], row[enrol] * row[test]).astype(int)
        kept_labels = np.repeat(labels, repeats)
        values.append(
            legacy_eer_oracle(np.repeat(scores, repeats), kept_labels) if 0 < kept_labels.mean() < 1 else np.nan
        )
    return np.array(values)


def test_a_pairs_difference_interval_and_p_value_are_those_of_the_oracles_draws() -> None:
    setting = PairedDesign(n_speakers=8, eers=(0.1, 0.2), targets_per_speaker=4, nontargets_per_speaker=6).dataset(
        np.random.default_rng(3)
    )
    draws = SpeakerDraws.of(speaker_ids([setting]), 40, 5)
    result = paired_rankings([setting], draws, eer_method=EerMethod.LEGACY)
    pair = result["settings"][0]["pairs"][0]
    assert pair["encoders"] == ["e0", "e1"]
    expected = legacy_eer_oracle(np.asarray(setting.scores["e0"]), setting.labels) - legacy_eer_oracle(
        np.asarray(setting.scores["e1"]), setting.labels
    )
    assert pair["difference"]["estimate"] == pytest.approx(expected, abs=1e-12)
    differences = oracle_draws(setting, draws, "e0") - oracle_draws(setting, draws, "e1")
    defined = differences[np.isfinite(differences)]
    low, high = np.quantile(defined, [0.025, 0.975])
    assert (pair["difference"]["low"], pair["difference"]["high"]) == pytest.approx((low, high), abs=1e-12)
    assert pair["p_value"] == pytest.approx(min(1.0, 2 * min(np.mean(defined <= 0), np.mean(defined >= 0))))


def holm(p_values: list[float], alpha: float) -> list[bool]:
    """Holm's step-down procedure written from its definition: reject the j-th smallest while p_(j) <= ... <
    alpha / (k - j), stop at the first that is not."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected = [False] * len(p_values)
    for j, index in enumerate(order):
        if p_values[index] >= alpha / (len(p_values) - j):
            break
        rejected[index] = True
    return rejected


@pytest.mark.parametrize("family", ["condition", "experiment"])
def test_holm_runs_over_the_declared_family(family: str) -> None:
    """Two conditions of one experiment, three encoders each: six pairs in one family, or three in each of two."""
    rng = np.random.default_rng(11)
    settings = []
    for condition, eers in (("clean", (0.08, 0.12, 0.2)), ("noise", (0.15, 0.16, 0.25))):
        dataset = PairedDesign(n_speakers=20, eers=eers).dataset(rng, condition)
        settings.append(RankingInput({"experiment": "E1", "condition": condition}, *dataset_fields(dataset)))
    draws = SpeakerDraws.of(speaker_ids(settings), 300, 2)
    result = paired_rankings(settings, draws, family=family)
    pairs = [(s["family"], pair) for s in result["settings"] for pair in s["pairs"]]
    for name in {name for name, _ in pairs}:
        members = [pair for member, pair in pairs if member == name]
        assert [pair["separable"] for pair in members] == holm([pair["p_value"] for pair in members], 0.05)
        assert result["families"][name]["n_pairs"] == len(members) == (6 if family == "experiment" else 3)


def dataset_fields(dataset: RankingInput) -> tuple:
    return dataset.scores, dataset.labels, dataset.enrol_speaker, dataset.test_speaker


def separable_rate(design: PairedDesign, n_datasets: int, n_resamples: int, seed: int) -> tuple[float, float]:
    """Share of simulated families in which Holm calls some pair separable, and the median MDD stated."""
    rng = np.random.default_rng(seed)
    found, mdds = 0, []
    for index in range(n_datasets):
        setting = design.dataset(rng)
        summary = paired_rankings([setting], SpeakerDraws.of(speaker_ids([setting]), n_resamples, index))
        family = summary["families"]["simulation"]
        found += family["n_separable"] > 0
        mdds.append(family["mdd"])
    return found / n_datasets, float(np.median(mdds))


def test_equal_encoders_are_rarely_called_separable() -> None:
    """Three equal encoders at 30 speakers (three pairs, Holm): at most 5 % of families, within Monte-Carlo error
    (the full-size figure is in benchmarks/RESULTS.md)."""
    n = 80
    rate, _ = separable_rate(PairedDesign(n_speakers=30, eers=(0.1, 0.1, 0.1)), n, 200, seed=1)
    assert rate <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / n)


def test_a_difference_of_the_stated_mdd_is_found_about_80_percent_of_the_time() -> None:
    """Two encoders whose true EERs differ by the MDD the comparison states at that difference (the fixed point of
    one pilot step from 0.065): Holm finds it about 80 % of the time (the benchmark: 1,000 families)."""
    _, mdd = separable_rate(PairedDesign(n_speakers=30, eers=(0.1, 0.165)), 30, 200, seed=2)
    n = 80
    rate, _ = separable_rate(PairedDesign(n_speakers=30, eers=(0.1, 0.1 + mdd)), n, 200, seed=3)
    assert abs(rate - 0.8) <= 3 * np.sqrt(0.8 * 0.2 / n)


def test_seven_speakers_are_not_separable_and_the_headline_says_so() -> None:
    setting = PairedDesign(n_speakers=7, eers=(0.1, 0.12, 0.14, 0.15)).dataset(np.random.default_rng(0), "clean")
    result = paired_rankings([setting], SpeakerDraws.of(speaker_ids([setting]), 200, 0))
    (row,) = result["headline"]
    mdd = result["families"]["clean"]["mdd"]
    assert row["verdict"] == f"not separable at 7 speakers (MDD {mdd:.3f})" and mdd > 0.05
    assert row["encoders (EER, best first)"].count(",") == 3
    assert all(not pair["separable"] for pair in result["settings"][0]["pairs"])


def test_the_macro_ranking_averages_records_then_conditions_then_experiments_on_every_draw() -> None:
    """Encoder m's macro is Table 7's mean of means; its draws are the same means of the records' draws, so the
    macro difference of two encoders is the mean of their per-setting differences where each experiment has one
    condition of one record."""
    rng = np.random.default_rng(4)
    settings = [
        RankingInput(
            {"experiment": experiment, "condition": condition}, *dataset_fields(PairedDesign(12, eers).dataset(rng))
        )
        for experiment, condition, eers in (("E1", "a", (0.1, 0.2)), ("E1", "b", (0.1, 0.1)), ("E2", "a", (0.2, 0.3)))
    ]
    result = paired_rankings(settings, SpeakerDraws.of(speaker_ids(settings), 100, 0))
    eer = {
        (s["key"]["experiment"], s["key"]["condition"], e["model"]): e["eer"]["estimate"]
        for s in result["settings"]
        for e in s["encoders"]
    }
    macro = {e["model"]: e["macro_eer"] for e in result["macro"]["encoders"]}
    for model in ("e0", "e1"):
        assert macro[model] == pytest.approx(
            ((eer["E1", "a", model] + eer["E1", "b", model]) / 2 + eer["E2", "a", model]) / 2
        )
    (pair,) = result["macro"]["pairs"]
    assert pair["difference"]["estimate"] == pytest.approx(macro[pair["encoders"][0]] - macro[pair["encoders"][1]])
    assert pair["difference"]["low"] < pair["difference"]["estimate"] < pair["difference"]["high"]
    assert pair["encoders"] == sorted(macro, key=macro.get)


def test_pairs_computed_together_equal_each_pair_computed_alone() -> None:
    """The stacked quantiles and shares of ``_pairs`` are the same floats as ``estimate_with_interval`` and
    ``two_sided_p`` of each pair's own draws, undefined draws (NaN, or infinite) left out and counted."""
    from audit.statistics.contrasts import estimate_with_interval
    from audit.statistics.rankings import _pairs, two_sided_p

    rng = np.random.default_rng(0)
    draws = {name: rng.normal(mean, 0.02, 500) for name, mean in (("a", 0.1), ("b", 0.12), ("c", 0.11))}
    draws["c"][[3, 7]], draws["b"][11] = np.nan, np.inf
    estimates = {name: float(np.mean(values[np.isfinite(values)])) for name, values in draws.items()}
    rows, *_ = _pairs(estimates, draws, 0.9)
    assert [row["encoders"] for row in rows] == [["a", "c"], ["a", "b"], ["c", "b"]]
    for row in rows:
        first, second = row["encoders"]
        differences = draws[first] - draws[second]
        alone = estimate_with_interval(estimates[first] - estimates[second], differences, 0.9, corrected=False)
        assert row["difference"] == alone and row["p_value"] == two_sided_p(differences)  # the same floats
    assert [row["difference"]["n_undefined"] for row in rows] == [2, 1, 3]


def test_encoders_computed_together_equal_each_encoder_computed_alone() -> None:
    """The bias-corrected intervals of ``_encoder_eers`` (one sort of the stacked draws) are the same floats as
    ``estimate_with_interval`` of each encoder's own draws, ties with the estimate included; an encoder with
    undefined draws leaves them out and counts them."""
    from audit.statistics.contrasts import estimate_with_interval
    from audit.statistics.rankings import _encoder_eers

    rng = np.random.default_rng(3)
    draws = {name: rng.integers(0, 40, 500) / 200.0 for name in ("a", "b", "c")}  # coarse: many equal the estimate
    draws["b"][5], draws["a"][[8, 9]] = np.nan, -np.inf
    estimates = {"a": 0.1, "b": 0.095, "c": float(draws["c"][0])}
    eers = _encoder_eers(estimates, draws, 0.95)
    assert [entry["model"] for entry in eers] == sorted(estimates, key=estimates.get)
    for entry in eers:
        model = entry["model"]
        assert entry["eer"] == estimate_with_interval(estimates[model], draws[model], 0.95, corrected=True)
    assert {entry["model"]: entry["eer"]["n_undefined"] for entry in eers} == {"a": 2, "b": 1, "c": 0}


def test_the_mdd_is_where_the_pairs_test_starts_finding_the_difference_80_percent_of_the_time() -> None:
    """Brute force from the definition: each resample's error moved to a true difference d is one data set's
    estimate; its draws are the centred draws moved there; found when ``two_sided_p`` of them is below the level and
    the estimate has the difference's sign. Just above the MDD (the larger of the two directions) both directions are
    found at least 80 % of the time; just below it one is not."""
    from audit.statistics.rankings import minimum_detectable_differences, two_sided_p

    draws = np.random.default_rng(5).gamma(4.0, 0.01, (1, 400))  # skewed: the two directions differ
    level = 0.05 / 3
    (mdd,) = minimum_detectable_differences(draws, level)
    errors = draws[0] - draws[0].mean()

    def found(d: float, errors: np.ndarray) -> float:
        return float(np.mean([two_sided_p(errors + d + e) < level and d + e > 0 for e in errors]))

    assert found(mdd + 1e-9, errors) >= 0.8 and found(mdd + 1e-9, -errors) >= 0.8
    assert min(found(mdd - 1e-6, errors), found(mdd - 1e-6, -errors)) < 0.8
    assert found(-mdd, errors) == 0.0  # a difference found with the wrong sign is not found
    assert minimum_detectable_differences(-draws, level)[0] == mdd


def test_a_setting_without_an_eer_is_named_and_the_others_are_compared() -> None:
    rng = np.random.default_rng(2)
    good = PairedDesign(n_speakers=10, eers=(0.1, 0.2)).dataset(rng, "clean")
    targets = np.asarray(good.labels) == 1
    one_class = RankingInput(
        {"condition": "targets only"},
        {name: np.asarray(values)[targets] for name, values in good.scores.items()},
        np.asarray(good.labels)[targets],
        np.asarray(good.enrol_speaker)[targets],
        np.asarray(good.test_speaker)[targets],
    )
    result = paired_rankings([good, one_class], SpeakerDraws.of(speaker_ids([good]), 100, 0))
    assert [s["key"]["condition"] for s in result["settings"]] == ["clean"]
    (skipped,) = result["skipped"]
    assert skipped["key"] == {"condition": "targets only"} and "targets only" in skipped["reason"]


def test_a_record_undefined_in_a_draw_is_left_out_of_that_draws_macro_mean_only() -> None:
    from audit.statistics.rankings import _mean

    estimate, draws = _mean([(0.1, np.array([0.1, np.nan, 0.3])), (0.2, np.array([0.2, 0.2, np.nan]))])
    assert estimate == pytest.approx(0.15) and draws == pytest.approx([0.15, 0.2, 0.3])
    _, none = _mean([(0.1, np.array([np.nan])), (0.2, np.array([np.nan]))])
    assert np.isnan(none[0])
