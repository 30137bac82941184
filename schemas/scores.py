"""Per-trial scores of one record: ``scores/<record_id>.parquet``, in trial-list order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.typing import Series

SCORE_STATUSES = ("scored", "enrol-failed", "test-failed")


class ScoresSchema(pa.DataFrameModel):
    """One row per trial of the record's trial list; unscored trials keep their row with a NaN score."""

    trial_index: Series[np.int64] = pa.Field(ge=0)
    label: Series[np.int8] = pa.Field(isin=[0, 1])
    score: Series[np.float64] = pa.Field(nullable=True)
    status: Series[str] = pa.Field(isin=list(SCORE_STATUSES))

    class Config:
        strict = True

    @pa.dataframe_check
    def scored_means_finite(cls, frame: pd.DataFrame) -> pd.Series:  # type: ignore[misc]
        """A scored trial has a finite score; an unscored one has none."""
        return np.isfinite(frame["score"]) == (frame["status"] == "scored")
