"""The utterance table: one row per audio file of a corpus, written as ``utterances.csv`` at the corpus root.

Every corpus adapter and the embedded default corpus produce this table; trial sampling and subgroup analyses
read it. Paths are POSIX and relative to the corpus root so that a corpus folder can move without its table
changing. Optional fields are nullable: a corpus that does not publish a field leaves it empty, never guessed.

A spoof folder (converted or synthesised speech, ``runner/corpora/spoof.py``) uses the same table: ``speaker`` is
the speaker the file imitates (its target), and the ``spoof_*`` columns name the system that made it.
"""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa
from pandera.typing import Series

__all__ = [
    "OPTIONAL_COLUMNS",
    "RELATIVE_POSIX_PATH",
    "UTTERANCE_COLUMNS",
    "UTTERANCE_REQUIRED_COLUMNS",
    "UtteranceSchema",
]

# Every column of the contract, in the order tables are written.
UTTERANCE_REQUIRED_COLUMNS: tuple[str, ...] = ("utt_id", "speaker", "path", "duration_s", "sample_rate", "blake3")
OPTIONAL_COLUMNS: tuple[str, ...] = (
    "gender",
    "age",
    "age_bin",
    "session",
    "emotion",
    "intensity",
    "style",
    "accent",
    "l1",
    "language",
    "condition",
    "microphone",
    "split",
    "source_package",
    "source_version",
    "transcript",
    "spoof_system",
    "spoof_system_version",
    "spoof_source_speaker",
)
UTTERANCE_COLUMNS: tuple[str, ...] = UTTERANCE_REQUIRED_COLUMNS + OPTIONAL_COLUMNS

# Relative POSIX path: no leading slash, no backslash, no drive letter, no empty or '..' component.
RELATIVE_POSIX_PATH = r"^(?![/\\])(?![A-Za-z]:)(?!.*\\)(?!.*(?:^|/)\.\.(?:/|$))(?!.*//).+$"


class UtteranceSchema(pa.DataFrameModel):
    """``utterances.csv``: the audio files of one corpus with what the corpus publishes about each."""

    utt_id: Series[str] = pa.Field(unique=True, str_length={"min_value": 1})
    speaker: Series[str] = pa.Field(str_length={"min_value": 1})
    path: Series[str] = pa.Field(str_matches=RELATIVE_POSIX_PATH)
    duration_s: Series[float] = pa.Field(gt=0)
    sample_rate: Series[int] = pa.Field(gt=0)
    blake3: Series[str] = pa.Field(str_matches=r"^[0-9a-f]{64}$")
    gender: Series[str] | None = pa.Field(nullable=True, isin=["F", "M"])
    age: Series[float] | None = pa.Field(nullable=True, ge=0)
    age_bin: Series[str] | None = pa.Field(nullable=True)
    session: Series[str] | None = pa.Field(nullable=True)
    emotion: Series[str] | None = pa.Field(nullable=True)
    intensity: Series[str] | None = pa.Field(nullable=True)
    style: Series[str] | None = pa.Field(nullable=True)
    accent: Series[str] | None = pa.Field(nullable=True)
    l1: Series[str] | None = pa.Field(nullable=True)
    language: Series[str] | None = pa.Field(nullable=True)
    condition: Series[str] | None = pa.Field(nullable=True)
    microphone: Series[str] | None = pa.Field(nullable=True)
    split: Series[str] | None = pa.Field(nullable=True)
    source_package: Series[str] | None = pa.Field(nullable=True)
    source_version: Series[str] | None = pa.Field(nullable=True)
    transcript: Series[str] | None = pa.Field(nullable=True)
    spoof_system: Series[str] | None = pa.Field(nullable=True)
    spoof_system_version: Series[str] | None = pa.Field(nullable=True)
    spoof_source_speaker: Series[str] | None = pa.Field(nullable=True)

    class Config:
        strict = True
        ordered = False
        coerce = True

    @pa.dataframe_check
    def one_path_per_utterance(cls, frame: pd.DataFrame) -> pd.Series[bool]:  # type: ignore[misc]
        """Two utterances never point at the same file (a duplicated row would double-count trials)."""
        return ~frame["path"].duplicated(keep=False)
