"""Readers for published trial lists, read as-is (order kept, nothing filtered).

- VoxCeleb (``veri_test2.txt`` and others): ``<label> <enrol> <test>``, label 1 (target) or 0 (non-target).
- Kaldi ``trials`` files: ``<enrol> <test> target|nontarget``.

Both return a frame with ``enrol_utt``, ``test_utt`` and ``label`` (1 target, 0 non-target) in file order. A
malformed line raises ``TrialListError`` naming the file and its line number; blank lines are ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from audit.errors import InputError

VOXCELEB_LABELS = {"1": 1, "0": 0}
KALDI_LABELS = {"target": 1, "nontarget": 0}

ParseLine = Callable[[list[str]], tuple[str, str, int]]


class TrialListError(InputError):
    """A trial list that is missing or has a line that does not follow its format."""


def _numbered_fields(path: Path) -> Iterator[tuple[int, list[str]]]:
    if not path.is_file():
        raise TrialListError(str(path), "trial list not found")
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if fields:
                yield number, fields


def _read(path: Path, expected: str, parse: ParseLine) -> pd.DataFrame:
    path = Path(path)
    rows: list[tuple[str, str, int]] = []
    for number, fields in _numbered_fields(path):
        if len(fields) != 3:
            raise TrialListError(str(path), f"expected '{expected}', got {len(fields)} field(s)", row=number)
        try:
            rows.append(parse(fields))
        except KeyError as exc:
            raise TrialListError(
                str(path), f"expected '{expected}', got label {exc.args[0]!r}", row=number, column="label"
            ) from exc
    frame = pd.DataFrame(rows, columns=["enrol_utt", "test_utt", "label"])
    return frame.astype({"enrol_utt": str, "test_utt": str, "label": np.int8})


def read_voxceleb_trials(path: Path) -> pd.DataFrame:
    """A VoxCeleb trial list: ``1 id10270/x6uYqmx31kE/00001.wav id10270/8jEAjG6SegY/00008.wav``."""
    return _read(path, "<1|0> <enrol> <test>", lambda f: (f[1], f[2], VOXCELEB_LABELS[f[0]]))


def read_kaldi_trials(path: Path) -> pd.DataFrame:
    """A Kaldi trials file: ``<enrol> <test> target|nontarget``."""
    return _read(path, "<enrol> <test> <target|nontarget>", lambda f: (f[0], f[1], KALDI_LABELS[f[2]]))
