"""Calibration in ``audit scores``: a linear logistic calibration fitted on a labelled development score file
(``--calibration dev.txt``, as BOSARIS fits one), and per group the calibration metrics of ``audit.metrics``.

minCllr needs no calibration (it is the Cllr of the best monotone map of the raw scores), so every group gets it.
Cllr and actDCF are defined on LLRs only: they appear when a calibration was fitted, on ``scale * score + offset``,
beside the calibration loss ``Cllr - minCllr`` and the threshold loss ``actDCF - minDCF`` (the raw-score minDCF of
the same operating point). The development scores must not score any trial of the evaluated list
(``audit.scores.scoring`` checks the pairs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from audit.metrics import (
    LinearCalibration,
    MetricInputError,
    TieGroups,
    act_dcf,
    cllr,
    fit_logistic_calibration,
    min_dcf,
)
from audit.scores.files import ScoreFile
from audit.scores.resampling import interval_columns, weighted_draws
from schemas import InputError

CALIBRATION_PRIOR = 0.5  # BOSARIS' default training prior


@dataclass(frozen=True)
class DevCalibration:
    """The fit on the development file, or why there is none."""

    dev: ScoreFile
    n_used: int
    n_non_finite: int
    fit: LinearCalibration | None
    not_fitted: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": "logistic",
            "prior": CALIBRATION_PRIOR,
            "dev_path": str(self.dev.path),
            "dev_format": self.dev.format,
            "dev_sha256": self.dev.digest.sha256,
            "dev_trials_used": self.n_used,
            "dev_non_finite_left_out": self.n_non_finite,
            "scale": None if self.fit is None else self.fit.scale,
            "offset": None if self.fit is None else self.fit.offset,
            "not_fitted": self.not_fitted,
        }


def fit_dev_calibration(dev: ScoreFile) -> DevCalibration:
    """Fit ``llr = scale * score + offset`` on the labelled development scores (non-finite ones left out, counted).

    A file without labels is an InputError (the fit needs them); scores the fit cannot use (one class, or classes
    that separate) leave ``fit`` None with the reason.
    """
    if not dev.has_labels:
        raise InputError(str(dev.path), "--calibration needs a labelled score file (wespeaker or speechbrain layout)")
    scores, labels = dev.frame["score"].to_numpy(float), dev.frame["label"].to_numpy(np.int64)
    finite = np.isfinite(scores)
    try:
        fit: LinearCalibration | None = fit_logistic_calibration(scores[finite], labels[finite], CALIBRATION_PRIOR)
        reason = None
    except MetricInputError as error:
        fit, reason = None, str(error)
    return DevCalibration(dev, int(finite.sum()), int((~finite).sum()), fit, reason)


def calibration_row(
    scores: NDArray[np.float64],
    labels: NDArray[np.int64],
    fit: LinearCalibration | None,
    operating_point: tuple[float, float, float],
    resampled: tuple[NDArray[np.int64], NDArray[np.float64], float] | None,
) -> dict[str, Any]:
    """minCllr, and with a fit Cllr, actDCF and the two losses, of one group; with ``resampled`` (per-trial
    speaker codes, speaker weights, level) their speaker-bootstrap intervals."""
    p_target, c_miss, c_fa = operating_point
    try:
        groups = TieGroups.of(scores, labels)  # sorted once for every resample
    except MetricInputError as error:
        return {"calibration_not_computable": str(error)}
    metrics: dict[str, Any] = {"min_cllr": groups.min_cllr}
    if fit is not None:
        llrs = fit.apply(scores)
        metrics["cllr"] = lambda w: cllr(llrs, labels, weights=w)
        metrics["act_dcf"] = lambda w: act_dcf(llrs, labels, p_target, c_miss, c_fa, weights=w)
    row: dict[str, Any] = {}
    try:
        row |= {name: metric(None) for name, metric in metrics.items()}
    except MetricInputError as error:
        return {"calibration_not_computable": str(error)}
    if fit is not None:
        row["cllr_minus_min_cllr"] = row["cllr"] - row["min_cllr"]
        row["act_dcf_minus_min_dcf"] = row["act_dcf"] - min_dcf(scores, labels, p_target, c_miss, c_fa)
    if resampled is not None:
        codes, weights, level = resampled
        for name, metric in metrics.items():
            row |= interval_columns(name, weighted_draws(metric, codes, weights), level)
    return row
