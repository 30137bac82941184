"""audit.statistics against independent oracles: duplicated-trial EERs, speaker-cluster intervals' simulated coverage
of a closed-form true EER, hand-worked thresholds and error rates, and the analytic coupling correlation -3/sqrt(12)
(the coverage design and its simulations: test_coverage.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import norm

from audit.metrics.point import eer
from audit.metrics.weighted_roc import WeightedRocInputError, weighted_eer
from audit.statistics.contrasts import ContrastInput, SpeakerDraws, bootstrap_contrast
from audit.statistics.coupling import coupling_under_additivity
from audit.statistics.coverage import CoverageDesign
from audit.statistics.draws import (
    StatisticsInputError,
    cluster_codes,
    draw_cluster_weights,
    pair_codes,
    percentile_interval,
    text_codes,
)
from audit.statistics.equivalence import family_summary, held_out_validation, tost_verdict
from audit.statistics.section import statistics_section
from audit.statistics.subgroups import (
    FixedThresholdInput,
    SubgroupInput,
    fixed_threshold_analysis,
    subgroup_gap_intervals,
)

TERMS = ("clean", "a", "b", "ab")


@pytest.mark.parametrize("decimals", [0, 1, 3])  # heavy ties, some, almost none
def test_two_way_weighted_eer_equals_the_eer_of_the_resampled_pairs(decimals: int) -> None:
    # A pair counts once per drawn copy of each of its speakers; a target trial (one speaker) once per copy.
    rng = np.random.default_rng(21 + decimals)
    enrol = rng.integers(0, 12, 400)
    labels = rng.integers(0, 2, 400)
    test = np.where(labels == 1, enrol, (enrol + rng.integers(1, 12, 400)) % 12)
    scores = np.round(rng.normal(labels, 1.0), decimals)
    index = np.unique(np.r_[enrol, test].astype(str))
    codes, partners = pair_codes(index, enrol, test)
    weights = draw_cluster_weights(index.size, 30, seed=5)
    weights[0] = 1.0
    ids = np.asarray(index)
    for method in ("interp", "legacy", "rocch"):
        draws = weighted_eer(scores, labels, codes, weights, method, partners)  # type: ignore[arg-type]
        for row, draw in zip(weights, draws, strict=True):
            multiplicity = dict(zip(ids, row, strict=True))
            copies = [
                int(multiplicity[str(e)] * (1 if e == t else multiplicity[str(t)]))
                for e, t in zip(enrol, test, strict=True)
            ]
            assert draw == pytest.approx(eer(np.repeat(scores, copies), np.repeat(labels, copies), method), abs=1e-12)


@pytest.mark.parametrize("decimals", [0, 1, 3])  # heavy ties, some, almost none
def test_weighted_eer_equals_the_eer_of_the_resampled_trials(decimals: int) -> None:
    rng = np.random.default_rng(1 + decimals)
    clusters = rng.integers(0, 12, 400)
    labels = rng.integers(0, 2, 400)
    scores = np.round(rng.normal(labels, 1.0), decimals)
    codes, n_clusters = cluster_codes(clusters)
    weights = draw_cluster_weights(n_clusters, 40, seed=3)
    weights[0] = 1.0  # the full sample
    interp = weighted_eer(scores, labels, codes, weights, "interp")
    legacy = weighted_eer(scores, labels, codes, weights, "legacy")
    rocch = weighted_eer(scores, labels, codes, weights, "rocch")
    for row, interp_draw, legacy_draw, rocch_draw in zip(weights, interp, legacy, rocch, strict=True):
        copies = row[codes].astype(int)  # every trial as often as its speaker was drawn
        resampled = np.repeat(scores, copies), np.repeat(labels, copies)
        assert interp_draw == pytest.approx(eer(*resampled, "interp"), abs=1e-12)
        assert legacy_draw == eer(*resampled, "legacy")  # bit for bit, roc_curve's dropped points included
        assert rocch_draw == pytest.approx(eer(*resampled, "rocch"), abs=1e-12)


def test_undefined_draws_are_counted_not_filled() -> None:
    # Speaker 0 has only targets, speaker 1 only non-targets: a draw of two 0s has no non-target.
    labels = np.array([1, 1, 0, 0])
    codes = np.array([0, 0, 1, 1])
    weights = np.array([[2.0, 0.0], [1.0, 1.0]])
    draws = weighted_eer(np.array([0.9, 0.8, 0.1, 0.2]), labels, codes, weights)
    assert np.isnan(draws[0]) and draws[1] == 0.0
    assert percentile_interval(draws, 0.95)["n_undefined"] == 1


def _simulated_eer_dataset(
    rng: np.random.Generator, n_speakers: int, speaker_sd: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Targets ~ mu_t + u_speaker + e, non-targets ~ mu_n + e (e ~ N(0, 1)); pooled over speakers the classes
    are N(mu_t, 1 + sd^2) and N(mu_n, 1), whose EER is Phi(-(mu_t - mu_n) / (s_t + s_n)) exactly."""
    mu_t, mu_n = 2.0, 0.0
    per_speaker_targets, per_speaker_nontargets = 20, 40
    effect = rng.normal(0.0, speaker_sd, n_speakers)
    clusters = np.repeat(np.arange(n_speakers), per_speaker_targets + per_speaker_nontargets)
    labels = np.tile(np.r_[np.ones(per_speaker_targets), np.zeros(per_speaker_nontargets)], n_speakers)
    scores = np.where(labels == 1, mu_t + effect[clusters], mu_n) + rng.normal(0.0, 1.0, labels.size)
    true_eer = float(norm.cdf(-(mu_t - mu_n) / (np.sqrt(1 + speaker_sd**2) + 1.0)))
    return scores, labels.astype(int), clusters, true_eer


