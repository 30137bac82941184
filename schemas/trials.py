"""The trial list: which pairs an experiment scores, shared by every encoder and every condition of it."""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa
from pandera.typing import Series


class TrialsSchema(pa.DataFrameModel):
    """``trials/<trial_list_id>.csv``: one row per trial, in scoring order."""

    trial_index: Series[int] = pa.Field(ge=0, unique=True)
    enrol_utt: Series[str]
    test_utt: Series[str]
    label: Series[int] = pa.Field(isin=[0, 1])
    enrol_speaker: Series[str]
    test_speaker: Series[str]
    subgroup: Series[str] | None = pa.Field(nullable=True)

    class Config:
        strict = True
        ordered = False

    @pa.dataframe_check
    def indices_are_positions(cls, frame: pd.DataFrame) -> bool:  # type: ignore[misc]
        """trial_index is 0..n-1 in row order, so a score file can be matched row by row."""
        return bool((frame["trial_index"].to_numpy() == range(len(frame))).all())

    @pa.dataframe_check
    def labels_match_speakers(cls, frame: pd.DataFrame) -> pd.Series:  # type: ignore[misc]
        """A target trial has one speaker on both sides; a non-target trial has two."""
        same = frame["enrol_speaker"] == frame["test_speaker"]
        return same == (frame["label"] == 1)

    @pa.dataframe_check
    def no_self_trials(cls, frame: pd.DataFrame) -> pd.Series:  # type: ignore[misc]
        return frame["enrol_utt"] != frame["test_utt"]
