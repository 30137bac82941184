"""Write the example inputs of `audit verify`: a SYNTHETIC results table, its claims, and the paper's claims.

    python examples/make_examples.py            # rewrites examples/results.csv, claims.toml,
    paper-claims.toml

results.csv is made up (no model was run): four encoder labels, a few experiments, numbers chosen by hand so
that every flag a results table alone can show is raised at least once (see README.md for which rows do what).
Its record ids start with ``syn-`` and its run id is ``synthetic-example`` so it can never pass for real data.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from provenance.atomic import atomic_write_text
from provenance.digests import bytes_digest

HERE = Path(__file__).parent
COLUMNS = (
    "record_id",
    "experiment",
    "model",
    "model_family",
    "corpus",
    "condition",
    "factor_a",
    "level_a",
    "factor_b",
    "level_b",
    "enrol_condition",
    "test_condition",
    "subgroup",
    "eer",
    "n_target",
    "n_nontarget",
    "eer_method",
    "checkpoint_blake3",
    "trial_list_id",
    "run_id",
)
MODELS = {"spk-a": "speaker", "spk-b": "speaker", "ssl-a": "ssl", "ssl-b": "ssl"}
RUN_ID = "synthetic-example"


def _checkpoint(model: str) -> str:
    """A made-up digest, given to spk-a only, so that provenance coverage is partial."""
    return bytes_digest(f"synthetic checkpoint {model}".encode()).blake3 if model == "spk-a" else ""


def rows() -> list[dict[str, object]]:
    """The synthetic records (see README.md for the flag each block raises)."""
    out: list[dict[str, object]] = []

    def add(experiment: str, model: str, corpus: str, condition: str, eer: float | str, **extra: object) -> None:
        row: dict[str, object] = dict.fromkeys(COLUMNS, "")
        row.update(
            record_id=f"syn-{experiment}-{model}-{len(out) + 1:03d}",
            experiment=experiment,
            model=model,
            model_family=MODELS[model],
            corpus=corpus,
            condition=condition,
            eer=eer,
            n_target=200,
            n_nontarget=2000,
            eer_method="legacy",
            checkpoint_blake3=_checkpoint(model),
            run_id=RUN_ID,
        )
        row.update(extra)
        out.append(row)

    # E01 emotion: enrolment x test matrix (neutral/neutral is the ratio reference).
    e01 = {
        ("neutral", "neutral"): (0.08, 0.09, 0.10, 0.11),
        ("neutral", "fearful"): (0.20, 0.22, 0.30, 0.32),
        ("fearful", "fearful"): (0.15, 0.17, 0.21, 0.23),
    }
    for (enrol, test), eers in e01.items():
        for model, eer in zip(MODELS, eers, strict=True):
            add(
                "E01",
                model,
                "RAVDESS",
                f"{enrol}->{test}",
                eer,
                enrol_condition=enrol,
                test_condition=test,
                trial_list_id="syn-tl-e01",
            )

    # E02: a percent-scale EER (spk-a) and a schema failure (spk-b: n_target 0).
    add("E02", "spk-a", "TORGO", "dysarthric", 12.5)
    add("E02", "spk-b", "TORGO", "dysarthric", 0.21, n_target=0)
    add("E02", "ssl-a", "TORGO", "dysarthric", 0.30)
    add("E02", "ssl-b", "TORGO", "dysarthric", 0.35)

    # E13 age x codec, no trial list ids (trials-unverifiable); spk-b's codec marginal equals its reference
    # (substituted-reference); ssl-a lacks the age marginal (missing-term); ssl-b's joint term has fewer
    # target trials (budget-mismatch).
    e13: dict[str, tuple[float | None, ...]] = {
        "spk-a": (0.04, 0.07, 0.06, 0.10),
        "spk-b": (0.05, 0.08, 0.05, 0.09),
        "ssl-a": (0.15, None, 0.20, 0.30),
        "ssl-b": (0.16, 0.21, 0.22, 0.29),
    }
    e13_levels = (("none", "none"), ("60+", "none"), ("none", "opus-8k"), ("60+", "opus-8k"))
    for model, e13_eers in e13.items():
        for (level_a, level_b), term_eer in zip(e13_levels, e13_eers, strict=True):
            if term_eer is None:
                continue
            joint = level_a != "none" and level_b != "none"
            add(
                "E13",
                model,
                "CommonVoice",
                f"age={level_a} codec={level_b}",
                term_eer,
                factor_a="age",
                level_a=level_a,
                factor_b="codec",
                level_b=level_b,
                n_target=150 if model == "ssl-b" and joint else 200,
            )

    # E14 emotion x noise at two SNRs: SSL terms near chance (near-chance-prediction, eer-above-chance), four
    # contrasts per family (coupled-correlation); ssl-b's joint term at 0 dB used another trial list.
    e14 = {
        "spk-a": (0.05, 0.10, 0.12, 0.20, 0.18, 0.27),
        "spk-b": (0.06, 0.11, 0.13, 0.22, 0.19, 0.28),
        "ssl-a": (0.20, 0.32, 0.35, 0.45, 0.42, 0.52),
        "ssl-b": (0.22, 0.30, 0.36, 0.44, 0.40, 0.47),
    }
    levels = (
        ("none", "none"),
        ("angry", "none"),
        ("none", "babble snr=5"),
        ("none", "babble snr=0"),
        ("angry", "babble snr=5"),
        ("angry", "babble snr=0"),
    )
    for model, e14_eers in e14.items():
        for (level_a, level_b), eer in zip(levels, e14_eers, strict=True):
            other = model == "ssl-b" and (level_a, level_b) == ("angry", "babble snr=0")
            add(
                "E14",
                model,
                "RAVDESS",
                f"emotion={level_a} noise={level_b}",
                eer,
                factor_a="emotion",
                level_a=level_a,
                factor_b="noise",
                level_b=level_b,
                trial_list_id="syn-tl-e14-other" if other else "syn-tl-e14",
            )

    # E15 pathology x codec for spk-a: the reference comes from VoxCeleb1 (cross-corpus-reference).
    for (level_a, level_b), corpus, eer in (
        (("none", "none"), "VoxCeleb1", 0.03),
        (("dysarthric", "none"), "TORGO", 0.2),
        (("none", "amr-nb"), "TORGO", 0.06),
        (("dysarthric", "amr-nb"), "TORGO", 0.25),
    ):
        add(
            "E15",
            "spk-a",
            corpus,
            f"pathology={level_a} codec={level_b}",
            eer,
            factor_a="pathology",
            level_a=level_a,
            factor_b="codec",
            level_b=level_b,
        )

    # E16 gender gaps under babble noise: spk-b's clean gap is 0.0004 (unstable-ratio); ssl-b's male 0 dB row
    # has 180 target trials (budget-mismatch between F and M).
    e16 = {
        "spk-a": ((0.050, 0.040), (0.070, 0.050), (0.120, 0.090)),
        "spk-b": ((0.0502, 0.0498), (0.080, 0.060), (0.100, 0.110)),
        "ssl-a": ((0.20, 0.18), (0.25, 0.22), (0.30, 0.26)),
        "ssl-b": ((0.21, 0.20), (0.26, 0.25), (0.33, 0.30)),
    }
    for model, by_condition in e16.items():
        for condition, (eer_f, eer_m) in zip(("clean", "babble snr=10", "babble snr=0"), by_condition, strict=True):
            add("E16", model, "VoxCeleb1", condition, eer_f, subgroup="gender=F", trial_list_id="syn-tl-e16-f")
            short = model == "ssl-b" and condition == "babble snr=0"
            add(
                "E16",
                model,
                "VoxCeleb1",
                condition,
                eer_m,
                subgroup="gender=M",
                trial_list_id="syn-tl-e16-m",
                n_target=180 if short else 200,
            )
    # E16: a female row at 5 dB without its male row (unpaired-subgroup).
    add("E16", "ssl-a", "VoxCeleb1", "babble snr=5", 0.09, subgroup="gender=F", trial_list_id="syn-tl-e16-f")

    # E17 temporal drift x codec for ssl-b: its drift marginal appears twice (ambiguous-term).
    e17 = (("none", "none", 0.05), ("2y", "none", 0.07), ("2y", "none", 0.08), ("none", "gsm", 0.09),
           ("2y", "gsm", 0.12))  # fmt: skip
    for level_a, level_b, eer in e17:
        condition = f"drift={level_a} codec={level_b}"
        add("E17", "ssl-b", "EARS", condition, eer, factor_a="drift", level_a=level_a, factor_b="codec",
            level_b=level_b)  # fmt: skip
    return out


CLAIMS_TOML = """\
# Claims about the SYNTHETIC examples/results.csv, written by examples/make_examples.py.
# They show the three outcomes of `audit verify --claims`: reproduced, not reproduced and not computable.
# The expected values were worked out by hand from the numbers in make_examples.py.

