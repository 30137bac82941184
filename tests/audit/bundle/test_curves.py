"""Per-trial curves from a bundle: one DET curve per encoder on its clean record, histograms per condition, EERs
against VoxSRC's brentq routine (an independent oracle)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.interpolate import interp1d
from scipy.optimize import brentq
from sklearn.metrics import roc_curve

from audit.bundle.curves import curves_of_bundle
from audit.bundle.verification import verify_bundle

sys.path.insert(0, str(Path(__file__).parents[2] / "provenance"))  # the shared bundle factory
from synthetic_bundle import build_bundle


def voxsrc_eer(scores: np.ndarray, labels: np.ndarray) -> float:
    fpr, tpr, _ = roc_curve(labels, scores)
    return float(brentq(lambda x: 1.0 - x - interp1d(fpr, tpr)(x), 0.0, 1.0))


def test_bundle_curves_per_encoder_and_per_condition(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path)
    results = bundle.read_results()
    curves = curves_of_bundle(results, verify_bundle(results, bundle.root, bundle.public_key), ("none+none",))
    encoders = [c for c in curves if c["grouping"] == "encoder"]
    assert [c["group"] for c in encoders] == ["m1 (E13 none+none)", "m2 (E13 none+none)"]
    assert all(c["figures"] == ["det"] for c in encoders)
    for entry, row in zip(encoders, results[results["condition"] == "none+none"].itertuples(), strict=True):
        scores = pd.read_parquet(bundle.root / "scores" / f"{row.record_id}.parquet")["score"].to_numpy(float)
        labels = pd.read_csv(bundle.root / "trials" / f"{row.trial_list_id}.csv")["label"].to_numpy()
        scored = np.isfinite(scores)  # unscored trials (NaN) are left out, as in the metrics
        assert entry["eer_interp"] == pytest.approx(voxsrc_eer(scores[scored], labels[scored]), abs=1e-9)
        assert entry["det"]["p_fa"][0] == 0.0 and entry["det"]["p_miss"][-1] == 0.0
        assert sum(entry["histogram"]["target"]) == int(labels[scored].sum())
    conditions = [c for c in curves if c["grouping"] == "condition"]
    assert [c["group"] for c in conditions] == [f"m1 E13 {c}" for c in sorted(set(results["condition"]))]
    assert all(c["figures"] == ["scores"] for c in conditions)


def test_a_bundle_that_is_not_intact_gives_no_curve(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path)
    results = bundle.read_results()
    scores = next((bundle.root / "scores").glob("*.parquet"))
    scores.write_bytes(scores.read_bytes()[:-7])  # fails its digest: the bundle is not intact
    assert curves_of_bundle(results, verify_bundle(results, bundle.root, bundle.public_key), ("none+none",)) == []
