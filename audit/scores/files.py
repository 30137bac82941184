"""Readers for the score files speaker-verification toolkits write, one trial per line:

- ``kaldi``: ``<enrol> <test> <score>`` (``ivector-plda-scoring`` and the like);
- ``voxceleb``: ``<score> <enrol> <test>`` (the VoxSRC prediction file);
- ``wespeaker``: ``<enrol> <test> <score> <target|nontarget>`` (``wespeaker/bin/score.py``);
- ``speechbrain``: ``<enrol> <test> <1|0> <score>`` (the VoxCeleb recipes' ``scores.txt``; ids without ``.wav``).

A countermeasure's score file (``audit scores --cm-scores``) has one layout, ``<enrol> <test> <cm score>
<bonafide|spoof>``: per trial, the CM's score of the test side (higher is more bona fide) and whether the test side
is a spoof (ASVspoof's key words).

With ``by_model`` (``audit scores --by-model``) every line starts with one more field, the model that scored the
trial (``<model> <enrol> <test> <score>``, or ``<model>`` before any layout above); ``audit.scores.models`` splits
such a file into one score file per model.

The format is given or detected from the first non-blank line (after the model field). A line that does not follow
it, or a score that is not a number, is an :class:`~schemas.errors.InputError` naming the file, line and column. A
score that is a number but not finite (``nan``, ``inf``) is kept as NaN: the audit counts such trials as unscored,
it does not stop.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

import numpy as np
import pandas as pd

from audit.scores.lines import NUMBER, FieldBlock, FieldReader, Vocabulary, codes, numbers, read_pairs
from audit.scores.trial_lists import KALDI_LABELS, VOXCELEB_LABELS, header_line
from provenance import Digest
from schemas import InputError

ScoreFormat = Literal["kaldi", "voxceleb", "wespeaker", "speechbrain"]
SCORE_FORMATS: tuple[ScoreFormat, ...] = get_args(ScoreFormat)
LAYOUTS: dict[ScoreFormat, str] = {
    "kaldi": "<enrol> <test> <score>",
    "voxceleb": "<score> <enrol> <test>",
    "wespeaker": "<enrol> <test> <score> <target|nontarget>",
    "speechbrain": "<enrol> <test> <1|0> <score>",
}
NO_LABEL = -1
MODEL_FIELD = "<model>"  # the field before the layout in a file read ``by_model``

# Per format: field positions of enrol, test and score, the label field and its spellings (None: no label).
_Fields = tuple[int, int, int, int | None, dict[str, int]]
FIELDS: dict[ScoreFormat, _Fields] = {
    "kaldi": (0, 1, 2, None, {}),
    "voxceleb": (1, 2, 0, None, {}),
    "wespeaker": (0, 1, 2, 3, KALDI_LABELS),
    "speechbrain": (0, 1, 3, 2, VOXCELEB_LABELS),
}


@dataclass(frozen=True)
class ScoreFile:
    """A score file as read: ``enrol_utt``, ``test_utt``, ``score`` (NaN where not finite), ``label`` (1, 0, or
    -1 when the format carries none) and ``line`` (1-based line number), in file order."""

    path: Path
    format: ScoreFormat
    frame: pd.DataFrame
    digest: Digest
    header: int | None = None  # the number of a header line left out
    model: str | None = None  # the model these rows are of, in a file with a model column

    @property
    def has_labels(self) -> bool:
        return FIELDS[self.format][3] is not None

    @property
    def name(self) -> str:
        """The file as findings name it: its path, and the model where the rows are one model's of a file."""
        return str(self.path) if self.model is None else f"{self.path} (model {self.model})"


def _is_number(text: str) -> bool:
    return re.fullmatch(NUMBER, text) is not None


_DETECTORS: tuple[tuple[ScoreFormat, Callable[[list[str]], bool]], ...] = (
    ("wespeaker", lambda f: len(f) == 4 and _is_number(f[2]) and f[3] in KALDI_LABELS),
    ("speechbrain", lambda f: len(f) == 4 and f[2] in VOXCELEB_LABELS and _is_number(f[3])),
    ("voxceleb", lambda f: len(f) == 3 and _is_number(f[0]) and not _is_number(f[2])),
    ("kaldi", lambda f: len(f) == 3 and _is_number(f[2]) and not _is_number(f[0])),
)


def _is_line(fields: list[str], score_format: ScoreFormat) -> bool:
    return dict(_DETECTORS)[score_format](fields)