def _coverage(clustered: bool, n_datasets: int = 150, n_resamples: int = 200) -> float:
    rng = np.random.default_rng(11)
    covered = 0
    for index in range(n_datasets):
        scores, labels, clusters, true_eer = _simulated_eer_dataset(rng, n_speakers=40, speaker_sd=1.0)
        codes, n_clusters = cluster_codes(clusters if clustered else np.arange(labels.size))
        weights = draw_cluster_weights(n_clusters, n_resamples, seed=index)
        interval = percentile_interval(weighted_eer(scores, labels, codes, weights), 0.95)
        covered += interval["low"] <= true_eer <= interval["high"]
    return covered / n_datasets


@pytest.mark.slow
def test_speaker_cluster_intervals_cover_and_trial_level_ones_do_not() -> None:
    cluster_coverage = _coverage(clustered=True)
    trial_coverage = _coverage(clustered=False)
    # 150 datasets: a binomial 95 % coverage lies in [0.90, 0.99] with probability ~0.99.
    assert 0.88 <= cluster_coverage <= 0.99
    assert trial_coverage < 0.80
    assert cluster_coverage - trial_coverage > 0.15


def _contrast(rng: np.random.Generator, shift: dict[str, float], **fields: object) -> ContrastInput:
    n_speakers, per_speaker = 25, 40
    clusters = np.repeat([f"spk{i:02d}" for i in range(n_speakers)], per_speaker)
    labels = rng.integers(0, 2, clusters.size)
    effect = rng.normal(0.0, 0.5, n_speakers)[cluster_codes(clusters)[0]]
    scores = {term: rng.normal(labels * (2.0 - shift.get(term, 0.0)) + effect * labels, 1.0) for term in TERMS}
    defaults: dict[str, object] = {"key": {"model": "m"}, "family": "E13", "model": "m"}
    return ContrastInput(scores=scores, labels=labels, clusters=clusters, **{**defaults, **fields})  # type: ignore[arg-type]


def test_one_resample_is_shared_by_the_four_terms() -> None:
    rng = np.random.default_rng(2)
    base = _contrast(rng, {})
    same = {term: base.scores["clean"] for term in TERMS}
    contrast = ContrastInput(base.key, base.family, same, base.labels, base.clusters)
    ie = bootstrap_contrast(contrast, n_resamples=100, seed=4)["estimates"]["ie"]
    # With four identical terms IE is exactly 0 in every draw only if every term saw the same resample.
    assert ie["estimate"] == 0.0 and ie["low"] == 0.0 and ie["high"] == 0.0


def test_unscored_trials_are_dropped_from_all_terms_and_counted() -> None:
    rng = np.random.default_rng(3)
    contrast = _contrast(rng, {})
    scores = {term: np.array(values, dtype=float) for term, values in contrast.scores.items()}
    scores["b"][[3, 7]] = np.nan
    scores["ab"][7] = np.nan
    summary = bootstrap_contrast(
        ContrastInput(contrast.key, contrast.family, scores, contrast.labels, contrast.clusters),
        n_resamples=50,
    )
    assert summary["n_unscored_dropped"] == 2
    assert summary["n_trials"] == np.asarray(contrast.labels).size - 2
    keep = np.ones(np.asarray(contrast.labels).size, dtype=bool)
    keep[[3, 7]] = False
    expected = eer(scores["a"][keep], np.asarray(contrast.labels)[keep], "interp")
    assert summary["estimates"]["a"]["estimate"] == expected


@pytest.mark.parametrize(
    ("center", "spread", "verdict"),
    [
        (0.0, 0.002, "additive within margin"),  # 90 % interval about +-0.0033, inside +-0.01
        (0.001, 0.02, "undetermined"),  # small mean, wide interval: never equivalence
        (0.05, 0.005, "non-additive"),  # interval about [0.042, 0.058], beyond 0.01
        (-0.05, 0.005, "non-additive"),
        (0.01, 0.002, "undetermined"),  # straddles the margin bound
    ],
)
def test_tost_rules(center: float, spread: float, verdict: str) -> None:
    draws = np.random.default_rng(5).normal(center, spread, 4000)
    result = tost_verdict(draws, margin=0.01)
    assert result["verdict"] == verdict
    if verdict == "additive within margin":
        assert result["p_tost"] < 0.05


