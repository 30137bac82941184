"""Write a SYNTHETIC legacy-shaped results table and its filled mapping, for `audit verify --columns`.

    python examples/make_legacy_example.py      # rewrites examples/legacy-results.csv and legacy-mapping.toml

No model was run: the EERs come from a fixed formula plus seeded noise. The table has the shape and vocabulary of
a paper's own spreadsheet rather than this project's results.csv: its own column names (``Exp``, ``EER (%)``,
``Tgt``), model spellings (``campplus``), experiment ids (``exp13_age_codec``), EERs in percent (some below 1 %),
genders spelled ``female``/``male``, condition labels such as ``age 60+ & opus 8k`` or ``babble 5dB``, and
enrolment/test emotions written ``neutral→fearful``. Its run ids say ``SYNTHETIC``. ``legacy-mapping.toml`` maps all
of that onto the audit's columns and values, so that `--claims examples/paper-claims.toml` computes every claim:

    audit verify examples/legacy-results.csv --columns examples/legacy-mapping.toml \\
        --claims examples/paper-claims.toml --out out/legacy-report
"""

from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path

import numpy as np

from provenance.atomic import atomic_write_text

HERE = Path(__file__).parent
HEADER = ("Run", "Exp", "Model", "Type", "Dataset", "Condition", "Gender", "EER (%)", "Tgt", "Non-tgt", "ckpt hash")
# Legacy spelling -> the paper's model name, with the model's family and a base EER (percent).
MODELS = {
    "campplus": ("CAM++", "speaker", 0.86),
    "ecapa_tdnn": ("ECAPA-TDNN", "speaker", 0.95),
    "ecapa_tdnn_large": ("ECAPA-TDNN-Large", "speaker", 0.9),
    "rawnet3": ("RawNet3", "speaker", 1.3),
    "wavlm_base_plus": ("WavLM-Base+", "SSL", 9.0),
    "hubert_base": ("HuBERT-Base", "SSL", 11.0),
    "xlsr_300m": ("wav2vec2-XLSR", "SSL", 13.0),
}
EXPERIMENTS = {
    "exp01_emotion": "E01",
    "exp13_age_codec": "E13",
    "exp14_emotion_noise": "E14",
    "exp16_gender_noise": "E16",
    "exp17_drift_codec": "E17",
}
EMOTION_CELLS = ("neutral→neutral", "neutral→fearful", "fearful→fearful", "neutral→angry", "angry→angry")
EMOTION_PENALTY = {"neutral→neutral": 0.0, "neutral→fearful": 9.0, "fearful→fearful": 5.0}
# Per contrast experiment: dataset, (factor A, legacy level, audit level), (factor B, legacy, audit) pairs.
CONTRAST_DESIGNS = {
    "exp13_age_codec": ("CommonVoice", ("age", "age 60+", "60+", 1.5), [("codec", "opus 8k", "opus-8k", 1.0)]),
    "exp14_emotion_noise": (
        "RAVDESS",
        ("emotion", "angry", "angry", 3.0),
        [("noise", "babble 5dB", "babble-5", 6.0), ("noise", "babble 0dB", "babble-0", 10.0)],
    ),
    "exp17_drift_codec": ("VoxCeleb1", ("drift", "2y drift", "2y", 1.0), [("codec", "gsm", "gsm", 2.0)]),
}
SNRS = (10, 5, 0)
N_TARGET, N_NONTARGET = 2000, 20000


