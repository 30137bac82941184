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

    def add(
        experiment: str, model: str, corpus: str, condition: str, eer: float | str, **extra: object
    ) -> None:
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
        for condition, (eer_f, eer_m) in zip(
            ("clean", "babble snr=10", "babble snr=0"), by_condition, strict=True
        ):
            add(
                "E16", model, "VoxCeleb1", condition, eer_f, subgroup="gender=F", trial_list_id="syn-tl-e16-f"
            )
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
    return out


def results_csv() -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows())
    return buffer.getvalue()


def main() -> None:
    atomic_write_text(HERE / "results.csv", results_csv())
    print(f"wrote {HERE / 'results.csv'} ({len(rows())} synthetic rows)")


if __name__ == "__main__":
    main()