def test_tost_needs_a_positive_margin() -> None:
    with pytest.raises(StatisticsInputError, match="margin"):
        tost_verdict(np.zeros(10), margin=0.0)


def test_fixed_threshold_hand_worked() -> None:
    # Development speakers d1, d2: targets 0.8, 0.7, non-targets 0.6, 0.3. Thresholds 0.8, 0.7, 0.6, 0.3 give
    # (FAR, FRR) = (0, .5), (0, 0), (.5, 0), (1, 0): the EER threshold is 0.7.
    # Evaluation (e1 F, e2 F, e3 M): F targets 0.9, 0.65, non-targets 0.75, 0.2 -> FRR 1/2, FAR 1/2;
    # M targets 0.71, non-targets 0.69, 0.1 -> FRR 0, FAR 0. One trial d1 x e1 mixes splits: excluded.
    rows = [
        ("d1", "d1", 1, 0.8, "F"),
        ("d2", "d2", 1, 0.7, "M"),
        ("d1", "d2", 0, 0.6, "F"),
        ("d2", "d1", 0, 0.3, "M"),
        ("e1", "e1", 1, 0.9, "F"),
        ("e2", "e2", 1, 0.65, "F"),
        ("e1", "e3", 0, 0.75, "F"),
        ("e2", "e3", 0, 0.2, "F"),
        ("e3", "e3", 1, 0.71, "M"),
        ("e3", "e1", 0, 0.69, "M"),
        ("e3", "e2", 0, 0.1, "M"),
        ("d1", "e1", 0, 0.99, "F"),
    ]
    enrol, test, labels, scores, groups = zip(*rows, strict=True)
    record = FixedThresholdInput({"record_id": "r1"}, scores, labels, enrol, test, groups, ["d1", "d2"])
    result = fixed_threshold_analysis(record, n_resamples=200, seed=1, min_dev_speakers=2)
    assert result["threshold"] == 0.7
    assert (result["n_dev_trials"], result["n_eval_trials"], result["n_mixed_excluded"]) == (4, 7, 1)
    female, male = result["subgroups"]["F"], result["subgroups"]["M"]
    assert female["far"]["estimate"] == 0.5 and female["frr"]["estimate"] == 0.5
    assert male["far"]["estimate"] == 0.0 and male["frr"]["estimate"] == 0.0
    assert 0.0 <= female["far"]["low"] <= 0.5 <= female["far"]["high"] <= 1.0
    # Target FAR 0: the lowest development threshold with FAR <= 0 is 0.7 again; target FAR .5 allows 0.6.
    assert fixed_threshold_analysis(record, operating_point=0.5, n_resamples=20, min_dev_speakers=2)["threshold"] == 0.6
    json.dumps(result, allow_nan=False)


def test_held_out_validation_hand_worked() -> None:
    errors = [0.01, -0.02, 0.03, 0.0, 0.10]
    contrasts = [
        {"model": "m1", "held_out": True, "prediction": 0.2, "observed": 0.2 + e, "key": {"setting": str(i)}}
        for i, e in enumerate(errors)
    ]
    contrasts.append({"model": "m1", "held_out": False, "prediction": 0.2, "observed": 0.9, "key": {}})
    result = held_out_validation(contrasts, acceptable_error=0.025, worst=2)
    model = result["models"]["m1"]
    assert result["n_held_out"] == 5 and result["n_not_held_out"] == 1
    # Five values are listed, not called quantiles; twenty get quantiles.
    assert model["quantiles"] is None and model["errors"] == pytest.approx([-0.02, 0.0, 0.01, 0.03, 0.10])
    many = [c | {"key": {"setting": f"{i}-{k}"}} for k in range(4) for i, c in enumerate(contrasts[:5])]
    assert held_out_validation(many, 0.025)["models"]["m1"]["quantiles"]["q50"] == pytest.approx(0.01, abs=1e-12)
    assert model["share_within_acceptable"] == pytest.approx(3 / 5)  # .01, -.02, 0
    assert model["mean_absolute_error"] == pytest.approx(0.16 / 5)
    assert [w["key"]["setting"] for w in model["worst"]] == ["4", "2"]


def test_coupling_matches_the_analytic_correlation() -> None:
    # Identical true terms, independent unit noise per term: prediction = a + b - clean has variance 3,
    # IE = ab - prediction variance 4, covariance -3: correlation -3 / sqrt(12) = -0.866.
    rng = np.random.default_rng(6)
    n_contrasts, n_draws = 300, 400
    estimates = [dict.fromkeys(TERMS, 0.2) for _ in range(n_contrasts)]
    draws = [{term: rng.normal(0.2, 0.01, n_draws) for term in TERMS} for _ in range(n_contrasts)]
    result = coupling_under_additivity(estimates, draws)
    expected = result["expected_under_additivity"]
    assert expected["r"] == pytest.approx(-3 / np.sqrt(12), abs=0.03)
    assert expected["low"] < expected["r"] < expected["high"]
    assert result["observed"] is None  # every contrast has the same prediction: no correlation defined


