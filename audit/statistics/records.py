"""One record's scored trials with their speakers: what the per-record statistics that resample speakers read (the
DET bands, the speakers under stress)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class ScoredRecord:
    """One record's trials: their scores, labels (target ``True``) and speakers; ``key`` says where the report shows
    the record (its figure, panel and series, or its experiment, encoder, condition and record id)."""

    key: Mapping[str, str]
    scores: NDArray[np.float64]
    labels: NDArray[np.bool_]
    enrol_speaker: NDArray[Any]
    test_speaker: NDArray[Any]
    test_utterance: NDArray[Any] | None = None  # None: each trial its own test utterance

    def scored(self) -> ScoredRecord:
        """The trials with a finite score, speakers and utterances as text; the record itself when it is that
        already (a scored record's statistics each ask for its scored trials)."""
        kept = np.isfinite(self.scores)
        texts = (
            self.enrol_speaker,
            self.test_speaker,
            *(() if self.test_utterance is None else (self.test_utterance,)),
        )
        if kept.all() and np.asarray(self.labels).dtype == bool and all(np.asarray(t).dtype.kind == "U" for t in texts):
            return self
        return ScoredRecord(
            self.key,
            self.scores[kept],
            np.asarray(self.labels, bool)[kept],
            np.asarray(self.enrol_speaker).astype(str)[kept],
            np.asarray(self.test_speaker).astype(str)[kept],
            None if self.test_utterance is None else np.asarray(self.test_utterance).astype(str)[kept],
        )