[[claim]]
id = "syn-e01-mean"
description = "E01 mean EER over its 12 records: (0.38 + 1.04 + 0.76) / 12"
table = "per_experiment"
field = "eer_mean"
where = { experiment = "E01" }
published = 0.1817
tolerance = 0.0001

[[claim]]
id = "syn-spk-a-macro"
description = "spk-a macro EER: mean of E01 0.1433, E13 0.0675, E14 0.1533, E15 0.135, E16 0.07"
table = "per_encoder"
field = "macro_eer"
where = { model = "spk-a" }
published = 0.1138
tolerance = 0.0001

[[claim]]
id = "syn-e14-ssl-prediction-max"
description = "Largest E14 SSL additive prediction: ssl-a at 0 dB, 0.32 + 0.45 - 0.20"
table = "contrast_summary"
field = "prediction_max"
where = { experiment = "E14", model_family = "ssl" }
published = 0.57
tolerance = 0.001

[[claim]]
id = "syn-e14-speaker-contrast-mean"
description = "E14 speaker mean contrast, claimed at the paper's +0.0088 (the table gives +0.0125)"
table = "contrast_summary"
field = "ie_mean"
where = { experiment = "E14", model_family = "speaker" }
published = 0.0088
tolerance = 0.0005

[[claim]]
id = "syn-e16-clean-gap"
description = "E16 clean mean absolute gender gap: (0.01 + 0.0004 + 0.02 + 0.01) / 4"
table = "gender_gaps"
field = "gap_abs_mean"
where = { experiment = "E16", condition = "clean" }
published = 0.0101
tolerance = 0.0001