def test_bundle_statistics_is_json_and_complete() -> None:
    rng = np.random.default_rng(7)
    contrasts = [
        _contrast(rng, {"ab": 0.3}, key={"model": "m1", "setting": "s1"}, model="m1"),
        _contrast(rng, {}, key={"model": "m1", "setting": "s2"}, model="m1", held_out=True),
        _contrast(rng, {"a": 0.2}, key={"model": "m2", "setting": "s1"}, model="m2", family="E14"),
    ]
    result = statistics_section(
        contrasts, margin=0.01, acceptable_error=0.02, n_resamples=100, seed=3, matched_simulations=10
    )
    json.dumps(result, allow_nan=False)  # strict JSON: undefined values are None, never NaN
    assert [c["tost"]["verdict"] in {"additive within margin", "non-additive", "undetermined"}
            for c in result["contrasts"]] == [True, True, True]  # fmt: skip
    assert set(result["families"]) == {"E13", "E14"}
    assert len(result["coverage_warnings"]) == 1 and "25 speakers" in result["coverage_warnings"][0]
    assert result["families"]["E13"]["verdict"] in {"additive within margin", "non-additive", "undetermined"}
    assert result["families"]["E13"]["n_contrasts"] == 2
    assert result["held_out"]["n_held_out"] == 1
    assert (result["n_resamples"], result["seed"]) == (100, 3)
    first = result["contrasts"][0]["estimates"]
    assert first["ie"]["estimate"] == pytest.approx(
        first["ab"]["estimate"] - first["a"]["estimate"] - first["b"]["estimate"] + first["clean"]["estimate"]
    )


def test_bad_contrast_inputs() -> None:
    rng = np.random.default_rng(8)
    contrast = _contrast(rng, {})
    with pytest.raises(StatisticsInputError, match="missing term"):
        bootstrap_contrast(ContrastInput(contrast.key, "E13", {"clean": [0.1]}, [1], ["s"]))
    scores = {term: np.asarray(values)[:-1] for term, values in contrast.scores.items()}
    with pytest.raises(StatisticsInputError, match="same trials"):
        bootstrap_contrast(ContrastInput(contrast.key, "E13", scores, contrast.labels, contrast.clusters))
    with pytest.raises(StatisticsInputError, match="at least 2 speaker clusters"):
        draw_cluster_weights(1, 10, 0)


def test_subgroup_gaps_and_undefined_subgroups() -> None:
    rng = np.random.default_rng(9)
    contrast = _contrast(rng, {"ab": 0.4})
    labels = np.asarray(contrast.labels)
    clusters = np.asarray(contrast.clusters)
    groups = np.where(cluster_codes(clusters)[0] % 2 == 0, "F", "M")
    groups[labels == 0] = np.where(groups[labels == 0] == "F", "F", "M")
    groups[:3] = "X"
    labels = labels.copy()
    labels[:3] = 0  # subgroup X holds non-targets only: no EER, listed with the reason
    with_groups = ContrastInput(contrast.key, "E13", contrast.scores, labels, clusters, subgroups=groups)
    result = bootstrap_contrast(with_groups, n_resamples=60, seed=2)["subgroups"]
    assert result["reference"] == "F" and "only one class" in result["undefined"]["X"]
    for term in TERMS:
        scores = np.asarray(contrast.scores[term])
        female = eer(scores[groups == "F"], labels[groups == "F"], "interp")
        male = eer(scores[groups == "M"], labels[groups == "M"], "interp")
        gaps = result["terms"][term]
        assert gaps["gap_to_reference"]["M"]["estimate"] == pytest.approx(male - female, abs=1e-15)
        assert gaps["range"]["estimate"] == pytest.approx(abs(male - female), abs=1e-15)
        assert gaps["range"]["low"] >= 0.0


def test_constant_term_is_at_chance_not_an_error() -> None:
    # Constant scores are the chance diagonal (EER 0.5, as roc_curve gives): in the estimate and every draw.
    rng = np.random.default_rng(10)
    contrast = _contrast(rng, {})
    scores = {**contrast.scores, "b": np.zeros(np.asarray(contrast.labels).size)}
    summary = bootstrap_contrast(ContrastInput(contrast.key, "E13", scores, contrast.labels, contrast.clusters))
    assert summary["estimates"]["b"] == {"estimate": 0.5, "low": 0.5, "high": 0.5, "n_undefined": 0}


