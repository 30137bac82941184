"""Per-trial scores of one record: ``scores/<record_id>.parquet``, in trial-list order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.typing import Series

__all__ = [
    "COHORT_COLUMNS",
    "SCORE_STATUSES",
    "ScoresSchema",
]

SCORE_STATUSES = ("scored", "enrol-failed", "test-failed")
# Where a run declares AS-norm ([analysis] score_normalisation): the mean and sample standard deviation of the top-N
# cohort scores of each trial's enrolment and test side (audit.metrics.normalisation), all four or none; NaN where
# the side has no embedding.
COHORT_COLUMNS = ("enrol_cohort_mean", "enrol_cohort_std", "test_cohort_mean", "test_cohort_std")


class ScoresSchema(pa.DataFrameModel):
    """One row per trial of the record's trial list; unscored trials keep their row with a NaN score."""

    trial_index: Series[np.int64] = pa.Field(ge=0)
    label: Series[np.int8] = pa.Field(isin=[0, 1])
    score: Series[np.float64] = pa.Field(nullable=True)
    status: Series[str] = pa.Field(isin=list(SCORE_STATUSES))
    # The countermeasure's score of the trial's test side, where a run declares one ([countermeasure]); NaN where
    # it scored none.
    cm_score: Series[np.float64] | None = pa.Field(nullable=True)
    enrol_cohort_mean: Series[np.float64] | None = pa.Field(nullable=True)
    enrol_cohort_std: Series[np.float64] | None = pa.Field(nullable=True)
    test_cohort_mean: Series[np.float64] | None = pa.Field(nullable=True)
    test_cohort_std: Series[np.float64] | None = pa.Field(nullable=True)

    class Config:
        strict = True

    @pa.dataframe_check
    def scored_means_finite(cls, frame: pd.DataFrame) -> pd.Series:  # type: ignore[misc]
        """A scored trial has a finite score; an unscored one has none."""
        return np.isfinite(frame["score"]) == (frame["status"] == "scored")

    @pa.dataframe_check
    def cm_score_not_infinite(cls, frame: pd.DataFrame) -> pd.Series:  # type: ignore[misc]
        """A countermeasure score is finite, or NaN where there is none."""
        if "cm_score" not in frame:
            return pd.Series(True, index=frame.index)
        return pd.Series(~np.isinf(frame["cm_score"].to_numpy(dtype=float, na_value=np.nan)), index=frame.index)

    @pa.dataframe_check
    def cohort_statistics_together(cls, frame: pd.DataFrame) -> pd.Series:  # type: ignore[misc]
        """The four cohort statistics come together; a scored trial has all four finite, no standard deviation
        negative."""
        present = [column in frame for column in COHORT_COLUMNS]
        if not any(present):
            return pd.Series(True, index=frame.index)
        if not all(present):
            return pd.Series(False, index=frame.index)
        stats = frame[list(COHORT_COLUMNS)].to_numpy(dtype=float, na_value=np.nan)
        usable = np.isfinite(stats).all(axis=1) & (stats[:, 1] >= 0) & (stats[:, 3] >= 0)
        return pd.Series(usable | (frame["status"] != "scored").to_numpy(), index=frame.index)
