"""Score files with a model column (``audit scores --by-model``): one file, one line per (model, trial), split into
one score file per model for the paired encoder comparison.

Every line is the model's name, then one of the score-file layouts (``<model> <enrol> <test> <score>``: the Kaldi
layout with a field before it, as ``sed 's/^/ecapa /' ecapa.txt >> all.txt`` or a long table's export writes it).
The column is declared, never detected: ``a b 1 0.5`` is a SpeechBrain line and a Kaldi line after a model name
alike. A paired comparison needs one trial list for every model, so the file must give each model the same trials,
each once, and hold two models or more; anything else is an InputError naming the file, line and column. Models
keep the order of their first line; the rows of each keep the file's order.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from audit.scores.files import ScoreFile, ScoreFormat, read_score_file
from audit.scores.lines import Vocabulary
from schemas import InputError

MODEL_COLUMN = "model"


def _trial(frame: pd.DataFrame, at: int) -> str:
    return f"{frame['enrol_utt'].iat[at]} {frame['test_utt'].iat[at]}"


def _among(keys: np.ndarray, ordered: np.ndarray) -> np.ndarray:
    """Whether each of ``keys`` is in ``ordered`` (sorted, not empty), by binary search."""
    return ordered[np.minimum(np.searchsorted(ordered, keys), ordered.size - 1)] == keys


def read_model_scores(
    path: Path, score_format: ScoreFormat | None = None, vocabulary: Vocabulary | None = None
) -> dict[str, ScoreFile]:
    """Each model's score file (its rows of ``path``, its name in ``model``), models in order of first appearance;
    a single model, a (model, trial) on two lines or a model without a trial another one scores is an
    InputError."""
    whole = read_score_file(Path(path), score_format, vocabulary, by_model=True)
    frame, model = whole.frame.drop(columns=MODEL_COLUMN), whole.frame[MODEL_COLUMN].array
    lines = frame["line"].to_numpy()
    names = [str(name) for name in model.categories]
    if len(names) < 2:
        raise InputError(
            str(path), f"expected two models or more in the model column, got only {names[0]!r}",
            row=int(lines[0]), column=MODEL_COLUMN,
        )  # fmt: skip
    # one integer per trial (the utterances' codes in one vocabulary), then per model the positions of its rows
    trial = frame["enrol_utt"].cat.codes.to_numpy().astype(np.int64) << 31
    trial += frame["test_utt"].cat.codes.to_numpy()
    repeated = pd.DataFrame({"model": model.codes, "trial": trial}).duplicated().to_numpy()
    if repeated.any():
        at = int(np.flatnonzero(repeated)[0])
        first = int(np.flatnonzero((model.codes == model.codes[at]) & (trial == trial[at]))[0])
        raise InputError(
            str(path),
            f"expected one score per model and trial, got a second one of model {str(model[at])!r} for trial "
            f"{_trial(frame, at)} (first on row {lines[first]})",
            row=int(lines[at]), column=MODEL_COLUMN,
        )  # fmt: skip
    rows = [np.flatnonzero(model.codes == code) for code in range(len(names))]
    reference = trial[rows[0]]
    ordered = np.sort(reference)
    for name, own in zip(names[1:], rows[1:], strict=True):
        own_ordered = np.sort(trial[own])
        if np.array_equal(own_ordered, ordered):  # the rule: the same trials (each once, checked above)
            continue
        missing = ~_among(reference, own_ordered)
        if missing.any():
            at = int(rows[0][np.flatnonzero(missing)[0]])
            raise InputError(
                str(path),
                f"expected a line of model {name!r} for trial {_trial(frame, at)}, which model {names[0]!r} scores "
                "here: every model must score the same trials",
                row=int(lines[at]), column=MODEL_COLUMN,
            )  # fmt: skip
        extra = ~_among(trial[own], ordered)
        if extra.any():
            at = int(own[np.flatnonzero(extra)[0]])
            raise InputError(
                str(path),
                f"expected only trials that model {names[0]!r} scores too, got trial {_trial(frame, at)}: every "
                "model must score the same trials",
                row=int(lines[at]), column=MODEL_COLUMN,
            )  # fmt: skip
    return {
        name: ScoreFile(
            whole.path, whole.format, frame.iloc[own].reset_index(drop=True), whole.digest, whole.header, name
        )
        for name, own in zip(names, rows, strict=True)
    }
