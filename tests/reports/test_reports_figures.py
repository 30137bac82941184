"""Figures: drawn from the audit's row shapes, skipped (with the reason) when their data is absent."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from PIL import Image

from reports.figures import coupling_lines, gap_vs_snr, ie_vs_prediction


def _ink(png: bytes) -> float:
    """Fraction of pixels that are not white: an empty plot has only axes and labels."""
    with Image.open(io.BytesIO(png)) as image:
        pixels = np.asarray(image.convert("L"))
    return float((pixels < 250).mean())


def _audit_gap_rows() -> list[dict[str, Any]]:
    """Rows as ``audit.aggregates.gap_vs_snr`` writes them: two experiments, a clean mean beside each."""
    rows = []
    for experiment in ("E16", "E17"):
        for noise in ("babble", "music"):
            for snr in (0.0, 5.0, 10.0):
                rows.append(
                    {"experiment": experiment, "corpus": "EARS", "noise": noise, "snr_db": snr,
                     "condition": f"{noise}_{snr}dB", "n_models": 12, "gap_abs_mean": 0.01 + snr / 1000,
                     "gap_abs_sd": 0.003, "clean_gap_abs_mean": 0.0086}
                )  # fmt: skip
    return rows


def test_gap_figure_reads_the_audit_row_shape() -> None:
    outcome = gap_vs_snr({"aggregates": {"gap_vs_snr": _audit_gap_rows()}})
    assert outcome.png is not None
    assert outcome.skipped_because == ""
    assert _ink(outcome.png) > 0.02


def test_gap_figure_is_skipped_when_no_gap_has_a_value() -> None:
    rows = [{"noise": "babble", "snr_db": 5.0, "gap_abs_mean": None, "gap_abs_sd": None}]
    reports: list[dict[str, Any]] = [
        {},
        {"aggregates": {"gap_vs_snr": []}},
        {"aggregates": {"gap_vs_snr": rows}},
    ]
    for report in reports:
        outcome = gap_vs_snr(report)
        assert outcome.png is None
        assert outcome.skipped_because == "no gender gap with an SNR in the report"


def test_ie_figure_handles_many_experiments_and_mathtext_labels() -> None:
    contrasts = [
        {
            "experiment": f"E{index:02d} $x",
            "model_family": family,
            "prediction": index / 40,
            "ie": index / 100,
        }
        for index in range(1, 18)
        for family in ("speaker", "ssl")
    ]
    outcome = ie_vs_prediction({"aggregates": {"contrasts": contrasts}})
    assert outcome.png is not None
    assert _ink(outcome.png) > 0.02


def test_ie_figure_changes_with_its_data_and_skips_without_it() -> None:
    first = ie_vs_prediction({"aggregates": {"contrasts": [{"experiment": "E14", "prediction": 0.4, "ie": 0.1}]}})
    second = ie_vs_prediction({"aggregates": {"contrasts": [{"experiment": "E14", "prediction": 0.4, "ie": -0.1}]}})
    assert first.png is not None and second.png is not None
    assert first.png != second.png
    nan_only = {"aggregates": {"contrasts": [{"experiment": "E14", "prediction": float("nan"), "ie": 0.1}]}}
    assert ie_vs_prediction(nan_only).png is None


def test_coupling_note_lists_every_expected_correlation() -> None:
    coupling = {"r_observed": -0.706, "r_expected_additive": -0.52, "r_expected_bootstrap": None, "n": 9}
    assert coupling_lines(coupling) == [
        "observed r = -0.706",
        "expected r (additive) = -0.52",
        "expected r (bootstrap) = n/a",
    ]
    assert coupling_lines({}) == ["observed r: not reported", "expected r under additivity: not reported"]
