"""Readers for published trial lists, read as-is (order kept, nothing filtered).

- VoxCeleb (``veri_test2.txt`` and others): ``<label> <enrol> <test>``, label 1 (target) or 0 (non-target).
- Kaldi ``trials`` files: ``<enrol> <test> target|nontarget``.

Both return a frame with ``enrol_utt``, ``test_utt`` (categorical: each id held once) and ``label`` (1 target, 0
non-target) in file order, read in blocks by ``audit.scores.lines`` (plain or gzip; a header line before the first
trial left out). A malformed line raises ``TrialListError`` naming the file and its line number; blank lines are
ignored. They live in the audit (not the runner) so that ``audit scores`` reads a reviewer's own lists without
importing the runner.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

import pandas as pd

from audit.scores.lines import FieldReader, Vocabulary, codes, read_pairs
from provenance import Digest
from schemas import InputError

TrialFormat = Literal["voxceleb", "kaldi"]
TRIAL_FORMATS: tuple[TrialFormat, ...] = get_args(TrialFormat)
VOXCELEB_LABELS = {"1": 1, "0": 0}
KALDI_LABELS = {"target": 1, "nontarget": 0}
LAYOUTS: dict[TrialFormat, str] = {"voxceleb": "<1|0> <enrol> <test>", "kaldi": "<enrol> <test> <target|nontarget>"}

# Per format: field positions of enrol, test and label.
FIELDS: dict[TrialFormat, tuple[int, int, int]] = {"voxceleb": (1, 2, 0), "kaldi": (0, 1, 2)}
SPELLINGS: dict[TrialFormat, dict[str, int]] = {"voxceleb": VOXCELEB_LABELS, "kaldi": KALDI_LABELS}


class TrialListError(InputError):
    """A trial list that is missing or has a line that does not follow its format."""


@dataclass(frozen=True)
class TrialList:
    """A trial list as read: the frame (``enrol_utt``, ``test_utt``, ``label``), its format and digest."""

    path: Path
    format: TrialFormat
    frame: pd.DataFrame
    digest: Digest
    header: int | None = None  # the number of a header line left out


def numbered_fields(text: str) -> Iterator[tuple[int, list[str]]]:
    """Whitespace-separated fields of each non-blank line, with its 1-based line number."""
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if fields:
            yield number, fields


def _is_trial(fields: list[str], trial_format: TrialFormat) -> bool:
    return len(fields) == 3 and fields[FIELDS[trial_format][2]] in SPELLINGS[trial_format]


def detect_trial_format(path: Path, head: list[tuple[int, list[str]]]) -> TrialFormat:
    """The format of the first data line (or of the second, when the first is a header): a 0/1 label first
    (VoxCeleb) or target/nontarget last (Kaldi)."""
    for _, fields in head[: 2 if len(head) == 2 and len(head[0][1]) == len(head[1][1]) else 1]:
        for trial_format in TRIAL_FORMATS:
            if _is_trial(fields, trial_format):
                return trial_format
    raise TrialListError(
        str(path),
        f"not a trial list: the first line is neither '{LAYOUTS['voxceleb']}' (VoxCeleb) "
        f"nor '{LAYOUTS['kaldi']}' (Kaldi)",
        row=head[0][0] if head else None,
    )


def header_line(head: list[tuple[int, list[str]]], is_data: Callable[[list[str]], bool]) -> int | None:
    """The number of the first line when it is a header (not data, as many fields as the line after it, which is
    data), else None."""
    if len(head) == 2 and len(head[0][1]) == len(head[1][1]) and not is_data(head[0][1]) and is_data(head[1][1]):
        return head[0][0]
    return None


def read_trial_list(
    path: Path, trial_format: TrialFormat | None = None, vocabulary: Vocabulary | None = None
) -> TrialList:
    """A trial list in ``trial_format``, or in the format its first line shows when None; plain or gzip, a header
    line skipped. Utterance ids are categorical over ``vocabulary`` (shared with the score files it is joined to)."""
    path = Path(path)
    if not path.exists():
        raise TrialListError(str(path), "trial list not found")
    vocabulary = vocabulary or Vocabulary()
    try:
        reader = FieldReader(path, "a trial list")
        head = reader.head()
        chosen = trial_format or detect_trial_format(path, head)
        header = header_line(head, lambda fields: _is_trial(fields, chosen))
        enrol_at, test_at, label_at = FIELDS[chosen]
        frame = read_pairs(
            reader, 3, f"'{LAYOUTS[chosen]}'", header, vocabulary, (enrol_at, test_at),
            {"label": lambda block: codes(path, block, label_at, SPELLINGS[chosen], LAYOUTS[chosen], "label")},
            numbered=False,
        )  # fmt: skip
        digest = reader.digest()
    except TrialListError:
        raise
    except InputError as error:
        raise TrialListError(error.source, error.problem, row=error.row, column=error.column) from None
    return TrialList(path, chosen, frame, digest, header)


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its utterance ids as plain strings (what the runner compares with its own tables)."""
    return frame.astype({"enrol_utt": str, "test_utt": str})


def read_voxceleb_trials(path: Path) -> pd.DataFrame:
    """A VoxCeleb trial list: ``1 id10270/x6uYqmx31kE/00001.wav id10270/8jEAjG6SegY/00008.wav``."""
    return _plain(read_trial_list(path, "voxceleb").frame)


def read_kaldi_trials(path: Path) -> pd.DataFrame:
    """A Kaldi trials file: ``<enrol> <test> target|nontarget``."""
    return _plain(read_trial_list(path, "kaldi").frame)