[[claim]]
id = "syn-e16-ratio-range"
description = "E16 signed gap ratio range: spk-b -0.01/0.0004 to 0.02/0.0004"
table = "gap_ratios"
field = "ratio"
where = { experiment = "E16" }
published = [-25.0, 50.0]
tolerance = 0.01

[[claim]]
id = "syn-checkpoint-coverage"
description = "Rows with a checkpoint digest (spk-a's 24 rows)"
table = "table"
field = "checkpoint_blake3"
published = 24
tolerance = 0

[[claim]]
id = "syn-e17-contrast-mean"
description = "E17 speaker mean contrast: the table's only E17 setting (ssl-b) has two rows for one term"
table = "contrast_summary"
field = "ie_mean"
where = { experiment = "E17", model_family = "speaker" }
published = 0.0024
tolerance = 0.00005
"""

PAPER_CLAIMS_TOML = """\
# The published figures of the InterBias-SV paper (shared/paper-summary.txt), to check against the legacy
# results table with `audit verify LEGACY.csv --columns legacy-columns.toml --claims paper-claims.toml`.
# Tolerances are half a unit of the last published digit. Model labels and model_family values must match
# the table's spelling: edit the `where` selectors if the legacy table spells them otherwise.

[[claim]]
id = "paper-records"
description = "Scored records in the submission (section 4)"
table = "table"
field = "n_records"
published = 4068
tolerance = 0

