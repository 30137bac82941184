"""VoxCeleb1 (Nagrani et al. 2017): celebrities in YouTube videos, ``id/video/segment`` layout.

Layout, in either of the two ways the corpus is unpacked: merged, ``wav/<id>/<video>/<NNNNN>.wav`` (both
``vox1_dev_wav.zip`` and ``vox1_test_wav.zip`` unpack to ``wav/``, as lhotse's ``prepare_voxceleb`` reads them), or
split, ``dev/wav/...`` and ``test/wav/...`` (Kaldi's ``egs/voxceleb/v2/local/make_voxceleb1_v2.pl`` and WeSpeaker's
``examples/voxceleb/v2/local/prepare_data.sh`` unzip each archive into its own folder); the id folders may also sit
directly at the root. ``vox1_meta.csv`` (tab separated: ``VoxCeleb1 ID``, ``VGGFace1 ID``, ``Gender`` m/f,
``Nationality``, ``Set`` dev/test) gives gender and split. The official trial lists (``OFFICIAL_LISTS``) are found
at the root or in ``trials/`` under the name the VoxCeleb site gives them (``veri_test2.txt``) or the one WeSpeaker
saves them under (``vox1-O(cleaned).txt``); two copies of one list under both names must be the same bytes.

The ``utt_id`` is the segment path the trial lists use (``id10270/x6uYqmx31kE/00001.wav``) so an official list
is used as-is; every utterance a present trial list names but the folder lacks is a problem, and so is a list
whose size is not the published one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from audit.scores import read_voxceleb_trials
from runner.corpora.base import (
    CorpusBuilder,
    CorpusError,
    CorpusTable,
    Problem,
    Release,
    corpus_adapter,
)

METADATA_FILE = "vox1_meta.csv"
TRIAL_FOLDERS = (".", "trials")  # the root, and WeSpeaker's data/vox1/trials/
SPEAKER = re.compile(r"^id\d{5}$")
SEGMENT = re.compile(r"^\d{5}$")
GENDERS = {"m": "M", "f": "F"}
METADATA_COLUMNS = ("VoxCeleb1 ID", "Gender", "Set")
LAYOUT = "wav/, dev/wav/ or test/wav/ holding id<NNNNN>/<video>/<NNNNN>.wav"
RELEASE = Release("VoxCeleb1", "1.1")  # vox1_dev_wav and vox1_test_wav, with the cleaned trial lists (*2.txt)


@dataclass(frozen=True)
class OfficialList:
    """One published VoxCeleb1 trial list: its names, its published size (trials and targets) and the utterances
    it can name at most (VoxCeleb1-O: the test split's 4,874; E and H: the whole corpus's 153,516)."""

    key: str  # the VoxCeleb site's file name without .txt: what a configuration's ``trial_list`` names
    title: str
    wespeaker_name: str
    trials: int
    targets: int
    utterances_at_most: int

    @property
    def names(self) -> tuple[str, str]:
        return f"{self.key}.txt", self.wespeaker_name


TEST_UTTERANCES, ALL_UTTERANCES = 4_874, 153_516  # VoxCeleb1's test split and whole corpus, as published
# Sizes as published with the lists (https://www.robots.ox.ac.uk/~vgg/data/voxceleb/vox1.html; PaddleSpeech's
# examples/voxceleb/README.md tabulates them).
OFFICIAL_LISTS = {
    item.key: item
    for item in (
        OfficialList("veri_test", "VoxCeleb1-O", "vox1-O.txt", 37_720, 18_860, TEST_UTTERANCES),
        OfficialList("veri_test2", "VoxCeleb1-O (cleaned)", "vox1-O(cleaned).txt", 37_611, 18_802, TEST_UTTERANCES),
        OfficialList("list_test_all", "VoxCeleb1-E", "vox1-E.txt", 581_480, 290_743, ALL_UTTERANCES),
        OfficialList(
            "list_test_all2", "VoxCeleb1-E (cleaned)", "vox1-E(cleaned).txt", 579_818, 289_921, ALL_UTTERANCES
        ),
        OfficialList("list_test_hard", "VoxCeleb1-H", "vox1-H.txt", 552_536, 276_270, ALL_UTTERANCES),
        OfficialList(
            "list_test_hard2", "VoxCeleb1-H (cleaned)", "vox1-H(cleaned).txt", 550_894, 275_488, ALL_UTTERANCES
        ),
    )
}


def audio_bases(root: Path) -> list[Path]:
    """The folders holding the ``id*`` folders: ``wav/``, ``dev/wav/``, ``test/wav/`` where present, else ``root``."""
    bases = [root / part for part in ("wav", "dev/wav", "test/wav") if (root / part).is_dir()]
    return bases or [root]


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


def official_list_path(root: Path, key: str = "veri_test2") -> Path | None:
    """The file of the official list ``key`` in a VoxCeleb1 folder (either name, root or ``trials/``), or None.

    Two files of the list that differ are a ``CorpusError`` naming both; an unknown key is a ``KeyError``.
    """
    found = [
        Path(root) / folder / name
        for folder in TRIAL_FOLDERS
        for name in OFFICIAL_LISTS[key].names
        if (Path(root) / folder / name).is_file()
    ]
    for other in found[1:]:
        if other.read_bytes() != found[0].read_bytes():
            raise CorpusError(str(other), f"differs from {found[0]}: two copies of {OFFICIAL_LISTS[key].title}")
    return found[0] if found else None


def official_trials(root: Path, key: str = "veri_test2") -> pd.DataFrame:
    """One official trial list of a VoxCeleb1 folder, read as published (order and labels kept)."""
    path = official_list_path(root, key)
    if path is None:
        names = " or ".join(OFFICIAL_LISTS[key].names)
        raise CorpusError(str(root), f"{OFFICIAL_LISTS[key].title} not found: expected {names} here or in trials/")
    return read_voxceleb_trials(path)


@corpus_adapter("voxceleb1", RELEASE)
def load_voxceleb1(root: Path) -> CorpusTable:
    builder = CorpusBuilder(root, RELEASE, LAYOUT)
    metadata = _read_metadata(builder)
    for base in audio_bases(builder.root):
        for file in builder.walk("*.wav", base):
            parts = file.relative_to(base).parts
            if len(parts) != 3 or not SPEAKER.match(parts[0]) or not SEGMENT.match(file.stem):
                builder.problem(file, "skipped: not at id<NNNNN>/<video>/<NNNNN>.wav")
                continue
            _add_segment(builder, file, parts, metadata)
    table = builder.table()
    known = set(table.frame["utt_id"])
    for key, item in OFFICIAL_LISTS.items():
        path = official_list_path(builder.root, key)
        if path is None:
            continue
        name = builder.relative(path)
        trials = read_voxceleb_trials(path)
        if (len(trials), int(trials["label"].sum())) != (item.trials, item.targets):
            builder.problem(
                name,
                f"{len(trials):,} trials ({int(trials['label'].sum()):,} target) where {item.title} has"
                f" {item.trials:,} ({item.targets:,}) as published",
            )
        named = sorted(set(trials["enrol_utt"]) | set(trials["test_utt"]))
        builder.problems.extend(
            Problem(name, f"trial list names {utt} but the corpus folder lacks it") for utt in named if utt not in known
        )
    return CorpusTable(table.frame, tuple(sorted(set(builder.problems))))


def _add_segment(
    builder: CorpusBuilder, file: Path, parts: tuple[str, ...], metadata: dict[str, dict[str, str]]
) -> None:
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
