"""The trial list: which pairs an experiment scores, shared by every encoder and every condition of it.

A list with spoof trials (``runner.trials.add_spoof_trials``) has two more columns: ``trial_kind`` (``target``,
``nontarget`` or ``spoof``) and ``test_corpus``, the corpus of the run that holds the test utterance. A spoof trial
scores a genuine enrolment against a file that imitates that same speaker: label 0, one speaker on both sides.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.typing import Series

__all__ = [
    "OPTIONAL_TRIAL_COLUMNS",
    "SPEAKER_COUNT_COLUMNS",
    "TEXT_COLUMNS",
    "TRIAL_KINDS",
    "TrialKind",
    "TrialsSchema",
    "plainly_valid",
    "speaker_counts",
]


class TrialKind(IntEnum):
    """What a trial tests. The value is its code in metric arrays (1 target and 0 non-target, as a ``label``; 2 a
    spoof of the enrolment speaker), the lower-case name its spelling in a trial list's ``trial_kind``."""

    NONTARGET = 0
    TARGET = 1
    SPOOF = 2

    @property
    def word(self) -> str:
        return self.name.lower()


TRIAL_KINDS = tuple(kind.word for kind in TrialKind)
TEXT_COLUMNS = ("enrol_utt", "test_utt", "enrol_speaker", "test_speaker")
SPEAKER_COUNT_COLUMNS = ("n_speakers", "n_enrol_speakers", "n_test_speakers")


def speaker_counts(trials: pd.DataFrame) -> dict[str, int]:
    """The speakers behind a trial list: distinct speakers on either side, on the enrolment side, on the test side.

    Counted over every trial of the list (scored or not), so the runner writes them and the audit re-derives them
    from the same signed list. A spoof trial's test speaker is the speaker the file imitates. A subgroup limits the
    enrolment side, so ``n_enrol_speakers`` is the number of the subgroup's speakers.
    """
    enrol, test = trials["enrol_speaker"].astype(str), trials["test_speaker"].astype(str)
    return {
        "n_speakers": int(pd.concat([enrol, test], ignore_index=True).nunique()),
        "n_enrol_speakers": int(enrol.nunique()),
        "n_test_speakers": int(test.nunique()),
    }


class TrialsSchema(pa.DataFrameModel):
    """``trials/<trial_list_id>.csv``: one row per trial, in scoring order."""

    trial_index: Series[int] = pa.Field(ge=0, unique=True)
    enrol_utt: Series[str]
    test_utt: Series[str]
    label: Series[int] = pa.Field(isin=[0, 1])
    enrol_speaker: Series[str]
    test_speaker: Series[str]
    subgroup: Series[str] | None = pa.Field(nullable=True)
    trial_kind: Series[str] | None = pa.Field(isin=list(TRIAL_KINDS))
    test_corpus: Series[str] | None = pa.Field(str_length={"min_value": 1})

    class Config:
        strict = True
        ordered = False

    @pa.dataframe_check
    def indices_are_positions(cls, frame: pd.DataFrame) -> bool:  # type: ignore[misc]
        """trial_index is 0..n-1 in row order, so a score file can be matched row by row."""
        return bool((frame["trial_index"].to_numpy() == range(len(frame))).all())

    @pa.dataframe_check
    def labels_match_speakers(cls, frame: pd.DataFrame) -> pd.Series:  # type: ignore[misc]
        """A target trial has one speaker on both sides; a non-target trial has two; a spoof trial imitates the
        enrolment speaker (one speaker, label 0)."""
        same = frame["enrol_speaker"] == frame["test_speaker"]
        if "trial_kind" not in frame.columns:
            return same == (frame["label"] == 1)
        kind = frame["trial_kind"]
        expected_label = (kind == "target").astype(int)
        return (same == kind.isin(["target", "spoof"])) & (frame["label"] == expected_label)

    @pa.dataframe_check
    def spoof_columns_together(cls, frame: pd.DataFrame) -> bool:  # type: ignore[misc]
        """``trial_kind`` and ``test_corpus`` come together: one without the other cannot be read."""
        return ("trial_kind" in frame.columns) == ("test_corpus" in frame.columns)

    @pa.dataframe_check
    def no_self_trials(cls, frame: pd.DataFrame) -> pd.Series:  # type: ignore[misc]
        """An utterance is never scored against itself (a spoof file lies in another corpus)."""
        other_corpus = frame["trial_kind"] == "spoof" if "trial_kind" in frame.columns else False
        return (frame["enrol_utt"] != frame["test_utt"]) | other_corpus


OPTIONAL_TRIAL_COLUMNS = ("subgroup", "trial_kind", "test_corpus")  # the model's optional columns, text


def _python_strings(column: pd.Series, nullable: bool) -> bool:
    """Python strings in an object column (None where ``nullable``), as ``parse_trial_list`` leaves the optional
    columns; an all-missing column is left to pandera."""
    return (
        column.dtype == object
        and (nullable or not column.isna().any())
        and pd.api.types.infer_dtype(column, skipna=True) == "string"
    )


def plainly_valid(frame: pd.DataFrame) -> bool:
    """True only where :class:`TrialsSchema` passes ``frame`` (False says nothing): the six plain columns, integers
    as int64 and text in pandas' ``str`` type without a missing value, any optional column as Python strings in an
    object column (``subgroup`` may be None), their field rules and the model's own frame checks. Pandera takes
    about 6 ms a list for what this does in a fraction; a list this does not pass is left to pandera, which words
    what it breaks."""
    text = pd.api.types.pandas_dtype(str)
    model: Any = TrialsSchema  # its checks, called as plain functions (pandera's decorator hides their types)
    optional = [column for column in frame.columns if column in OPTIONAL_TRIAL_COLUMNS]
    return (
        frame.columns.is_unique
        and set(frame.columns) == {"trial_index", "label", *TEXT_COLUMNS, *optional}
        and frame["trial_index"].dtype == np.int64
        and frame["label"].dtype == np.int64
        and all(frame[column].dtype == text and not frame[column].isna().any() for column in TEXT_COLUMNS)
        and all(_python_strings(frame[column], nullable=column == "subgroup") for column in optional)
        and bool(frame["label"].isin([0, 1]).all())  # trial_index >= 0 and unique: positions (checked below)
        and ("trial_kind" not in optional or bool(frame["trial_kind"].isin(TRIAL_KINDS).all()))
        and ("test_corpus" not in optional or bool((frame["test_corpus"].str.len() >= 1).all()))
        and model.indices_are_positions(frame)
        and bool(model.labels_match_speakers(frame).all())
        and model.spoof_columns_together(frame)
        and bool(model.no_self_trials(frame).all())
    )