def detect_score_format(path: Path, head: list[tuple[int, list[str]]], prefix: str = "") -> ScoreFormat:
    """The one format whose layout the first data line follows (or the second, when the first is a header);
    otherwise an InputError asking for ``--format`` (the layouts it names preceded by ``prefix``)."""
    for _, fields in head[: 2 if len(head) == 2 and len(head[0][1]) == len(head[1][1]) else 1]:
        matches = [name for name, test in _DETECTORS if test(fields)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            break
    layouts = "; ".join(f"{name} '{prefix}{layout}'" for name, layout in LAYOUTS.items())
    problem = "is ambiguous" if head and sum(test(head[0][1]) for _, test in _DETECTORS) > 1 else (
        "matches none of the score-file layouts"
    )  # fmt: skip
    raise InputError(
        str(path), f"the first line {problem} ({layouts}); name one with --format", row=head[0][0] if head else None
    )


def read_score_file(
    path: Path, score_format: ScoreFormat | None = None, vocabulary: Vocabulary | None = None, *, by_model: bool = False
) -> ScoreFile:
    """A score file in ``score_format``, or in the format its first line shows when None; plain or gzip, a header
    line skipped. Utterance ids are categorical over ``vocabulary`` (shared with the trial list). With ``by_model``
    the first field of each line is the model's name, read into ``model`` (categorical, models in order of first
    appearance)."""
    path = Path(path)
    vocabulary = vocabulary or Vocabulary()
    reader = FieldReader(path, "a score file")
    head = reader.head()
    shift, prefix = (1, f"{MODEL_FIELD} ") if by_model else (0, "")
    chosen = score_format or detect_score_format(path, [(n, fields[shift:]) for n, fields in head], prefix)
    header = header_line(head, lambda fields: _is_line(fields[shift:], chosen))
    enrol_at, test_at, score_at, label_at, labels = FIELDS[chosen]
    enrol_at, test_at, score_at = enrol_at + shift, test_at + shift, score_at + shift
    label_at = None if label_at is None else label_at + shift
    width, layout = (3 if label_at is None else 4) + shift, prefix + LAYOUTS[chosen]

    def label(block: FieldBlock) -> np.ndarray:
        if label_at is None:
            return np.full(len(block.lines), NO_LABEL, np.int8)
        return codes(path, block, label_at, labels, layout, "label")

    columns = {"score": lambda block: numbers(path, block, score_at, "score"), "label": label}
    models = Vocabulary()
    if by_model:
        columns["model"] = lambda block: models.encode(block.fields[0])[0]
    frame = read_pairs(reader, width, f"'{layout}' ({chosen})", header, vocabulary, (enrol_at, test_at), columns)
    if by_model:
        frame["model"] = models.categorical(frame["model"].to_numpy())
    digest = reader.digest()
    return ScoreFile(path, chosen, frame, digest, header)


# A countermeasure's score file: one line per trial, its CM score and whether the test side is bona fide or a spoof
# (ASVspoof's key words).
CM_LAYOUT = "<enrol> <test> <cm score> <bonafide|spoof>"
CM_KEYS = {"bonafide": False, "spoof": True}


@dataclass(frozen=True)
class CmScoreFile:
    """A countermeasure score file as read: ``enrol_utt``, ``test_utt``, ``cm_score`` (NaN where not finite),
    ``spoof`` (bool) and ``line``, in file order."""

    path: Path
    frame: pd.DataFrame
    digest: Digest
    header: int | None = None  # the number of a header line left out


def read_cm_score_file(path: Path, vocabulary: Vocabulary | None = None) -> CmScoreFile:
    """A countermeasure score file (``CM_LAYOUT``), plain or gzip, a header line skipped; a line that does not
    follow it is an InputError."""
    path = Path(path)
    vocabulary = vocabulary or Vocabulary()
    reader = FieldReader(path, "a countermeasure score file")
    header = header_line(reader.head(), lambda f: len(f) == 4 and _is_number(f[2]) and f[3] in CM_KEYS)
    keys = {key: int(spoof) for key, spoof in CM_KEYS.items()}
    frame = read_pairs(
        reader, 4, f"'{CM_LAYOUT}'", header, vocabulary, (0, 1),
        {"cm_score": lambda block: numbers(path, block, 2, "cm score"),
         "spoof": lambda block: codes(path, block, 3, keys, CM_LAYOUT, "key").astype(bool)},
    )  # fmt: skip
    digest = reader.digest()
    return CmScoreFile(path, frame, digest, header)
