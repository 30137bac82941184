"""runner.beyond_eer: a calibration group whose development scores no line can fit leaves its records' calibrated
columns empty and puts a note naming the reason and counting the records into the run summary (issue 42: never a
traceback). Oracle: the reason of ``fit_logistic_calibration`` on the same development scores."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from audit.metrics.calibration import fit_logistic_calibration
from audit.metrics.point import MetricInputError
from runner.scoring.beyond_eer import beyond_eer_columns


def test_a_group_of_constant_development_scores_is_a_note_not_a_traceback() -> None:
    speakers = ["d1", "d2", "e1", "e2"]
    enrol = np.repeat(speakers, 4)
    labels = np.tile([1, 0, 1, 0], 4)
    test = np.where(labels == 1, enrol, np.roll(enrol, 4))
    frame = pd.DataFrame({"enrol_speaker": enrol, "test_speaker": test, "label": labels})
    scores = np.where(np.isin(enrol, ["d1", "d2"]), 0.7, np.linspace(0.1, 0.9, 16))  # development: constant
    plans = [SimpleNamespace(record_id="r1", trials=SimpleNamespace(frame=frame))]
    frames = [pd.DataFrame({"status": ["scored"] * 16, "score": scores, "label": labels})]
    row = {"record_id": "r1", "experiment": "E01", "model": "m", "corpus": "c", "enrol_condition": "clean",
           "test_condition": "clean", "p_target": 0.01, "c_miss": 1.0, "c_fa": 1.0}  # fmt: skip
    config = SimpleNamespace(
        analysis=SimpleNamespace(
            calibration=SimpleNamespace(prior=0.5, method="platt"), dev_speakers=("d1", "d2"), score_normalisation=None
        )
    )
    columns, notes = beyond_eer_columns(config, plans, frames, [row])  # type: ignore[arg-type]
    assert columns["r1"]["cllr"] is None and columns["r1"]["act_dcf"] is None
    development = np.isin(enrol, ["d1", "d2"]) & np.isin(test, ["d1", "d2"])
    with pytest.raises(MetricInputError) as refused:
        fit_logistic_calibration(scores[development], labels[development], platt=True)
    assert notes == [f"calibration: no map for E01/m/c (1 record(s) without cllr): {refused.value}"]
