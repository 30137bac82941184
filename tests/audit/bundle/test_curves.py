"""Per-trial curves from a bundle: DET panels per condition family (one curve per encoder at the family's hardest
condition), per encoder the histograms of the condition that moves its EER most beside its clean reference; EERs
against VoxSRC's brentq routine (an independent oracle)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.interpolate import interp1d
from scipy.optimize import brentq
from sklearn.metrics import roc_curve

from audit.bundle.curves import curves_of_bundle
from audit.bundle.verification import verify_bundle
from tests.provenance.synthetic_bundle import SyntheticBundle, build_bundle


def voxsrc_eer(scores: np.ndarray, labels: np.ndarray) -> float:
    fpr, tpr, _ = roc_curve(labels, scores)
    return float(brentq(lambda x: 1.0 - x - interp1d(fpr, tpr)(x), 0.0, 1.0))


def scored_trials(
    bundle: SyntheticBundle, results: pd.DataFrame, model: str, condition: str
) -> tuple[np.ndarray, np.ndarray]:
    """The scored trials of one record (unscored ones, NaN, left out as in the metrics): scores and labels."""
    row = results[(results["model"] == model) & (results["condition"] == condition)].iloc[0]
    scores = pd.read_parquet(bundle.root / "scores" / f"{row.record_id}.parquet")["score"].to_numpy(float)
    labels = pd.read_csv(bundle.root / "trials" / f"{row.trial_list_id}.csv")["label"].to_numpy()
    return scores[np.isfinite(scores)], labels[np.isfinite(scores)]


def test_bundle_det_panels_per_condition_family_and_histograms_of_the_condition_that_moves_most(
    tmp_path: Path,
) -> None:
    bundle = build_bundle(tmp_path)
    results = bundle.read_results()
    curves = curves_of_bundle(results, verify_bundle(results, bundle.root, bundle.public_key), ("none+none",))
    det = [c for c in curves if c["figures"] == ["det"]]
    panels = list(dict.fromkeys(c["panel"] for c in det))
    assert panels == [
        "clean",
        "noise: babble+none (hardest of 1)",
        "codec: none+opus (hardest of 1)",
        "noise x codec: babble+opus (hardest of 1)",
    ]
    assert [(c["figure"], c["series"]) for c in det] == [("E13", model) for _ in panels for model in ("m1", "m2")]
    for entry in det:
        scores, labels = scored_trials(bundle, results, entry["series"], entry["group"].split(" (E13 ")[1][:-1])
        assert entry["eer_interp"] == pytest.approx(voxsrc_eer(scores, labels), abs=1e-9)
        assert entry["det"]["p_fa"][0] == 0.0 and entry["det"]["p_miss"][-1] == 0.0
        assert "histogram" not in entry  # only what its figure draws
    histograms = [c for c in curves if c["figures"] == ["scores"]]
    clean = results[results["condition"] == "none+none"].set_index("model")["eer"]
    rise = results.assign(rise=results["eer"] - results["model"].map(clean))
    for model in ("m1", "m2"):
        most = rise[rise["model"] == model].sort_values("rise").iloc[-1]  # the oracle: largest EER rise over clean
        assert [(c["panel"], c["role"], c["series"]) for c in histograms if c["panel"] == model] == [
            (model, "reference", "none+none"),
            (model, "condition", most["condition"]),
        ]
    for entry in histograms:
        _, labels = scored_trials(bundle, results, entry["panel"], entry["series"])
        assert sum(entry["histogram"]["target"]) == int(labels.sum()) and "det" not in entry


def test_a_bundle_that_is_not_intact_gives_no_curve(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path)
    results = bundle.read_results()
    scores = next((bundle.root / "scores").glob("*.parquet"))
    scores.write_bytes(scores.read_bytes()[:-7])  # fails its digest: the bundle is not intact
    assert curves_of_bundle(results, verify_bundle(results, bundle.root, bundle.public_key), ("none+none",)) == []