def test_unreachable_target_far_rejects_every_development_trial() -> None:
    # The highest development score is a non-target: no development threshold has FAR 0.
    record = FixedThresholdInput(
        {"record_id": "r2"},
        [0.9, 0.5, 0.4, 0.3, 0.8, 0.2, 0.6, 0.1],
        [0, 1, 1, 0, 1, 0, 1, 0],
        ["d1", "d1", "d2", "d2", "e1", "e1", "e2", "e2"],
        ["d2", "d1", "d2", "d1", "e1", "e2", "e2", "e1"],
        ["F"] * 8,
        ["d1", "d2"],
    )
    result = fixed_threshold_analysis(record, operating_point=0.1, n_resamples=10, min_dev_speakers=2)
    assert result["threshold"] > 0.9
    assert result["subgroups"]["F"]["frr"]["estimate"] == 1.0


def test_weighted_legacy_on_many_small_resamples_with_empty_speakers() -> None:
    # Small tied datasets, few speakers: many thresholds weigh 0 in a resample, the hard case for roc_curve's
    # dropped points. Oracle: audit.metrics.point (itself tested against sklearn) on the repeated trials.
    rng = np.random.default_rng(13)
    checked = 0
    for _ in range(150):
        size = int(rng.integers(4, 40))
        clusters = rng.integers(0, int(rng.integers(2, 7)), size)
        labels = rng.integers(0, 2, size)
        scores = rng.integers(0, int(rng.integers(2, 8)), size) + labels * float(rng.integers(0, 3))
        codes, n_clusters = cluster_codes(clusters)
        if n_clusters < 2 or labels.min() == labels.max():
            continue
        weights = draw_cluster_weights(n_clusters, 15, seed=int(rng.integers(1000)))
        draws = weighted_eer(scores, labels, codes, weights, "legacy")
        for row, draw in zip(weights, draws, strict=True):
            copies = row[codes].astype(int)
            kept_scores, kept_labels = np.repeat(scores, copies), np.repeat(labels, copies)
            if kept_labels.min() == kept_labels.max():
                assert np.isnan(draw)
            elif np.unique(kept_scores).size > 1:
                assert draw == eer(kept_scores, kept_labels, "legacy")
                checked += 1
    assert checked > 1000


def test_legacy_estimates_are_the_papers_routine() -> None:
    rng = np.random.default_rng(14)
    contrast = _contrast(rng, {"ab": 0.3})
    result = statistics_section([contrast], margin=0.01, n_resamples=40, eer_method="legacy", matched_simulations=5)
    estimates = result["contrasts"][0]["estimates"]
    assert result["eer_method"] == "legacy" == result["contrasts"][0]["eer_method"]
    for term in TERMS:
        assert estimates[term]["estimate"] == eer(contrast.scores[term], contrast.labels, "legacy")
    with pytest.raises(WeightedRocInputError, match="unknown bootstrap EER method"):
        weighted_eer([0.1, 0.2], [0, 1], np.array([0, 1]), np.ones((1, 2)), "bogus")  # type: ignore[arg-type]


def _flat(tree: object, prefix: str = "") -> dict[str, object]:
    """Nested dicts as one flat dict (pytest.approx compares flat mappings)."""
    if isinstance(tree, dict):
        return {k: v for key, value in tree.items() for k, v in _flat(value, f"{prefix}/{key}").items()}
    return {prefix: tree}


def test_population_contrast_on_permuted_copies_equals_the_shared_list() -> None:
    # Four terms on "different" trial lists that are the same trials in another order: resampling speakers
    # jointly across the lists must give exactly the draws of the shared-list contrast.
    rng = np.random.default_rng(32)
    shared = CoverageDesign(12, targets_per_speaker=5, nontargets_per_speaker=8).dataset(rng)
    orders = {term: rng.permutation(np.asarray(shared.labels).size) for term in TERMS}

    def permuted(values: object) -> dict[str, np.ndarray]:
        return {term: np.asarray(values)[order] for term, order in orders.items()}

    population = ContrastInput(
        shared.key,
        "sim",
        {term: np.asarray(shared.scores[term])[orders[term]] for term in TERMS},
        permuted(shared.labels),
        permuted(shared.clusters),
        subgroups=permuted(shared.subgroups),
        test_speakers=permuted(shared.test_speakers),
    )
    for method in ("interp", "rocch"):
        expected = bootstrap_contrast(shared, n_resamples=60, seed=4, eer_method=method)  # type: ignore[arg-type]
        result = bootstrap_contrast(population, n_resamples=60, seed=4, eer_method=method)  # type: ignore[arg-type]
        assert result["population_contrast"] and not expected["population_contrast"]
        assert _flat(result["estimates"]) == pytest.approx(_flat(expected["estimates"]))
        assert _flat(result["subgroups"]["terms"]) == pytest.approx(_flat(expected["subgroups"]["terms"]))
        assert result["cluster"] == "enrolment and test speakers (two-way)"


