"""Readers for published trial lists, read as-is (order kept, nothing filtered).

- VoxCeleb (``veri_test2.txt`` and others): ``<label> <enrol> <test>``, label 1 (target) or 0 (non-target).
- Kaldi ``trials`` files: ``<enrol> <test> target|nontarget``.

Both return a frame with ``enrol_utt``, ``test_utt`` and ``label`` (1 target, 0 non-target) in file order. A
malformed line raises ``TrialListError`` naming the file and its line number; blank lines are ignored. They live
in the audit (not the runner) so that ``audit scores`` reads a reviewer's own lists without importing the runner.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

import numpy as np
import pandas as pd

from audit.table.reading import read_text_and_digest
from provenance.digests import Digest
from schemas.errors import InputError

TrialFormat = Literal["voxceleb", "kaldi"]
TRIAL_FORMATS: tuple[TrialFormat, ...] = get_args(TrialFormat)
VOXCELEB_LABELS = {"1": 1, "0": 0}
KALDI_LABELS = {"target": 1, "nontarget": 0}
LAYOUTS: dict[TrialFormat, str] = {"voxceleb": "<1|0> <enrol> <test>", "kaldi": "<enrol> <test> <target|nontarget>"}

ParseLine = Callable[[list[str]], tuple[str, str, int]]
PARSERS: dict[TrialFormat, ParseLine] = {
    "voxceleb": lambda f: (f[1], f[2], VOXCELEB_LABELS[f[0]]),
    "kaldi": lambda f: (f[0], f[1], KALDI_LABELS[f[2]]),
}


class TrialListError(InputError):
    """A trial list that is missing or has a line that does not follow its format."""


@dataclass(frozen=True)
class TrialList:
    """A trial list as read: the frame (``enrol_utt``, ``test_utt``, ``label``), its format and digest."""

    path: Path
    format: TrialFormat
    frame: pd.DataFrame
    digest: Digest


def numbered_fields(text: str) -> Iterator[tuple[int, list[str]]]:
    """Whitespace-separated fields of each non-blank line, with its 1-based line number."""
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if fields:
            yield number, fields


def _text(path: Path) -> tuple[str, Digest]:
    if not path.exists():
        raise TrialListError(str(path), "trial list not found")
    try:
        return read_text_and_digest(path, "a trial list")
    except InputError as error:
        raise TrialListError(error.source, error.problem) from None


def detect_trial_format(path: Path, text: str) -> TrialFormat:
    """The format of the first non-blank line: a 0/1 label first (VoxCeleb) or target/nontarget last (Kaldi)."""
    for _, fields in numbered_fields(text):
        if len(fields) == 3 and fields[0] in VOXCELEB_LABELS:
            return "voxceleb"
        if len(fields) == 3 and fields[2] in KALDI_LABELS:
            return "kaldi"
        break
    raise TrialListError(
        str(path),
        f"not a trial list: the first line is neither '{LAYOUTS['voxceleb']}' (VoxCeleb) "
        f"nor '{LAYOUTS['kaldi']}' (Kaldi)",
        row=next((number for number, _ in numbered_fields(text)), None),
    )


def parse_trials(path: Path, text: str, trial_format: TrialFormat) -> pd.DataFrame:
    """Every non-blank line of ``text`` in ``trial_format``, or the first line that does not follow it."""
    expected, parse = LAYOUTS[trial_format], PARSERS[trial_format]
    rows: list[tuple[str, str, int]] = []
    for number, fields in numbered_fields(text):
        if len(fields) != 3:
            raise TrialListError(str(path), f"expected '{expected}', got {len(fields)} field(s)", row=number)
        try:
            rows.append(parse(fields))
        except KeyError as exc:
            raise TrialListError(
                str(path), f"expected '{expected}', got label {exc.args[0]!r}", row=number, column="label"
            ) from exc
    if not rows:
        raise TrialListError(str(path), f"no trials (expected lines '{expected}')")
    frame = pd.DataFrame(rows, columns=["enrol_utt", "test_utt", "label"])
    return frame.astype({"enrol_utt": str, "test_utt": str, "label": np.int8})


def read_trial_list(path: Path, trial_format: TrialFormat | None = None) -> TrialList:
    """A trial list in ``trial_format``, or in the format its first line shows when None."""
    path = Path(path)
    text, digest = _text(path)
    chosen = trial_format or detect_trial_format(path, text)
    return TrialList(path, chosen, parse_trials(path, text, chosen), digest)


def read_voxceleb_trials(path: Path) -> pd.DataFrame:
    """A VoxCeleb trial list: ``1 id10270/x6uYqmx31kE/00001.wav id10270/8jEAjG6SegY/00008.wav``."""
    return read_trial_list(path, "voxceleb").frame


def read_kaldi_trials(path: Path) -> pd.DataFrame:
    """A Kaldi trials file: ``<enrol> <test> target|nontarget``."""
    return read_trial_list(path, "kaldi").frame