def _rows() -> list[dict[str, str]]:
    rng = np.random.default_rng(20240611)
    rows: list[dict[str, str]] = []

    def add(experiment: str, model: str, dataset: str, condition: str, gender: str, eer: float) -> None:
        family = MODELS[model][1]
        eer = max(0.05, eer + rng.normal(0, 0.15))
        rows.append(
            {
                "Run": f"SYNTHETIC-{len(rows) + 1:04d}",
                "Exp": experiment,
                "Model": model,
                "Type": family,
                "Dataset": dataset,
                "Condition": condition,
                "Gender": gender,
                "EER (%)": f"{eer:.2f}",
                "Tgt": str(N_TARGET),
                "Non-tgt": str(N_NONTARGET),
                "ckpt hash": hashlib.sha256(model.encode()).hexdigest() if family == "speaker" else "",
            }
        )

    for model, (_, family, base) in MODELS.items():
        scale = 1.0 if family == "speaker" else 2.0
        for cell in EMOTION_CELLS:
            add("exp01_emotion", model, "RAVDESS", cell, "", base + scale * EMOTION_PENALTY.get(cell, 7.0))
        for experiment, (dataset, factor_a, levels_b) in CONTRAST_DESIGNS.items():
            _, level_a, _, cost_a = factor_a
            add(experiment, model, dataset, "clean", "", base)
            add(experiment, model, dataset, level_a, "", base + scale * cost_a)
            for _, level_b, _, cost_b in levels_b:
                synergy = 0.3 if family == "speaker" else -2.0  # SSL models saturate: negative interaction
                add(experiment, model, dataset, level_b, "", base + scale * cost_b)
                add(
                    experiment, model, dataset, f"{level_a} & {level_b}", "", base + scale * (cost_a + cost_b + synergy)
                )
        for snr in (None, *SNRS):
            condition = "clean" if snr is None else f"babble {snr}dB"
            penalty = 0.0 if snr is None else (12 - snr) * 0.4 * scale
            add("exp16_gender_noise", model, "VoxCeleb1", condition, "female", base + 0.3 + penalty * 1.1)
            add("exp16_gender_noise", model, "VoxCeleb1", condition, "male", base + penalty)
    return rows


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _conditions() -> dict[str, dict[str, str]]:
    """Every condition label with the audit's columns it implies, keyed by its TOML table name: emotion cells in
    every experiment, the contrast labels (``clean`` included, whose factors differ) per experiment."""
    implied: dict[str, dict[str, str]] = {}
    for cell in EMOTION_CELLS:
        enrol, test = cell.split("→")
        implied[_quote(cell)] = {"enrol_condition": enrol, "test_condition": test}
    for experiment, (_, (factor_a, legacy_a, level_a, _), levels_b) in CONTRAST_DESIGNS.items():
        for factor_b, legacy_b, level_b, _ in levels_b:
            for label, a, b in (
                ("clean", "none", "none"),
                (legacy_a, level_a, "none"),
                (legacy_b, "none", level_b),
                (f"{legacy_a} & {legacy_b}", level_a, level_b),
            ):
                name = f"{EXPERIMENTS[experiment]}.{_quote(label)}"
                implied[name] = {"factor_a": factor_a, "level_a": a, "factor_b": factor_b, "level_b": b}
    return implied


def mapping_text() -> str:
    """The filled mapping file for the legacy table (TOML)."""
    lines = [
        "# Mapping of the SYNTHETIC legacy table examples/legacy-results.csv (written by make_legacy_example.py).",
        "# EERs are percent; the largest is above 1, so the scale would be inferred, but it is declared anyway.",
        'eer_scale = "percent"',
        "",
        "[columns]",
        '"Run" = "record_id"',
        '"Exp" = "experiment"',
        '"Model" = "model"',
        '"Type" = "model_family"',
        '"Dataset" = "corpus"',
        '"Condition" = "condition"',
        '"Gender" = "subgroup"',
        '"EER (%)" = "eer"',
        '"Tgt" = "n_target"',
        '"Non-tgt" = "n_nontarget"',
        '"ckpt hash" = "checkpoint_blake3"',
        "",
        "[experiments]",
        *(f"{_quote(legacy)} = {_quote(audit)}" for legacy, audit in EXPERIMENTS.items()),
        "",
        "[values.model]",
        *(f"{_quote(legacy)} = {_quote(name)}" for legacy, (name, _, _) in MODELS.items()),
        "",
        "[values.model_family]",
        '"SSL" = "ssl"',
        "",
        "[values.subgroup]",
        '"female" = "gender=F"',
        '"male" = "gender=M"',
        "",
        "# Gender-gap conditions: 'babble 5dB' becomes 'babble_5dB', whose SNR the audit reads.",
        "[snr]",
        "pattern = '^(?P<noise>[a-z]+) (?P<snr>-?\\d+)dB$'",
    ]
    for name, implied in _conditions().items():
        lines += ["", f"[conditions.{name}]", *(f"{key} = {_quote(value)}" for key, value in implied.items())]
    return "\n".join(lines) + "\n"


def table_text() -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=HEADER, lineterminator="\n")
    writer.writeheader()
    writer.writerows(_rows())
    return buffer.getvalue()


def main() -> None:
    atomic_write_text(HERE / "legacy-results.csv", table_text())
    atomic_write_text(HERE / "legacy-mapping.toml", mapping_text())


if __name__ == "__main__":
    main()