def test_population_contrast_terms_keep_their_own_trials() -> None:
    # The reference list has other speakers and another size; each term's EER is its own list's.
    rng = np.random.default_rng(33)
    lists = {term: CoverageDesign(10 + 2 * i).dataset(rng) for i, term in enumerate(TERMS)}
    scores = {term: np.array(lists[term].scores[term], dtype=float) for term in TERMS}
    scores["a"][:3] = np.nan  # dropped from term a only
    population = ContrastInput(
        {"setting": "p"},
        "E13",
        scores,
        {term: lists[term].labels for term in TERMS},
        {term: lists[term].clusters for term in TERMS},
        test_speakers={term: lists[term].test_speakers for term in TERMS},
    )
    summary = bootstrap_contrast(population, n_resamples=50, seed=1)
    assert summary["n_unscored_dropped"] == 3
    assert summary["n_trials"]["a"] == np.asarray(lists["a"].labels).size - 3
    assert summary["n_clusters"] == 16  # speakers 0..15 across the four lists
    b = lists["b"]
    assert summary["estimates"]["b"]["estimate"] == eer(b.scores["b"], b.labels, "interp")


def test_family_verdict_does_not_cancel() -> None:
    # The case: four contrasts with IE +0.04, -0.04, +0.04, -0.04 at margin 0.02. The signed mean is
    # about 0 and its TOST would say "additive"; the family verdict needs every contrast within the margin.
    rng = np.random.default_rng(34)
    centres = np.array([0.04, -0.04, 0.04, -0.04])
    draws = centres[:, None] + rng.normal(0.0, 0.015, (4, 2000))
    tosts = [tost_verdict(row, margin=0.02) for row in draws]
    assert tost_verdict(draws.mean(axis=0), margin=0.02)["verdict"] == "additive within margin"  # cancels
    family = family_summary(centres, draws, tosts, 0.95, margin=0.02)
    assert family["verdict"] != "additive within margin"
    assert sum(family["contrast_verdicts"].values()) == 4 and family["contrast_verdicts"]["additive within margin"] == 0
    assert family["n_outside_margin"]["high"] == 4 and "estimate" not in family["n_outside_margin"]  # none within
    assert family["mean_ie"]["estimate"] == pytest.approx(0.0)
    within_draws = rng.normal(0, 0.001, (2, 500))
    all_within = family_summary(
        [0.0] * 2, within_draws, [tost_verdict(row, margin=0.02) for row in within_draws], 0.95, margin=0.02
    )
    assert all_within["verdict"] == "additive within margin"
    assert all_within["n_outside_margin"] | {"level": 0} == {"low": 0, "high": 0, "level": 0}


def test_coupling_does_not_count_the_noise_twice() -> None:
    # The textbook case: identical true terms, and the measured estimates themselves carry unit noise per term
    # (as real ones do). Under additivity r = -3 / sqrt(12) = -0.87; re-adding bootstrap noise to the measured
    # terms would give about -0.61.
    rng = np.random.default_rng(35)
    n_contrasts, n_draws, sd = 300, 400, 0.01
    estimates = [{term: 0.2 + rng.normal(0.0, sd) for term in TERMS} for _ in range(n_contrasts)]
    draws = [{term: e[term] + rng.normal(0.0, sd, n_draws) for term in TERMS} for e in estimates]
    expected = coupling_under_additivity(estimates, draws)["expected_under_additivity"]
    assert expected["r"] == pytest.approx(-3 / np.sqrt(12), abs=0.04)
    assert expected["low"] < -3 / np.sqrt(12) < expected["high"] < -0.7  # -0.61 (noise twice) lies outside


def test_coupling_with_a_true_spread_of_predictions() -> None:
    # True predictions spread with variance S = 3 sd^2 (clean fixed, a and b vary), noise sd per term:
    # prediction variance S + 3 sd^2, IE variance 4 sd^2, covariance -3 sd^2: r = -3 / sqrt(6 * 4) = -0.61.
    rng = np.random.default_rng(36)
    n_contrasts, n_draws, sd = 400, 300, 0.01
    truths = [{"clean": 0.1, "a": 0.2 + rng.normal(0, sd * np.sqrt(1.5)), "b": 0.2} for _ in range(n_contrasts)]
    for truth in truths:
        truth["b"] = 0.2 + rng.normal(0, sd * np.sqrt(1.5))
        truth["ab"] = truth["a"] + truth["b"] - truth["clean"]
    estimates = [{term: t[term] + rng.normal(0.0, sd) for term in TERMS} for t in truths]
    draws = [{term: e[term] + rng.normal(0.0, sd, n_draws) for term in TERMS} for e in estimates]
    result = coupling_under_additivity(estimates, draws)
    expected = result["expected_under_additivity"]
    assert expected["r"] == pytest.approx(-3 / np.sqrt(24), abs=0.05)
    assert expected["low"] <= result["observed"] <= expected["high"]  # the data are additive


