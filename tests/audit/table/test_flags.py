"""Every table-only flag on small tables whose expected findings are worked out by hand in each test."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from audit.table.checks import AuditConfig
from audit.verify import AuditRequest, verify

ONE_EXPERIMENT = AuditConfig(expected_experiments=("E14",))
LEVELS = {"clean": ("none", "none"), "a": ("x", "none"), "b": ("none", "y"), "ab": ("x", "y")}


def row(record_id: str, eer: float | str, **extra: Any) -> dict[str, Any]:
    """A row with complete provenance, so that only what a test changes raises flags."""
    base = {
        "record_id": record_id,
        "experiment": "E14",
        "model": "m1",
        "model_family": "speaker",
        "corpus": "c1",
        "condition": record_id,
        "eer": eer,
        "n_target": 100,
        "n_nontarget": 1000,
        "checkpoint_blake3": "ab" * 32,
        "run_id": "run-1",
        "trial_list_id": "tl-1",
    }
    return base | extra


def contrast(model: str, eers: tuple[float, float, float, float], **extra: Any) -> list[dict[str, Any]]:
    """The four terms (clean, a, b, ab) of one setting for ``model``; ``extra`` may hold per-term dicts."""
    rows = []
    for term, eer in zip(LEVELS, eers, strict=True):
        level_a, level_b = LEVELS[term]
        fields = {"model": model, "factor_a": "fa", "level_a": level_a, "factor_b": "fb", "level_b": level_b}
        rows.append(row(f"{model}-{term}", eer, **fields, **extra.get(term, {})))
    return rows


def audit(tmp_path: Path, rows: list[dict[str, Any]], config: AuditConfig = ONE_EXPERIMENT) -> dict[str, Any]:
    columns = list(dict.fromkeys(key for r in rows for key in r))
    path = tmp_path / "results.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(rows)
    return verify(AuditRequest(path, config=config))


def flags_of(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {flag["id"]: flag for flag in report["flags"]}


def test_a_clean_table_raises_nothing_and_passes(tmp_path: Path) -> None:
    report = audit(tmp_path, contrast("m1", (0.1, 0.2, 0.2, 0.3)))
    assert report["flags"] == []
    assert report["verdict"] == "pass"
    assert report["config"] == ONE_EXPERIMENT.as_dict()
    assert report["config"]["near_chance_eer"] == 0.4


def test_schema_failures_are_listed_by_row_and_column_and_those_rows_left_out(tmp_path: Path) -> None:
    rows = [row("r1", 0.1), row("r2", "abc"), row("r3", 0.2, n_target=0), row("r4", 0.3)]
    report = audit(tmp_path, rows)
    flag = flags_of(report)["schema"]
    assert flag["severity"] == "error"
    assert report["verdict"] == "fail"
    failures = [(f["row"], f["column"], f["check"]) for f in flag["details"]["failures"]]
    assert failures == [(2, "eer", "must be a number"), (3, "n_target", "must be > 0")]
    assert flag["records"] == ["r2", "r3"]
    (per_experiment,) = report["aggregates"]["per_experiment"]
    assert per_experiment["n_records"] == 2
    assert per_experiment["eer_mean"] == pytest.approx(0.2)
    assert "2 left out for schema failures" in report["sections"][0]["lines"][0]


def test_percent_scale_above_one_and_chance_above_half(tmp_path: Path) -> None:
    rows = [row("pct", 12.5), row("one", 1.0), row("high", 0.51), row("half", 0.5)]
    flags = flags_of(audit(tmp_path, rows))
    assert flags["percent-scale"]["records"] == ["pct"]
    assert flags["percent-scale"]["severity"] == "error"
    assert flags["eer-above-chance"]["records"] == ["one", "high"]
    assert flags["eer-above-chance"]["severity"] == "warning"


def test_near_chance_prediction_at_the_declared_threshold(tmp_path: Path) -> None:
    rows = contrast("m1", (0.1, 0.25, 0.25, 0.3))  # prediction 0.40: at the threshold
    rows += contrast("m2", (0.1, 0.245, 0.245, 0.3))  # prediction 0.39, every term below 0.4
    flag = flags_of(audit(tmp_path, rows))["near-chance-prediction"]
    assert flag["records"] == ["m1-clean", "m1-a", "m1-b", "m1-ab"]
    assert flag["details"]["contrasts"][0]["prediction"] == pytest.approx(0.4)
    stricter = AuditConfig(expected_experiments=("E14",), near_chance_eer=0.45)
    assert "near-chance-prediction" not in flags_of(audit(tmp_path, rows, stricter))


def test_coupled_correlation_reports_observed_and_expected_r(tmp_path: Path) -> None:
    # predictions 0.2, 0.3, 0.4 with IE +0.02, 0, -0.02: r = -1 exactly
    rows = contrast("m1", (0.1, 0.15, 0.15, 0.22)) + contrast("m2", (0.1, 0.2, 0.2, 0.3))
    rows += contrast("m3", (0.1, 0.25, 0.25, 0.38))
    report = audit(tmp_path, rows)
    flag = flags_of(report)["coupled-correlation"]
    assert flag["details"]["r_observed"] == pytest.approx(-1.0)
    assert flag["details"]["r_expected_additive"] == report["aggregates"]["ie_vs_prediction"]["r_expected_additive"]
    assert flag["details"]["r_expected_additive"] < 0
    assert "r = -1.000" in flag["message"]
    assert len(flag["records"]) == 12


def test_two_contrasts_have_no_correlation_to_flag(tmp_path: Path) -> None:
    rows = contrast("m1", (0.1, 0.15, 0.15, 0.22)) + contrast("m2", (0.1, 0.2, 0.2, 0.3))
    assert "coupled-correlation" not in flags_of(audit(tmp_path, rows))


def gender(model: str, condition: str, eer_f: float, eer_m: float, n_m: int = 100) -> list[dict[str, Any]]:
    return [
        row(f"{model}-{condition}-F", eer_f, model=model, condition=condition, subgroup="gender=F"),
        row(
            f"{model}-{condition}-M",
            eer_m,
            model=model,
            condition=condition,
            subgroup="gender=M",
            n_target=n_m,
        ),
    ]


def test_unstable_ratio_small_denominator_or_sign_change(tmp_path: Path) -> None:
    rows = gender("m1", "clean", 0.104, 0.100) + gender("m1", "babble snr=5", 0.12, 0.10)  # |clean gap| 0.004
    rows += gender("m2", "clean", 0.106, 0.100) + gender("m2", "babble snr=5", 0.12, 0.10)  # 0.006: stable
    rows += gender("m3", "clean", 0.120, 0.100) + gender("m3", "babble snr=5", 0.10, 0.12)  # sign flips
    report = audit(tmp_path, rows)
    ratios = flags_of(report)["unstable-ratio"]["details"]["ratios"]
    assert [(r["model"], r["why"]) for r in ratios] == [
        ("m1", "|clean gap| 0.004 < 0.005"),
        ("m3", "the gap changes sign"),
    ]
    values = {r["model"]: r["ratio"] for r in report["aggregates"]["gap_ratios"]}
    assert values == pytest.approx({"m1": 5.0, "m2": 0.02 / 0.006, "m3": -1.0})


def test_missing_term_cross_corpus_and_ambiguous_term(tmp_path: Path) -> None:
    missing = [r for r in contrast("m1", (0.1, 0.2, 0.2, 0.3)) if r["record_id"] != "m1-a"]
    cross = contrast("m2", (0.1, 0.2, 0.2, 0.3), clean={"corpus": "other"})
    again = row("m3-a-again", 0.21, model="m3", factor_a="fa", level_a="x", factor_b="fb", level_b="none")
    ambiguous = [*contrast("m3", (0.1, 0.2, 0.2, 0.3)), again]
    report = audit(tmp_path, missing + cross + ambiguous)
    flags = flags_of(report)
    assert flags["missing-term"]["details"]["settings"][0]["terms"] == ["a"]
    assert flags["missing-term"]["records"] == ["m1-clean", "m1-b", "m1-ab"]
    assert flags["cross-corpus-reference"]["details"]["settings"][0]["found"]["clean"] == [["other", "m2-clean"]]
    assert flags["ambiguous-term"]["details"]["settings"][0]["terms"] == ["a"]
    assert report["aggregates"]["contrasts"] == []


def test_declared_cross_corpus_experiments_are_excluded(tmp_path: Path) -> None:
    rows = [r | {"experiment": "E15"} for r in contrast("m1", (0.1, 0.2, 0.2, 0.3))]
    report = audit(tmp_path, rows, AuditConfig(expected_experiments=("E15",)))
    assert flags_of(report)["cross-corpus-reference"]["severity"] == "warning"
    assert report["aggregates"]["contrasts"] == []


def test_substituted_reference_warning_on_numbers_and_error_on_the_same_score_file(tmp_path: Path) -> None:
    same_numbers = contrast("m1", (0.1, 0.2, 0.1, 0.3))  # b equals the reference, counts too
    flag = flags_of(audit(tmp_path, same_numbers))["substituted-reference"]
    assert flag["severity"] == "warning"
    assert flag["details"]["terms"][0]["term"] == "b"
    assert flag["records"] == ["m1-clean", "m1-b"]
    same_file = contrast("m1", (0.1, 0.2, 0.15, 0.3), clean={"scores_blake3": "f" * 64}, a={"scores_blake3": "f" * 64})
    flag = flags_of(audit(tmp_path, same_file))["substituted-reference"]
    assert flag["severity"] == "error"
    assert flag["details"]["terms"][0]["evidence"] == "same scores_blake3"


def test_unmatched_trials_error_and_unverifiable_warning(tmp_path: Path) -> None:
    rows = contrast("m1", (0.1, 0.2, 0.2, 0.3), ab={"trial_list_id": "tl-2"})
    rows += contrast("m2", (0.1, 0.2, 0.2, 0.3), b={"trial_list_id": ""})
    flags = flags_of(audit(tmp_path, rows))
    assert flags["unmatched-trials"]["severity"] == "error"
    assert flags["unmatched-trials"]["details"]["settings"] == ["E14 m1 fa=x x fb=y"]
    assert flags["trials-unverifiable"]["details"]["settings"] == ["E14 m2 fa=x x fb=y"]


def test_population_factor_is_a_warning_not_unmatched(tmp_path: Path) -> None:
    # Factor A's level selects other utterances: (clean, b) on one list, (a, ab) on another.
    rows = contrast("m1", (0.1, 0.2, 0.2, 0.3), a={"trial_list_id": "tl-2"}, ab={"trial_list_id": "tl-2"})
    flags = flags_of(audit(tmp_path, rows))
    assert "unmatched-trials" not in flags
    assert flags["population-contrast"]["severity"] == "warning"
    assert flags["population-contrast"]["details"]["settings"] == [
        {"setting": "E14 m1 fa=x x fb=y", "factor": "population-a"}
    ]


def test_budget_mismatch_across_terms_genders_and_clean_gap(tmp_path: Path) -> None:
    rows = contrast("m1", (0.1, 0.2, 0.2, 0.3), ab={"n_target": 90})
    rows += gender("m1", "clean", 0.12, 0.10) + gender("m1", "babble snr=0", 0.14, 0.10, n_m=80)
    details = flags_of(audit(tmp_path, rows))["budget-mismatch"]["details"]
    assert details["contrast_terms"][0]["counts"] == [[100, 1000], [100, 1000], [100, 1000], [90, 1000]]
    assert details["subgroup_pairs"] == [{"where": "E14 m1 babble snr=0", "F": [100, 1000], "M": [80, 1000]}]
    assert details["ratio_terms"][0]["clean"] == [[100, 1000], [100, 1000]]


def test_unpaired_gender_rows(tmp_path: Path) -> None:
    rows = [*gender("m1", "clean", 0.12, 0.10), row("lonely", 0.2, condition="babble", subgroup="gender=F")]
    flag = flags_of(audit(tmp_path, rows))["unpaired-subgroup"]
    assert flag["records"] == ["lonely"]


def test_missing_provenance_coverage_as_fractions(tmp_path: Path) -> None:
    rows = [row("r1", 0.1), row("r2", 0.1, checkpoint_blake3=""), row("r3", 0.1, checkpoint_blake3="")]
    rows.append(row("r4", 0.1, checkpoint_blake3="", run_id="", trial_list_id=""))
    flag = flags_of(audit(tmp_path, rows))["missing-provenance"]
    coverage = flag["details"]["coverage"]
    assert coverage["checkpoint_blake3"] == {"present": 1, "total": 4, "fraction": 0.25}
    assert coverage["run_id"]["fraction"] == 0.75
    assert flag["records"] == ["r2", "r3", "r4"]
    assert "checkpoint_blake3 1/4" in flag["message"]


def test_coverage_lists_missing_cells_and_unexpected_experiments(tmp_path: Path) -> None:
    rows = [row("a", 0.1, experiment="E01"), row("b", 0.1, experiment="E01", model="m2")]
    rows += [row("c", 0.1, experiment="E02"), row("d", 0.1, experiment="E03"), row("e", 0.1, experiment="vox1_O")]
    config = AuditConfig(expected_experiments=("E01", "E02"), expected_models=("m1", "m2"))
    details = flags_of(audit(tmp_path, rows, config))["coverage"]["details"]
    assert details["missing_cells"] == [["E02", "m2"]]
    assert details["unexpected_experiments"] == ["E03"]  # vox1_O is a free id, not a paper experiment


def test_two_labels_with_one_checkpoint_digest_are_flagged(tmp_path: Path) -> None:
    rows = contrast("m1", (0.1, 0.2, 0.2, 0.3)) + contrast("m2", (0.1, 0.2, 0.2, 0.3))
    rows += contrast("m3", (0.1, 0.2, 0.2, 0.3), **{t: {"checkpoint_blake3": "cd" * 32} for t in LEVELS})
    flag = flags_of(audit(tmp_path, rows))["duplicate-checkpoint"]
    assert flag["severity"] == "warning"
    assert flag["details"]["digests"] == [{"checkpoint_blake3": "ab" * 32, "labels": ["m1", "m2"]}]
    assert sorted(flag["records"]) == sorted(r["record_id"] for r in rows if r["model"] in {"m1", "m2"})


def test_evaluating_on_a_declared_training_corpus_is_flagged(tmp_path: Path) -> None:
    roster = tmp_path / "encoders.toml"
    roster.write_text('[[encoders]]\nlabel = "m1"\ntraining_corpora = ["VoxCeleb1"]\n\n[[encoders]]\nlabel = "m2"\n')
    from audit.table.reading import read_training_corpora

    config = AuditConfig(expected_experiments=("E14",), training_corpora=read_training_corpora(roster))
    rows = contrast("m1", (0.1, 0.2, 0.2, 0.3), **{t: {"corpus": "voxceleb1"} for t in LEVELS})
    rows += contrast("m2", (0.1, 0.2, 0.2, 0.3), **{t: {"corpus": "voxceleb1", "checkpoint_blake3": "cd" * 32}
                                                    for t in LEVELS})  # fmt: skip
    flags = flags_of(audit(tmp_path, rows, config))
    assert flags["training-overlap"]["details"]["encoder_corpus"] == [{"model": "m1", "corpus": "voxceleb1"}]
    assert len(flags["training-overlap"]["records"]) == 4
    assert "training-overlap" not in flags_of(audit(tmp_path, rows))  # nothing declared, nothing flagged


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[encoders]\nlabel = 'm1'\n", "expected \\[\\[encoders\\]\\] entries"),
        ("[[encoders]]\nlabel = 'm1'\ntraining_corpora = 'voxceleb1'\n", "row 1, column 'training_corpora'"),
        ("[[encoders]]\nkind = 'mfcc'\n", "row 1, column 'label'"),
        ("[[encoders\n", "not valid TOML"),
    ],
)
def test_bad_roster_for_training_corpora_is_one_line(tmp_path: Path, body: str, message: str) -> None:
    from audit.table.reading import read_training_corpora
    from schemas.errors import InputError

    roster = tmp_path / "encoders.toml"
    roster.write_text(body)
    with pytest.raises(InputError, match=message):
        read_training_corpora(roster)


def test_single_speaker_subgroup_is_flagged_from_the_enrolment_speaker_count(tmp_path: Path) -> None:
    # Hand-worked: F has 3 enrolment speakers, M one (two records of M: clean and noise); the table-wide row
    # without a subgroup has one enrolment speaker too but is no subgroup; a row without the count is not judged.
    rows = [
        row("F-clean", 0.1, subgroup="gender=F", n_speakers=4, n_enrol_speakers=3, n_test_speakers=4),
        row("M-clean", 0.1, subgroup="gender=M", n_speakers=4, n_enrol_speakers=1, n_test_speakers=4),
        row("M-noise", 0.2, subgroup="gender=M", n_speakers=4, n_enrol_speakers=1, n_test_speakers=4),
        row("all", 0.1, n_speakers=1, n_enrol_speakers=1, n_test_speakers=1),
        row("unknown", 0.1, subgroup="gender=X"),
    ]
    flag = flags_of(audit(tmp_path, rows))["single-speaker-subgroup"]
    assert flag["severity"] == "warning"
    assert flag["records"] == ["M-clean", "M-noise"]
    assert flag["details"]["cells"] == [{"experiment": "E14", "subgroup": "gender=M"}]
    assert flag["message"].startswith("2 subgroup records have one enrolment speaker")


def test_no_single_speaker_flag_without_the_counts(tmp_path: Path) -> None:
    rows = [row("F-clean", 0.1, subgroup="gender=F"), row("M-clean", 0.1, subgroup="gender=M")]
    assert "single-speaker-subgroup" not in flags_of(audit(tmp_path, rows))


def test_a_record_whose_calibrated_decisions_cost_more_than_no_decision(tmp_path: Path) -> None:
    """actDCF 1.2 is above the cost of accepting or rejecting everyone (1); exactly 1 and empty are not flagged."""
    rows = [row("r1", 0.1, act_dcf=1.2), row("r2", 0.1, act_dcf=1.0), row("r3", 0.2, act_dcf=""), row("r4", 0.1)]
    flag = flags_of(audit(tmp_path, rows))["poorly-calibrated"]
    assert (flag["severity"], flag["records"], flag["details"]) == ("warning", ["r1"], {"max_act_dcf": 1.2})
