"""Recomputed summary tables, checked against numbers worked out by hand (or by simulation) in the test."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from audit.table.aggregates import (
    binomial_eer_variance,
    condition_means,
    emotion_matrix,
    emotion_reference,
    encoder_agreement,
    expected_coupled_correlation,
    expected_coupled_range,
    gap_ratios,
    gap_vs_snr,
    gender_gap_pairs,
    gender_gaps,
    inventory,
    parse_snr,
    per_encoder,
    per_experiment,
    standard_normals,
    summarise_contrasts,
)
from audit.table.contrasts import derive_contrasts
from schemas.results import validate_results, with_all_columns


def frame(rows: list[dict[str, object]]) -> pd.DataFrame:
    """Validated rows (all must pass) with every optional column present; empty strings are missing cells."""
    text = pd.DataFrame([{k: str(v) if v != "" else None for k, v in row.items()} for row in rows], dtype=str)
    validated = validate_results(text)
    assert validated.failures == []
    return with_all_columns(validated.valid)


def record(
    experiment: str,
    model: str,
    condition: str,
    eer: float,
    n_target: int = 100,
    n_nontarget: int = 1000,
    **extra: object,
) -> dict[str, object]:
    row: dict[str, object] = {
        "record_id": f"{experiment}-{model}-{condition}-{extra.get('subgroup', '')}-{eer}",
        "experiment": experiment,
        "model": model,
        "corpus": "c1",
        "condition": condition,
        "eer": eer,
        "n_target": n_target,
        "n_nontarget": n_nontarget,
    }
    row.update(extra)
    return row


def test_per_experiment_mean_and_sample_sd() -> None:
    rows = [record("E01", "m1", "a", 0.1), record("E01", "m2", "a", 0.2), record("E01", "m3", "b", 0.6)]
    rows.append(record("E02", "m1", "a", 0.25))
    result = {r["experiment"]: r for r in per_experiment(frame(rows))}
    # mean 0.3; deviations -0.2, -0.1, 0.3 -> (0.04 + 0.01 + 0.09) / 2 = 0.07
    assert result["E01"]["n_records"] == 3
    assert result["E01"]["eer_mean"] == pytest.approx(0.3)
    assert result["E01"]["eer_sd"] == pytest.approx(math.sqrt(0.07))
    assert result["E02"] == {"experiment": "E02", "n_records": 1, "eer_mean": 0.25, "eer_sd": None}


def test_macro_eer_weights_conditions_then_experiments_equally() -> None:
    rows = [
        record("E01", "m1", "c1", 0.1, subgroup="gender=F"),
        record("E01", "m1", "c1", 0.3, subgroup="gender=M"),
        record("E01", "m1", "c2", 0.4),
        record("E02", "m1", "c1", 0.1),
    ]
    (result,) = per_encoder(frame(rows))
    # E01: condition c1 = 0.2, c2 = 0.4 -> 0.3; E02 = 0.1; macro = 0.2 (a plain record mean would be 0.225)
    assert result == {"model": "m1", "macro_eer": pytest.approx(0.2), "n_experiments": 2}


def test_condition_means_average_encoder_rows_per_condition_and_subgroup() -> None:
    rows = [
        record("E10", "m1", "clean->clean", 0.10),
        record("E10", "m2", "clean->clean", 0.20),
        record("E10", "m1", "clean->spoof-tts", 0.30),
        record("E10", "m2", "clean->spoof-tts", 0.50),
        record("E10", "m3", "clean->spoof-tts", 0.40),
        record("E16", "m1", "clean", 0.05, subgroup="gender=F"),
        record("E16", "m1", "clean", 0.07, subgroup="gender=M"),
    ]
    result = {(r["experiment"], r["condition"], r["subgroup"]): r for r in condition_means(frame(rows))}
    # spoof-tts: mean 0.4; deviations -0.1, 0.1, 0 -> (0.01 + 0.01) / 2 = 0.01, SD 0.1
    spoof = result[("E10", "clean->spoof-tts", None)]
    assert (spoof["n_models"], spoof["eer_mean"], spoof["eer_sd"]) == (3, pytest.approx(0.4), pytest.approx(0.1))
    assert result[("E10", "clean->clean", None)]["eer_sd"] == pytest.approx(math.sqrt(0.005))
    assert (
        result[("E16", "clean", "gender=F")]["eer_mean"] == 0.05
        and result[("E16", "clean", "gender=F")]["eer_sd"] is None
    )
    assert len(result) == 4


def test_emotion_matrix_means_across_encoders_and_ratios_to_neutral() -> None:
    cells = {("neutral", "neutral"): (0.08, 0.10), ("neutral", "fearful"): (0.24, 0.28)}
    rows = []
    for (enrol, test), eers in cells.items():
        for model, eer in zip(("m1", "m2"), eers, strict=True):
            rows.append(record("E01", model, f"{enrol}->{test}", eer, enrol_condition=enrol, test_condition=test))
    # a second m1 record in one cell is averaged within the model first: m1 = (0.24 + 0.30) / 2 = 0.27
    rows.append(record("E01", "m1", "neutral->fearful", 0.30, enrol_condition="neutral", test_condition="fearful"))
    # subgroup rows are not part of the matrix
    rows.append(record("E01", "m1", "neutral->neutral", 0.9, subgroup="gender=F", enrol_condition="neutral",
                       test_condition="neutral"))  # fmt: skip
    result = {(c["enrol"], c["test"]): c for c in emotion_matrix(frame(rows), "E01", "neutral")}
    assert result[("neutral", "neutral")]["eer_mean"] == pytest.approx(0.09)
    assert result[("neutral", "neutral")]["ratio_to_reference"] == pytest.approx(1.0)
    assert result[("neutral", "fearful")]["eer_mean"] == pytest.approx((0.27 + 0.28) / 2)
    assert result[("neutral", "fearful")]["eer_sd"] == pytest.approx(math.sqrt(2 * 0.005**2))
    assert result[("neutral", "fearful")]["ratio_to_reference"] == pytest.approx(0.275 / 0.09)
    assert result[("neutral", "fearful")]["matched"] is False
    assert result[("neutral", "fearful")]["n_models"] == 2


def gender_rows() -> list[dict[str, object]]:
    """Two models, clean and two noisy conditions: F - M gaps chosen by hand."""
    eers = {
        "m1": {"clean": (0.050, 0.040), "babble snr=5": (0.080, 0.050), "babble snr=0": (0.100, 0.120)},
        "m2": {"clean": (0.0302, 0.0300), "babble snr=5": (0.070, 0.060), "babble snr=0": (0.150, 0.110)},
    }
    rows = []
    for model, conditions in eers.items():
        for condition, (f, m) in conditions.items():
            rows.append(record("E16", model, condition, f, subgroup="gender=F"))
            rows.append(record("E16", model, condition, m, subgroup="gender=M"))
    return rows


def test_gender_gaps_mean_absolute_maximum_and_signed() -> None:
    pairs, unpaired = gender_gap_pairs(frame(gender_rows()))
    assert unpaired == []
    gaps = {g["condition"]: g for g in gender_gaps(pairs, ["clean"])}
    # clean: m1 0.010, m2 0.0002; 0 dB: m1 -0.020, m2 0.040
    assert gaps["clean"]["clean"] is True
    assert gaps["clean"]["gap_abs_mean"] == pytest.approx(0.0051)
    assert gaps["babble snr=0"]["gap_abs_mean"] == pytest.approx(0.030)
    assert gaps["babble snr=0"]["gap_abs_max"] == pytest.approx(0.040)
    assert gaps["babble snr=0"]["gap_signed_mean"] == pytest.approx(0.010)
    assert gaps["babble snr=0"]["n_models"] == 2


def test_gap_ratios_divide_by_the_models_own_clean_gap() -> None:
    pairs, _ = gender_gap_pairs(frame(gender_rows()))
    ratios = {(r["model"], r["condition"]): r["ratio"] for r in gap_ratios(pairs, ["clean"])}
    assert ratios[("m1", "babble snr=5")] == pytest.approx(0.030 / 0.010)
    assert ratios[("m1", "babble snr=0")] == pytest.approx(-2.0)
    assert ratios[("m2", "babble snr=5")] == pytest.approx(0.010 / 0.0002)
    assert ratios[("m2", "babble snr=0")] == pytest.approx(200.0)
    assert len(ratios) == 4  # the clean condition is not divided by itself


def test_gaps_carry_the_fewest_speakers_behind_each_side() -> None:
    rows = gender_rows()
    for index, row in enumerate(rows):  # F rows of m1 have 3 speakers, of m2 5; every M row a single speaker
        row.update(n_speakers=4, n_enrol_speakers=(3 if str(row["model"]) == "m1" else 5) if index % 2 == 0 else 1)
    pairs, _ = gender_gap_pairs(frame(rows))
    gaps = {g["condition"]: g for g in gender_gaps(pairs, ["clean"])}
    assert (gaps["babble snr=0"]["speakers_f"], gaps["babble snr=0"]["speakers_m"]) == (3, 1)
    ratios = {(r["model"], r["condition"]): r for r in gap_ratios(pairs, ["clean"])}
    assert (ratios[("m2", "babble snr=5")]["speakers_f"], ratios[("m2", "babble snr=5")]["speakers_m"]) == (5, 1)
    # a table that does not count its speakers says nothing rather than a number
    unknown = {g["condition"]: g for g in gender_gaps(gender_gap_pairs(frame(gender_rows()))[0], ["clean"])}
    assert (unknown["clean"]["speakers_f"], unknown["clean"]["speakers_m"]) == (None, None)


def test_unpaired_gender_rows_are_returned_not_dropped() -> None:
    rows = [*gender_rows(), record("E16", "m1", "babble snr=10", 0.07, subgroup="gender=F")]
    pairs, unpaired = gender_gap_pairs(frame(rows))
    assert len(pairs) == 6
    assert [(u.condition, len(u.records["F"]), len(u.records["M"])) for u in unpaired] == [("babble snr=10", 1, 0)]


def test_gap_vs_snr_groups_by_noise_and_labelled_snr() -> None:
    pairs, _ = gender_gap_pairs(frame(gender_rows()))
    points = gap_vs_snr(gender_gaps(pairs, ["clean"]))
    assert [(p["noise"], p["snr_db"]) for p in points] == [("babble", 5.0), ("babble", 0.0)]
    assert points[0]["gap_abs_mean"] == pytest.approx(0.020)
    assert points[0]["clean_gap_abs_mean"] == pytest.approx(0.0051)


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("babble snr=5", (5.0, "babble")),
        ("music_-5dB", (-5.0, "music")),
        ("babble-20dB", (20.0, "babble")),
        ("babble -20dB", (-20.0, "babble")),
        ("SNR 10 dB white", (10.0, "white")),
        ("noise=cafe,snr:2.5", (2.5, "noise=cafe")),
        ("clean", None),
        ("opus 16 kbps", None),
    ],
)
def test_parse_snr(label: str, expected: tuple[float, str] | None) -> None:
    assert parse_snr(label) == expected


def contrast_rows(model: str, family: str, eers: tuple[float, float, float, float]) -> list[dict[str, object]]:
    levels = (("none", "none"), ("x", "none"), ("none", "y"), ("x", "y"))
    return [
        record(
            "E14",
            model,
            f"{a}/{b}",
            eer,
            model_family=family,
            factor_a="fa",
            level_a=a,
            factor_b="fb",
            level_b=b,
        )
        for (a, b), eer in zip(levels, eers, strict=True)
    ]


def test_contrast_summary_per_family() -> None:
    rows = contrast_rows("s1", "speaker", (0.1, 0.2, 0.2, 0.32))  # prediction 0.3, IE +0.02
    rows += contrast_rows("s2", "speaker", (0.1, 0.3, 0.2, 0.36))  # prediction 0.4, IE -0.04
    rows += contrast_rows("w1", "ssl", (0.3, 0.4, 0.5, 0.5))  # prediction 0.6, IE -0.1
    contrasts = derive_contrasts(frame(rows)).contrasts
    summary = {
        s["model_family"]: s
        for s in summarise_contrasts(contrasts, lambda c: {"experiment": c.experiment, "model_family": c.model_family})
    }
    assert summary["speaker"]["n"] == 2
    assert summary["speaker"]["ie_mean"] == pytest.approx(-0.01)
    assert summary["speaker"]["ie_sd"] == pytest.approx(math.sqrt(2 * 0.03**2))
    assert summary["speaker"]["prediction_mean"] == pytest.approx(0.35)
    assert summary["speaker"]["prediction_max"] == pytest.approx(0.4)
    assert summary["speaker"]["eer_ab_mean"] == pytest.approx(0.34)
    assert summary["ssl"]["n"] == 1
    assert summary["ssl"]["ie_sd"] is None


def test_binomial_eer_variance_by_hand() -> None:
    # 0.2 * 0.8 / 4 * (1/125 + 1/125) = 0.04 * 0.016
    assert binomial_eer_variance(0.2, 125, 125) == pytest.approx(0.00064)


def test_expected_coupled_correlation_by_hand() -> None:
    # every term has EER 0.2 or 0.8 with 125 + 125 trials, so every term variance is 0.00064;
    # predictions 0.2, 0.8, 1.4 have sample variance 0.36
    rows = contrast_rows("m1", "speaker", (0.2, 0.2, 0.2, 0.2))
    rows += contrast_rows("m2", "speaker", (0.2, 0.8, 0.2, 0.8))
    rows += contrast_rows("m3", "speaker", (0.2, 0.8, 0.8, 0.8))
    table = frame([{**r, "n_target": 125, "n_nontarget": 125} for r in rows])
    contrasts = derive_contrasts(table).contrasts
    # r = -3v / sqrt(4v * 0.36) with v = 0.00064
    expected = -3 * 0.00064 / math.sqrt(4 * 0.00064 * 0.36)
    assert expected_coupled_correlation(contrasts) == pytest.approx(expected)


def test_expected_coupled_correlation_when_predictions_vary_by_noise_only() -> None:
    # identical terms, identical variances v: Var(P) is floored at its noise part 3v, so
    # r = -3v / sqrt(4v * 3v) = -sqrt(3) / 2
    rows = [r for m in ("m1", "m2", "m3") for r in contrast_rows(m, "speaker", (0.2, 0.2, 0.2, 0.2))]
    table = frame(rows)
    contrasts = derive_contrasts(table).contrasts
    assert expected_coupled_correlation(contrasts) == pytest.approx(-math.sqrt(3) / 2)


def test_expected_coupled_correlation_matches_a_simulation_of_additive_data() -> None:
    """A second method: simulate additive truth with binomial noise and compare the empirical correlation."""
    rng = np.random.default_rng(7)
    n_contrasts, n_target, n_nontarget = 1500, 60, 300
    clean = rng.uniform(0.05, 0.15, n_contrasts)
    a = clean + rng.uniform(0.0, 0.2, n_contrasts)
    b = clean + rng.uniform(0.0, 0.2, n_contrasts)
    truth = np.stack([clean, a, b, a + b - clean], axis=1)
    misses = rng.binomial(n_target, truth) / n_target
    false_alarms = rng.binomial(n_nontarget, truth) / n_nontarget
    measured = (misses + false_alarms) / 2
    rows = []
    for i, eers in enumerate(measured):
        rows += contrast_rows(f"m{i}", "speaker", tuple(float(e) for e in eers))  # type: ignore[arg-type]
    table = frame([{**r, "n_target": n_target, "n_nontarget": n_nontarget} for r in rows])
    contrasts = derive_contrasts(table).contrasts
    observed = np.corrcoef([c.prediction for c in contrasts], [c.ie for c in contrasts])[0, 1]
    expected = expected_coupled_correlation(contrasts)
    assert expected is not None and expected < -0.2  # the coupling is material at these budgets
    assert expected == pytest.approx(observed, abs=0.06)  # about 2.5 standard errors of r at n = 1500


def test_condition_sd_is_across_encoders_not_records() -> None:
    # m1 has two records in the cell (0.1, 0.3: mean 0.2), m2 one (0.5): SD across encoders of (0.2, 0.5) is
    # 0.3 / sqrt(2); across the three records it would be 0.2.
    rows = [
        record("E01", "m1", "angry", 0.1, enrol_condition="neutral", test_condition="angry"),
        record("E01", "m1", "angry", 0.3, enrol_condition="angry", test_condition="angry"),
        record("E01", "m2", "angry", 0.5, enrol_condition="neutral", test_condition="angry"),
    ]
    (cell,) = condition_means(frame(rows))
    assert (cell["n_models"], cell["n_records"]) == (2, 3)
    assert cell["eer_mean"] == pytest.approx(0.35) and cell["eer_sd"] == pytest.approx(0.3 / math.sqrt(2))


def _emotion_rows(neutral: str) -> list[dict[str, object]]:
    return [
        record("E01", "m1", "a", 0.1, enrol_condition=neutral, test_condition=neutral),
        record("E01", "m1", "b", 0.3, enrol_condition=neutral, test_condition="emo-fearful"),
    ]


def test_emotion_reference_is_found_under_the_runners_label_or_warned() -> None:
    # The runner writes emo-neutral; the audit declares neutral: the ratios use emo-neutral and say so.
    table = frame(_emotion_rows("emo-neutral"))
    cells = {(c["enrol"], c["test"]): c for c in emotion_matrix(table, "E01", "neutral")}
    assert cells[("emo-neutral", "emo-fearful")]["ratio_to_reference"] == pytest.approx(3.0)
    found = emotion_reference(table, "E01", "neutral")
    assert found["used"] == "emo-neutral" and "emo-neutral" in found["warning"]
    missing = emotion_reference(frame(_emotion_rows("calm")), "E01", "neutral")
    assert missing["used"] is None and "no ratios" in missing["warning"]
    assert all(c["ratio_to_reference"] is None for c in emotion_matrix(frame(_emotion_rows("calm")), "E01", "neutral"))
    assert emotion_reference(table, "E02", "neutral")["warning"] is None  # no Table 8 rows: nothing to say


def test_contrast_summary_counts_flagged_contrasts_and_gives_nli_on_positive_predictions() -> None:
    rows = contrast_rows("s1", "speaker", (0.1, 0.2, 0.2, 0.33))  # prediction 0.3, IE +0.03, NLI 0.1
    rows += contrast_rows("s2", "speaker", (0.1, 0.25, 0.2, 0.31))  # prediction 0.35, IE -0.04
    rows += contrast_rows("s3", "speaker", (0.3, 0.45, 0.35, 0.4))  # prediction 0.5 near chance, IE -0.1
    rows += contrast_rows("s4", "speaker", (0.3, 0.2, 0.05, 0.02))  # prediction -0.05, IE +0.07: no NLI
    contrasts = derive_contrasts(frame(rows)).contrasts
    (summary,) = summarise_contrasts(contrasts, lambda c: {"model_family": c.model_family}, near_chance_eer=0.4)
    assert summary["n"] == 4 and summary["n_flagged"] == 1
    assert summary["ie_mean"] == pytest.approx((0.03 - 0.04 - 0.1 + 0.07) / 4)
    assert summary["ie_abs_mean"] == pytest.approx((0.03 + 0.04 + 0.1 + 0.07) / 4)
    assert summary["ie_mean_unflagged"] == pytest.approx((0.03 - 0.04 + 0.07) / 3)
    assert summary["n_nli"] == 3  # s4's prediction is negative
    assert summary["nli_mean"] == pytest.approx((0.1 - 0.04 / 0.35 - 0.2) / 3)


def test_expected_coupled_range_matches_a_simulation_of_additive_data() -> None:
    # Eleven additive contrasts with binomial noise, many times over: the empirical 95 % range of the observed
    # r (an independent simulation from the truth) against the range computed from one measured table.
    rng = np.random.default_rng(17)
    n_contrasts, n_target, n_nontarget = 11, 40, 200
    clean = rng.uniform(0.05, 0.15, n_contrasts)
    a = clean + rng.uniform(0.0, 0.15, n_contrasts)
    b = clean + rng.uniform(0.0, 0.15, n_contrasts)
    truth = np.stack([clean, a, b, a + b - clean], axis=1)

    def measure() -> np.ndarray:
        return (rng.binomial(n_target, truth) / n_target + rng.binomial(n_nontarget, truth) / n_nontarget) / 2

    observed = []
    for _ in range(3000):
        m = measure()
        prediction = m[:, 1] + m[:, 2] - m[:, 0]
        observed.append(np.corrcoef(prediction, m[:, 3] - prediction)[0, 1])
    low, high = np.quantile(observed, [0.025, 0.975])
    rows = []
    for i, eers in enumerate(measure()):
        rows += contrast_rows(f"m{i}", "speaker", tuple(float(e) for e in eers))  # type: ignore[arg-type]
    table = frame([{**r, "n_target": n_target, "n_nontarget": n_nontarget} for r in rows])
    result = expected_coupled_range(derive_contrasts(table).contrasts)
    assert result is not None
    assert result["low"] == pytest.approx(low, abs=0.15) and result["high"] == pytest.approx(high, abs=0.15)
    assert result["high"] - result["low"] > 0.5  # eleven contrasts: a wide range, which the report must show


def test_inventory_and_encoder_agreement_by_hand() -> None:
    rows = contrast_rows("s1", "speaker", (0.1, 0.2, 0.3, 0.4)) + contrast_rows("s2", "speaker", (0.2, 0.1, 0.4, 0.3))
    rows.append(record("E15", "s1", "clean", 0.2))
    table = frame(rows)
    contrasts = derive_contrasts(table).contrasts
    by_experiment = {r["experiment"]: r for r in inventory(table, contrasts, ["E15"])}
    e14 = by_experiment["E14"]
    assert (e14["n_encoders"], e14["n_conditions"], e14["n_records"], e14["n_trials"]) == (2, 4, 8, 8 * 1100)
    assert e14["n_contrasts"] == 2 and e14["corpora"] == ["c1"]
    assert e14["admitted_use"] == "interaction arithmetic only (trial lists unverifiable)"  # no trial_list_id
    assert "no interaction" in by_experiment["E15"]["admitted_use"]
    (pair,) = encoder_agreement(table)
    # shared cells: E14's four conditions: s1 (0.1, 0.2, 0.3, 0.4) vs s2 (0.2, 0.1, 0.4, 0.3):
    # ranks (1, 2, 3, 4) vs (2, 1, 4, 3): Spearman 1 - 6 * 4 / (4 * 15) = 0.6; mean |difference| 0.1
    assert (pair["model_1"], pair["model_2"], pair["n_cells"]) == ("s1", "s2", 4)
    assert pair["spearman"] == pytest.approx(0.6) and pair["mean_abs_difference"] == pytest.approx(0.1)


def test_encoder_agreement_with_ties_and_unshared_cells_matches_scipy() -> None:
    # Three encoders over six conditions: tied EERs within an encoder, and cells only one encoder measured, which
    # its pairs leave out; scipy's spearmanr on the shared cells is the oracle.
    from scipy.stats import spearmanr

    eers = {
        "s1": (0.1, 0.2, 0.2, 0.3, 0.1, 0.4),
        "s2": (0.3, 0.3, 0.1, 0.2, None, 0.2),
        "s3": (0.25, 0.05, 0.05, 0.05, 0.2, None),
    }
    rows = [record("E05", model, f"c{k}", eer) for model, values in eers.items() for k, eer in enumerate(values) if eer]
    result = {(p["model_1"], p["model_2"]): p for p in encoder_agreement(frame(rows))}
    for first, second in (("s1", "s2"), ("s1", "s3"), ("s2", "s3")):
        shared = [(a, b) for a, b in zip(eers[first], eers[second], strict=True) if a and b]
        x, y = np.array(shared).T
        pair = result[(first, second)]
        assert pair["n_cells"] == len(shared)
        assert pair["spearman"] == pytest.approx(spearmanr(x, y).statistic)
        assert pair["mean_abs_difference"] == pytest.approx(np.mean(np.abs(x - y)))


def test_expected_coupled_range_draws_its_noise_in_one_stream() -> None:
    # The simulations run a block at a time; the formula over all draws at once (as one array, from a fresh generator)
    # is the oracle, so a block boundary (300 simulations is not a whole number of blocks) must change no digit.
    rows = [r for i in range(5) for r in contrast_rows(f"m{i}", "speaker", (0.1 + i / 100, 0.2, 0.25 - i / 50, 0.4))]
    contrasts = derive_contrasts(frame(rows)).contrasts
    variances = np.array(
        [[binomial_eer_variance(t.eer, t.n_target, t.n_nontarget) for t in c.terms] for c in contrasts]
    )
    predictions = np.array([c.prediction for c in contrasts])
    shrink = math.sqrt(
        max(np.var(predictions, ddof=1) - variances[:, :3].sum(axis=1).mean(), 0) / np.var(predictions, ddof=1)
    )
    centres = predictions.mean() + (predictions - predictions.mean()) * shrink
    noise = np.random.default_rng(3).normal(size=(300, *variances.shape)) * np.sqrt(variances)
    simulated = centres + noise[..., 1] + noise[..., 2] - noise[..., 0]
    ie = noise[..., 3] - (noise[..., 1] + noise[..., 2] - noise[..., 0])
    r = [np.corrcoef(s, e)[0, 1] for s, e in zip(simulated, ie, strict=True)]
    low, median, high = np.quantile(r, [0.025, 0.5, 0.975])
    result = expected_coupled_range(contrasts, n_simulations=300, seed=3)
    assert result is not None
    assert (result["low"], result["median"], result["high"]) == pytest.approx((low, median, high), abs=1e-12)
    # draws shared with a larger call of the same seed (ie_vs_prediction's families) are its prefix: the same range
    assert expected_coupled_range(contrasts, n_simulations=300, seed=3, normals=standard_normals(10**5, 3)) == result