[[claim]]
id = "paper-trials"
description = "Trial evaluations in total, n_target + n_nontarget over records (section 4)"
table = "table"
field = "n_trials"
published = 11975026
tolerance = 0

[[claim]]
id = "paper-checkpoint-coverage"
description = "Records with a checkpoint hash: 1,878 of 4,068 (section 7)"
table = "table"
field = "checkpoint_blake3"
published = 1878
tolerance = 0

[[claim]]
id = "paper-macro-campp"
description = "CAM++ macro EER (section 5, Table 7)"
table = "per_encoder"
field = "macro_eer"
where = { model = "CAM++" }
published = 0.098
tolerance = 0.0005

[[claim]]
id = "paper-macro-ecapa"
description = "ECAPA-TDNN macro EER (section 5, Table 7)"
table = "per_encoder"
field = "macro_eer"
where = { model = "ECAPA-TDNN" }
published = 0.101
tolerance = 0.0005

[[claim]]
id = "paper-macro-ecapa-large"
description = "ECAPA-TDNN-Large macro EER (section 5, Table 7)"
table = "per_encoder"
field = "macro_eer"
where = { model = "ECAPA-TDNN-Large" }
published = 0.102
tolerance = 0.0005

[[claim]]
id = "paper-e01-neutral-neutral"
description = "RAVDESS neutral/neutral mean EER (section 5, Table 8)"
table = "emotion_matrix"
field = "eer_mean"
where = { enrol = "neutral", test = "neutral" }
published = 0.083
tolerance = 0.0005

[[claim]]
id = "paper-e01-neutral-fearful"
description = "RAVDESS neutral->fearful mean EER (section 5, Table 8)"
table = "emotion_matrix"
field = "eer_mean"
where = { enrol = "neutral", test = "fearful" }
published = 0.256
tolerance = 0.0005

[[claim]]
id = "paper-e01-fearful-fearful"
description = "RAVDESS matched fearful mean EER (section 5, Table 8)"
table = "emotion_matrix"
field = "eer_mean"
where = { enrol = "fearful", test = "fearful" }
published = 0.191
tolerance = 0.0005

[[claim]]
id = "paper-e13-speaker-contrast"
description = "E13 mean contrast, speaker-trained labels (Table 2)"
table = "contrast_summary"
field = "ie_mean"
where = { experiment = "E13", model_family = "speaker" }
published = 0.0026
tolerance = 0.00005

[[claim]]
id = "paper-e14-speaker-contrast"
description = "E14 mean contrast, speaker-trained labels (Table 2)"
table = "contrast_summary"
field = "ie_mean"
where = { experiment = "E14", model_family = "speaker" }
published = 0.0088
tolerance = 0.00005

[[claim]]
id = "paper-e17-speaker-contrast"
description = "E17 mean contrast, speaker-trained labels (Table 2)"
table = "contrast_summary"
field = "ie_mean"
where = { experiment = "E17", model_family = "speaker" }
published = 0.0024
tolerance = 0.00005

[[claim]]
id = "paper-speaker-contrast-sd-range"
description = "SDs of the E13, E14 and E17 speaker-label contrasts: 0.009 to 0.030 (Table 2)"
table = "contrast_summary"
field = "ie_sd"
where = { experiment = ["E13", "E14", "E17"], model_family = "speaker" }
published = [0.009, 0.030]
tolerance = 0.0005

[[claim]]
id = "paper-e14-ssl-prediction-mean"
description = "E14 mean-pooled SSL labels: mean additive prediction (Table 3)"
table = "contrast_summary"
field = "prediction_mean"
where = { experiment = "E14", model_family = "ssl" }
published = 0.438
tolerance = 0.0005

[[claim]]
id = "paper-e14-ssl-prediction-max"
description = "E14 mean-pooled SSL labels: maximum additive prediction (Table 3)"
table = "contrast_summary"
field = "prediction_max"
where = { experiment = "E14", model_family = "ssl" }
published = 0.670
tolerance = 0.0005