def test_a_record_without_development_classes_is_skipped_with_its_reason() -> None:
    # The development speakers have targets only: that record gets its reason, the contrasts still get statistics.
    record = FixedThresholdInput(
        {"record_id": "r3"},
        [0.9, 0.8, 0.7, 0.2, 0.6, 0.1],
        [1, 1, 1, 0, 1, 0],
        ["d1", "d2", "e1", "e1", "e2", "e2"],
        ["d1", "d2", "e1", "e2", "e2", "e1"],
        ["F"] * 6,
        ["d1", "d2"],
    )
    rng = np.random.default_rng(38)
    result = statistics_section(
        [_contrast(rng, {})], margin=0.02, fixed_threshold=[record], n_resamples=20, matched_simulations=5
    )
    assert result["fixed_threshold"] == [
        {
            "key": {"record_id": "r3"},
            "skipped": "record {'record_id': 'r3'}: the development trials have 2 speaker(s) with target trials and 0 "
            "with non-target trials, fewer than the declared minimum of 10 per class: a threshold chosen on so few "
            "speakers is theirs, and its uncertainty cannot be estimated",
        }
    ]
    assert len(result["contrasts"]) == 1


def test_subgroup_gap_intervals_match_the_contrast_path_and_count_speakers() -> None:
    # The same trials and the same speaker draws give the same gap interval as a contrast's clean term; the
    # gap estimate is the difference of the subgroups' own EERs (audit.metrics.point), and speakers are counted.
    design = CoverageDesign(9, targets_per_speaker=5, nontargets_per_speaker=8)
    contrast = design.dataset(np.random.default_rng(39))
    labels, enrol, test = (np.asarray(v) for v in (contrast.labels, contrast.clusters, contrast.test_speakers))
    groups = np.asarray(contrast.subgroups)
    scores = np.asarray(contrast.scores["clean"])
    setting = SubgroupInput({"setting": "s"}, scores, labels, enrol, test, groups)
    draws = SpeakerDraws.of([enrol, test], 80, seed=6)
    result = subgroup_gap_intervals(setting, draws, 0.95, "interp")
    via_contrast = bootstrap_contrast(contrast, n_resamples=80, seed=6)["subgroups"]["terms"]["clean"]
    assert result["gap_to_reference"]["M"] == via_contrast["gap_to_reference"]["M"]
    female, male = (eer(scores[groups == g], labels[groups == g], "interp") for g in ("F", "M"))
    assert result["gap_to_reference"]["M"]["estimate"] == pytest.approx(male - female, abs=1e-15)
    assert result["n_speakers"] == {"F": 5, "M": 4} and result["reference"] == "F"


def test_distinct_draws_are_numpy_unique_of_the_speakers_columns() -> None:
    # SpeakerDraws.distinct: numpy.unique of the multiplicities' rows on the columns the codes name (the partner
    # column of weight 1 among them), the codes among those columns, and each draw's distinct row; found once per
    # set of speakers.
    rng = np.random.default_rng(41)
    speakers = np.array([f"s{i}" for i in range(9)])
    enrol, test = rng.choice(speakers[:5], 40), rng.choice(speakers[:5], 40)
    draws = SpeakerDraws.of([speakers], 300, seed=3)
    codes, partners = draws.codes(enrol, test)
    assert partners is not None and (partners == speakers.size).any()  # some trials of one speaker
    rows, local_enrol, local_partner, repeated = draws.distinct(codes, partners)
    used = np.unique(np.concatenate([codes, partners]))
    expected, expected_repeated = np.unique(draws.multiplicities[:, used], axis=0, return_inverse=True)
    np.testing.assert_array_equal(rows, expected)
    np.testing.assert_array_equal(repeated, expected_repeated.reshape(-1))
    np.testing.assert_array_equal(used[local_enrol], codes)
    np.testing.assert_array_equal(used[local_partner], partners)
    np.testing.assert_array_equal(
        rows[repeated][:, local_enrol] * rows[repeated][:, local_partner], draws.trial_weights(enrol, test)
    )
    assert draws.distinct(codes[::-1], partners[::-1])[0] is rows  # the same speakers: found once


def test_a_record_shared_by_contrasts_is_bootstrapped_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two contrasts of one model share the clean and A records: with record ids each record's draws are computed
    # once, and every result is the one computed without the cache.
    import audit.statistics.contrasts as statistics

    rng = np.random.default_rng(40)
    first = _contrast(rng, {"ab": 0.3}, key={"setting": "1"})
    second_scores = {**first.scores, "b": rng.normal(np.asarray(first.labels) * 1.5, 1.0), "ab": first.scores["b"]}
    second = ContrastInput({"setting": "2"}, "E13", second_scores, first.labels, first.clusters)
    records = [
        {"clean": "r-clean", "a": "r-a", "b": "r-b1", "ab": "r-ab1"},
        {"clean": "r-clean", "a": "r-a", "b": "r-b2", "ab": "r-b1"},  # its AB record is the first's B record
    ]
    calls = []
    for name in ("weighted_eer", "eer_and_draws"):  # a record's draws, without or with its point EER
        original = getattr(statistics, name)
        monkeypatch.setattr(statistics, name, lambda *a, _f=original, **k: calls.append(1) or _f(*a, **k))
    plain = statistics_section([first, second], margin=0.02, n_resamples=30, matched_simulations=2)
    n_plain = len(calls)
    calls.clear()
    with_ids = [
        ContrastInput(c.key, c.family, c.scores, c.labels, c.clusters, records=r)
        for c, r in zip((first, second), records, strict=True)
    ]
    cached = statistics_section(with_ids, margin=0.02, n_resamples=30, matched_simulations=2)
    assert n_plain - len(calls) == 3  # clean, A and the shared B/AB record: 5 distinct records, not 8
    for got, expected in zip(cached["contrasts"], plain["contrasts"], strict=True):
        assert got["estimates"] == expected["estimates"]


