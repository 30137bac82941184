"""Hand-built report dicts shaped like the output of ``audit verify``, shared by the report tests."""

from __future__ import annotations

from typing import Any

HOSTILE = "<script>alert(1)</script>"


def full_report() -> dict[str, Any]:
    """Every documented key filled, with hostile labels in places an input file controls."""
    return {
        "tool": {"name": "interbias-sv", "version": "0.1.0"},
        "source": {"path": f"legacy/{HOSTILE}.csv", "sha256": "a" * 64, "blake3": "b" * 64, "n_rows": 7},
        "verdict": "fail",
        "cause": {
            "flag": "eer-above-chance",
            "message": "EERs above 0.5 | are kept as measured\nnever clipped",
            "cases": ["row 4, column eer: 0.6123"],
            "n_cases": 1,
            "other_errors": [],
        },
        "config": {"near_chance_eer": 0.45, "ratio": {"min_denominator": 0.005}},
        "flags": [
            {
                "id": "eer-above-chance",
                "severity": "error",
                "records": [f"rec-{i:03d}" for i in range(25)],
                "message": "EERs above 0.5 | are kept as measured\nnever clipped",
                "details": {"max_eer": 0.6123, "cases": [{"row": 4, "column": "eer", "value": 0.6123}]},
            },
            {
                "id": "missing-provenance",
                "severity": "warning",
                "records": ["rec-001"],
                "message": "rows without checkpoint digest",
                "details": {"coverage": {"checkpoint_blake3": {"present": 3, "total": 7, "fraction": 3 / 7}}},
            },
            {
                "id": "coupled-correlation",
                "severity": "info",
                "records": [],
                "message": "IE contains -prediction",
            },
        ],
        "aggregates": {
            "per_experiment": [
                {"experiment": "E01", "n_records": 3, "eer_mean": 0.123456, "eer_sd": 0.01},
                {"experiment": "E13", "n_records": 4, "eer_mean": 0.25, "eer_sd": float("nan")},
            ],
            "per_encoder": [{"model": HOSTILE, "macro_eer": 0.2, "n_experiments": 2}],
            "emotion_matrix": [{"enrol": "neutral", "test": "angry", "eer_mean": 0.3, "ratio": 1.5}],
            "contrasts": [
                {
                    "experiment": "E13",
                    "model": "wavlm",
                    "corpus": "RAVDESS",
                    "subgroup": None,
                    "factor_a": "noise",
                    "level_a": "babble",
                    "factor_b": "codec",
                    "level_b": "opus",
                    "eer_clean": 0.1,
                    "eer_a": 0.2,
                    "eer_b": 0.3,
                    "eer_ab": 0.45,
                    "prediction": 0.4,
                    "ie": 0.05,
                },
                {
                    "experiment": "E14",
                    "model": "hubert",
                    "corpus": "EARS",
                    "subgroup": "gender=F",
                    "factor_a": "noise",
                    "level_a": "white",
                    "factor_b": "emotion",
                    "level_b": "sad",
                    "eer_clean": 0.2,
                    "eer_a": 0.4,
                    "eer_b": 0.45,
                    "eer_ab": 0.5,
                    "prediction": 0.65,
                    "ie": -0.15,
                },
            ],
            "contrast_summary": [
                {
                    "experiment": "E14",
                    "model_family": "ssl",
                    "n": 2,
                    "ie_mean": -0.05,
                    "ie_sd": 0.1,
                    "prediction_mean": 0.525,
                    "prediction_max": 0.65,
                },
            ],
            "ie_vs_prediction": {"n": 2, "r_observed": -0.706, "r_expected_additive": -0.52},
            "gap_vs_snr": [
                {"noise": "babble", "snr_db": 0.0, "gap_mean": 0.02, "gap_sd": 0.01, "n": 12},
                {"noise": "babble", "snr_db": 10.0, "gap_mean": 0.015, "gap_sd": 0.005, "n": 12},
                {"noise": "music", "snr_db": 5.0, "gap_mean": 0.03, "gap_sd": 0.02, "n": 12},
                {"noise": "clean", "snr_db": None, "gap_mean": 0.0086, "gap_sd": 0.004, "n": 12},
            ],
        },
        "claims": [
            {
                "id": "table7-wavlm",
                "description": "macro EER of wavlm",
                "published": 0.2,
                "recomputed": 0.2001,
                "tolerance": 0.001,
                "status": "reproduced",
                "reason": "",
            },
            {
                "id": "e14-r",
                "description": "E14 correlation",
                "published": -0.706,
                "recomputed": -0.5,
                "tolerance": 0.01,
                "status": "not reproduced",
                "reason": f"differs by 0.206 {HOSTILE}",
            },
        ],
        "sections": [
            {
                "id": "bundle-signature",
                "title": "Bundle signature",
                "status": "pass",
                "lines": ["signed with key id 1234", "- starts like a list item"],
                "table": None,
            },
            {
                "id": "bundle-coverage",
                "title": "Provenance coverage of the results rows",
                "status": "fail",
                "lines": ["Rows with a verified checkpoint digest: 3/7 (42.9%)."],
                "table": [{"binding": "a verified checkpoint digest", "rows": 3, "fraction": 3 / 7, "audited_rows": 3}],
            },
            {
                "id": "bootstrap",
                "title": "Speaker-cluster bootstrap",
                "status": "info",
                "lines": [],
                "table": {
                    "columns": ["contrast", "ci_low", "ci_high"],
                    "rows": [
                        {"contrast": HOSTILE, "ci_low": -0.01, "ci_high": 0.02},
                        ["E13/wavlm", -0.03, 0.04],
                    ],
                },
            },
        ],
    }


def minimal_report() -> dict[str, Any]:
    """The least a report can hold: no flags, no aggregates, no figures' data."""
    return {"verdict": "pass"}