[[claim]]
id = "paper-e14-ssl-correlation"
description = "E14 SSL correlation of IE with the prediction (Figure 3; coupled, see the flag)"
table = "ie_vs_prediction.by_family"
field = "r_observed"
where = { experiment = "E14", model_family = "ssl" }
published = -0.706
tolerance = 0.0005

[[claim]]
id = "paper-e14-ssl-model-prediction-range"
description = "E14: per-SSL-label mean predictions range from 0.397 to 0.457 (section 5)"
table = "contrast_by_model"
field = "prediction_mean"
where = { experiment = "E14", model_family = "ssl" }
published = [0.397, 0.457]
tolerance = 0.0005

[[claim]]
id = "paper-e14-ssl-model-observed-range"
description = "E14: per-SSL-label observed joint EER means range from 0.350 to 0.414 (section 5)"
table = "contrast_by_model"
field = "eer_ab_mean"
where = { experiment = "E14", model_family = "ssl" }
published = [0.350, 0.414]
tolerance = 0.0005

[[claim]]
id = "paper-e14-ssl-model-contrast-range"
description = "E14: per-SSL-label mean contrasts range from -0.073 to -0.028 (section 5, Table 11)"
table = "contrast_by_model"
field = "ie_mean"
where = { experiment = "E14", model_family = "ssl" }
published = [-0.073, -0.028]
tolerance = 0.0005

[[claim]]
id = "paper-e14-rawnet3-contrast"
description = "E14 RawNet3 mean contrast, the one negative speaker-trained label (Table 11)"
table = "contrast_by_model"
field = "ie_mean"
where = { experiment = "E14", model = "RawNet3" }
published = -0.003
tolerance = 0.0005

[[claim]]
id = "paper-e16-clean-gap"
description = "E16 clean mean absolute gender EER gap (section 5, Table 9)"
table = "gender_gaps"
field = "gap_abs_mean"
where = { experiment = "E16", clean = true }
published = 0.0086
tolerance = 0.00005

[[claim]]
id = "paper-e16-ratio-range"
description = "E16 noisy signed-gap ratios range from -157.6 to +193.7 (section 5, Table 10)"
table = "gap_ratios"
field = "ratio"
where = { experiment = "E16" }
published = [-157.6, 193.7]
tolerance = 0.05
"""

LEGACY_COLUMNS_TOML = """\
# Column map for the legacy InterBias-SV results CSV: `audit verify LEGACY.csv --columns legacy-columns.toml`.
# TEMPLATE, to be completed once the legacy column names are known: each line is
#   "legacy column name" = "results.csv column name"
# for every legacy column whose name differs; columns already named as in results.csv need no line.
# Every name on the left must exist in the legacy header and every name on the right must be a results.csv
# column (see schemas/results.py), or `audit verify` stops with exit 2 naming the problem.
# A mapping may also rewrite values: eer_scale = "fraction" | "percent", [experiments], [values.<column>],
# [conditions."label"] and [snr] (see audit/table/legacy.py, and legacy-mapping.toml for a filled example).

[columns]
# "Experiment" = "experiment"
# "Model" = "model"
# "Dataset" = "corpus"
# "Condition" = "condition"
# "EER" = "eer"
# "n_target_trials" = "n_target"
# "n_nontarget_trials" = "n_nontarget"
# "checkpoint_hash" = "checkpoint_blake3"
"""

FILES = {
    "claims.toml": CLAIMS_TOML,
    "paper-claims.toml": PAPER_CLAIMS_TOML,
    "legacy-columns.toml": LEGACY_COLUMNS_TOML,
}


def results_csv() -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows())
    return buffer.getvalue()


def main() -> None:
    atomic_write_text(HERE / "results.csv", results_csv())
    print(f"wrote {HERE / 'results.csv'} ({len(rows())} synthetic rows)")
    for name, text in FILES.items():
        atomic_write_text(HERE / name, text)
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main()