@pytest.mark.parametrize("shape", ["bimodal", "normal"])
def test_weighted_rocch_is_exact_when_the_hull_edge_spans_far_beyond_the_crossing(shape: str) -> None:
    # Bimodal targets (half far above, half far below the non-targets) make a ROC with a deep dent: the hull edge
    # through the crossing joins points hundreds of thresholds apart, beyond the window tried first.
    rng = np.random.default_rng(41)
    n = 1500
    labels = rng.integers(0, 2, n)
    enrol = rng.integers(0, 30, n)
    test = np.where(labels == 1, enrol, (enrol + rng.integers(1, 30, n)) % 30)
    if shape == "bimodal":
        targets = np.where(rng.random(n) < 0.5, rng.normal(4.0, 0.3, n), rng.normal(-4.0, 0.3, n))
    else:
        targets = rng.normal(1.5, 1.0, n)
    scores = np.where(labels == 1, targets, rng.normal(0.0, 1.0, n))
    index = np.unique(np.r_[enrol, test].astype(str))
    codes, partners = pair_codes(index, enrol, test)
    weights = draw_cluster_weights(index.size, 12, seed=8)
    draws = weighted_eer(scores, labels, codes, weights, "rocch", partners)
    ids = np.asarray(index)
    for row, draw in zip(weights, draws, strict=True):
        multiplicity = dict(zip(ids, row, strict=True))
        copies = [
            int(multiplicity[str(e)] * (1 if e == t else multiplicity[str(t)]))
            for e, t in zip(enrol, test, strict=True)
        ]
        assert draw == pytest.approx(eer(np.repeat(scores, copies), np.repeat(labels, copies), "rocch"), abs=1e-12)


def test_a_family_with_flagged_contrasts_says_so_and_gives_the_unflagged_summary() -> None:
    rng = np.random.default_rng(42)
    clean = _contrast(rng, {}, key={"setting": "ok"})
    flagged = _contrast(rng, {"ab": 0.8}, key={"setting": "near chance"}, caveats=("near-chance-prediction",))
    result = statistics_section([clean, flagged], margin=0.02, n_resamples=40, matched_simulations=2)
    family = result["families"]["E13"]
    assert family["n_contrasts"] == 2 and family["n_flagged"] == 1
    assert family["unflagged"]["n_contrasts"] == 1
    alone = statistics_section([clean], margin=0.02, n_resamples=40, matched_simulations=2)["families"]["E13"]
    assert family["unflagged"]["mean_ie"]["estimate"] == alone["mean_ie"]["estimate"]
    assert [c["caveats"] for c in result["contrasts"]] == [[], ["near-chance-prediction"]]


@pytest.mark.parametrize(
    "columns",
    [
        ([1, "1", "b"], ["a", 2.5, 1]),  # a number and its text are one id
        ([None, "None", float("nan")], ["nan", "x", None]),  # missing ids as their text, as astype(str) writes them
        ([1, 1.0, True], ["1.0", "True", 1]),  # equal as numbers, three texts: three ids
        (np.array(["s2", "s1"]), np.array(["s1", "s10"], dtype=object)),
        ([], []),
    ],
)
def test_text_codes_are_each_id_among_the_sorted_texts(columns: tuple[list[object], list[object]]) -> None:
    joined = np.concatenate([np.asarray(column, dtype=object) for column in columns])
    names, inverse = np.unique(joined.astype(str), return_inverse=True)  # the oracle: every id made text
    got_names, codes = text_codes(*columns)
    assert got_names.tolist() == names.tolist()
    assert np.concatenate(codes).tolist() == inverse.tolist()
    assert [code.size for code in codes] == [len(column) for column in columns]


def test_pair_codes_look_speakers_up_as_text_and_refuse_an_unknown_one() -> None:
    index = np.array(["1", "2", "spk-a"])
    enrol, partner = pair_codes(index, np.array([1, 2, 2], dtype=object), np.array(["2", "2", "spk-a"]))
    assert enrol.tolist() == [0, 1, 1] and partner is not None and partner.tolist() == [1, 3, 2]  # 3: weight 1
    with pytest.raises(StatisticsInputError, match="spk-b"):
        pair_codes(index, ["spk-a"], ["spk-b"])
