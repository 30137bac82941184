"""Readers for the score files speaker-verification toolkits write, one trial per line:

- ``kaldi``: ``<enrol> <test> <score>`` (``ivector-plda-scoring`` and the like);
- ``voxceleb``: ``<score> <enrol> <test>`` (the VoxSRC prediction file);
- ``wespeaker``: ``<enrol> <test> <score> <target|nontarget>`` (``wespeaker/bin/score.py``);
- ``speechbrain``: ``<enrol> <test> <1|0> <score>`` (the VoxCeleb recipes' ``scores.txt``; ids without ``.wav``).

A countermeasure's score file (``audit scores --cm-scores``) has one layout, ``<enrol> <test> <cm score>
<bonafide|spoof>``: per trial, the CM's score of the test side (higher is more bona fide) and whether the test side
is a spoof (ASVspoof's key words).

The format is given or detected from the first non-blank line. A line that does not follow it, or a score that is
not a number, is an :class:`~schemas.errors.InputError` naming the file, line and column. A score that is a number but
not finite (``nan``, ``inf``) is kept as NaN: the audit counts such trials as unscored, it does not stop.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

import numpy as np
import pandas as pd

from audit.scores.trial_lists import KALDI_LABELS, VOXCELEB_LABELS, numbered_fields
from audit.table.reading import read_text_and_digest
from provenance.digests import Digest
from schemas.errors import InputError

ScoreFormat = Literal["kaldi", "voxceleb", "wespeaker", "speechbrain"]
SCORE_FORMATS: tuple[ScoreFormat, ...] = get_args(ScoreFormat)
LAYOUTS: dict[ScoreFormat, str] = {
    "kaldi": "<enrol> <test> <score>",
    "voxceleb": "<score> <enrol> <test>",
    "wespeaker": "<enrol> <test> <score> <target|nontarget>",
    "speechbrain": "<enrol> <test> <1|0> <score>",
}
NO_LABEL = -1

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

    @property
    def has_labels(self) -> bool:
        return FIELDS[self.format][3] is not None


# A score as toolkits print it: ASCII digits, an optional exponent, or nan/inf spelt out. Python's float() also
# takes "1_0" (10.0) and digits of other scripts ("١٢"), which no score file means.
_NUMBER = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?|nan|inf(?:inity)?)", re.ASCII | re.IGNORECASE)


def _is_number(text: str) -> bool:
    return _NUMBER.fullmatch(text) is not None


def score_field(path: Path, text: str, row: int, column: str) -> float:
    """The number a score field spells (NaN where it is not finite), or an InputError naming the line and column."""
    if not _is_number(text):
        raise InputError(str(path), f"expected a number, got {text[:40]!r}", row=row, column=column)
    value = float(text)
    return value if math.isfinite(value) else math.nan


_DETECTORS: tuple[tuple[ScoreFormat, Callable[[list[str]], bool]], ...] = (
    ("wespeaker", lambda f: len(f) == 4 and _is_number(f[2]) and f[3] in KALDI_LABELS),
    ("speechbrain", lambda f: len(f) == 4 and f[2] in VOXCELEB_LABELS and _is_number(f[3])),
    ("voxceleb", lambda f: len(f) == 3 and _is_number(f[0]) and not _is_number(f[2])),
    ("kaldi", lambda f: len(f) == 3 and _is_number(f[2]) and not _is_number(f[0])),
)


def detect_score_format(path: Path, text: str) -> ScoreFormat:
    """The one format whose layout the first non-blank line follows; otherwise an InputError asking for
    ``--format``."""
    number, fields = next(numbered_fields(text), (None, []))
    matches = [name for name, test in _DETECTORS if test(fields)]
    if len(matches) == 1:
        return matches[0]
    layouts = "; ".join(f"{name} '{layout}'" for name, layout in LAYOUTS.items())
    problem = "matches none of the score-file layouts" if not matches else "is ambiguous"
    raise InputError(str(path), f"the first line {problem} ({layouts}); name one with --format", row=number)


def parse_scores(path: Path, text: str, score_format: ScoreFormat) -> pd.DataFrame:
    """Every non-blank line of ``text`` in ``score_format``, or the first line that does not follow it."""
    enrol_at, test_at, score_at, label_at, labels = FIELDS[score_format]
    width = 3 if label_at is None else 4
    layout = LAYOUTS[score_format]
    enrols: list[str] = []
    tests: list[str] = []
    scores: list[float] = []
    label_codes: list[int] = []
    lines: list[int] = []
    for number, fields in numbered_fields(text):
        if len(fields) != width:
            raise InputError(str(path), f"expected '{layout}' ({score_format}), got {len(fields)} field(s)", row=number)
        score = score_field(path, fields[score_at], number, "score")
        if label_at is None:
            label_codes.append(NO_LABEL)
        elif fields[label_at] in labels:
            label_codes.append(labels[fields[label_at]])
        else:
            raise InputError(
                str(path), f"expected '{layout}', got label {fields[label_at]!r}", row=number, column="label"
            )
        enrols.append(fields[enrol_at])
        tests.append(fields[test_at])
        scores.append(score)
        lines.append(number)
    if not lines:
        raise InputError(str(path), f"no scores (expected lines '{layout}')")
    return pd.DataFrame(
        {
            "enrol_utt": pd.Series(enrols, dtype=str),
            "test_utt": pd.Series(tests, dtype=str),
            "score": np.asarray(scores, dtype=np.float64),
            "label": np.asarray(label_codes, dtype=np.int8),
            "line": np.asarray(lines, dtype=np.int64),
        }
    )


def read_score_file(path: Path, score_format: ScoreFormat | None = None) -> ScoreFile:
    """A score file in ``score_format``, or in the format its first line shows when None."""
    path = Path(path)
    text, digest = read_text_and_digest(path, "a score file")
    chosen = score_format or detect_score_format(path, text)
    return ScoreFile(path, chosen, parse_scores(path, text, chosen), digest)


CM_LAYOUT = "<enrol> <test> <cm score> <bonafide|spoof>"
CM_KEYS = {"bonafide": False, "spoof": True}


@dataclass(frozen=True)
class CmScoreFile:
    """A countermeasure score file as read: ``enrol_utt``, ``test_utt``, ``cm_score`` (NaN where not finite),
    ``spoof`` (bool) and ``line``, in file order."""

    path: Path
    frame: pd.DataFrame
    digest: Digest


def read_cm_score_file(path: Path) -> CmScoreFile:
    """A countermeasure score file (``CM_LAYOUT``); a line that does not follow it is an InputError."""
    path = Path(path)
    text, digest = read_text_and_digest(path, "a countermeasure score file")
    rows: list[tuple[str, str, float, bool, int]] = []
    for number, fields in numbered_fields(text):
        if len(fields) != 4:
            raise InputError(str(path), f"expected '{CM_LAYOUT}', got {len(fields)} field(s)", row=number)
        score = score_field(path, fields[2], number, "cm score")
        if fields[3] not in CM_KEYS:
            raise InputError(str(path), f"expected bonafide or spoof, got {fields[3]!r}", row=number, column="key")
        rows.append((fields[0], fields[1], score, CM_KEYS[fields[3]], number))
    if not rows:
        raise InputError(str(path), f"no scores (expected lines '{CM_LAYOUT}')")
    frame = pd.DataFrame(rows, columns=["enrol_utt", "test_utt", "cm_score", "spoof", "line"])
    return CmScoreFile(path, frame.astype({"enrol_utt": str, "test_utt": str, "cm_score": np.float64}), digest)
