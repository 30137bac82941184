"""VoxCeleb1 (Nagrani et al. 2017): celebrities in YouTube videos, ``id/video/segment`` layout.

Layout: ``wav/<id>/<video>/<NNNNN>.wav`` (or the id folders directly at the root), ``vox1_meta.csv`` (tab
separated: ``VoxCeleb1 ID``, ``VGGFace1 ID``, ``Gender`` m/f, ``Nationality``, ``Set`` dev/test) and the
official trial lists (``veri_test2.txt``, ``list_test_all2.txt``, ``list_test_hard2.txt``, ``veri_test.txt``).
The ``utt_id`` is the segment path the trial lists use (``id10270/x6uYqmx31kE/00001.wav``) so an official list
is used as-is; every utterance a present trial list names but the folder lacks is a problem.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from audit.scores.trial_lists import read_voxceleb_trials
from runner.corpora.base import (
    CorpusBuilder,
    CorpusError,
    CorpusTable,
    Problem,
    Release,
    corpus_adapter,
    sorted_files,
)

METADATA_FILE = "vox1_meta.csv"
OFFICIAL_TRIAL_LISTS = ("veri_test.txt", "veri_test2.txt", "list_test_all2.txt", "list_test_hard2.txt")
SPEAKER = re.compile(r"^id\d{5}$")
SEGMENT = re.compile(r"^\d{5}$")
GENDERS = {"m": "M", "f": "F"}
METADATA_COLUMNS = ("VoxCeleb1 ID", "Gender", "Set")
RELEASE = Release("VoxCeleb1", "1.1")  # vox1_dev_wav and vox1_test_wav, with the cleaned trial lists (*2.txt)


def audio_base(root: Path) -> Path:
    """The folder holding the ``id*`` folders: ``root/wav`` when present, else ``root``."""
    return root / "wav" if (root / "wav").is_dir() else root


def _read_metadata(builder: CorpusBuilder) -> dict[str, dict[str, str]]:
    """Speaker id -> row of ``vox1_meta.csv``; ``{}`` with a problem when the file is absent."""
    path = builder.root / METADATA_FILE
    if not path.is_file():
        builder.problem(METADATA_FILE, "missing: gender and split are left empty")
        return {}
    frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    frame.columns = [column.strip() for column in frame.columns]
    for column in METADATA_COLUMNS:
        if column not in frame.columns:
            raise CorpusError(str(path), f"column {column!r} missing (columns: {', '.join(frame.columns)})")
    frame = frame.apply(lambda column: column.str.strip())
    return {row["VoxCeleb1 ID"]: row for row in frame.to_dict("records")}


def official_trials(root: Path, name: str = "veri_test2.txt") -> pd.DataFrame:
    """One official trial list of a VoxCeleb1 folder, read as published (order and labels kept)."""
    return read_voxceleb_trials(Path(root) / name)


@corpus_adapter("voxceleb1", RELEASE)
def load_voxceleb1(root: Path) -> CorpusTable:
    builder = CorpusBuilder(root, RELEASE)
    metadata = _read_metadata(builder)
    base = audio_base(builder.root)
    for file in sorted_files(base, "*.wav"):
        parts = file.relative_to(base).parts
        if len(parts) != 3 or not SPEAKER.match(parts[0]) or not SEGMENT.match(file.stem):
            builder.problem(file, "skipped: not at id<NNNNN>/<video>/<NNNNN>.wav")
            continue
        speaker, video = parts[0], parts[1]
        row = metadata.get(speaker)
        gender = GENDERS.get(row["Gender"].lower()) if row else None
        added = builder.add(
            file,
            utt_id="/".join(parts),
            speaker=speaker,
            session=video,
            gender=gender,
            split=row["Set"] if row else None,
        )
        if added and row is None and metadata:
            builder.problem(file, f"kept without gender and split: {speaker} not in {METADATA_FILE}")
        elif added and row is not None and gender is None:
            builder.problem(file, f"kept with gender empty: {METADATA_FILE} gives {row['Gender']!r}")
    table = builder.table()
    known = set(table.frame["utt_id"])
    for name in OFFICIAL_TRIAL_LISTS:
        if (builder.root / name).is_file():
            trials = official_trials(builder.root, name)
            named = sorted(set(trials["enrol_utt"]) | set(trials["test_utt"]))
            builder.problems.extend(
                Problem(name, f"trial list names {utt} but the corpus folder lacks it")
                for utt in named
                if utt not in known
            )
    return CorpusTable(table.frame, tuple(sorted(set(builder.problems))))
