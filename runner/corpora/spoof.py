"""Spoof folders: converted or synthesised speech made by any voice-conversion or TTS system (E10, E11).

Layout: audio files anywhere under the folder and ``manifest.csv`` at its root, one row per file::

    path,system,system_version,target_speaker,source_speaker
    vits/p225_001.wav,VITS,1.0.0 (vctk checkpoint),p225,
    knnvc/p225_src-p226_004.flac,kNN-VC,2023-06 (prematched),p225,p226

``path`` is relative to the folder; ``system``, ``system_version`` and ``target_speaker`` (the speaker of the
genuine corpus the file imitates) are required; ``source_speaker`` (whose speech a conversion started from) is
optional. In the utterance table ``speaker`` is the target speaker and ``utt_id`` the path without its suffix.
A manifest row that cannot be used, and an audio file the manifest does not list, is a problem, never silently
dropped or guessed.
"""

from __future__ import annotations

import csv
from pathlib import Path, PurePosixPath

from runner.corpora.base import CorpusBuilder, CorpusError, CorpusTable, Release, corpus_adapter

MANIFEST_FILE = "manifest.csv"
REQUIRED_FIELDS = ("path", "system", "system_version", "target_speaker")
AUDIO_SUFFIXES = (".wav", ".flac", ".mp3", ".ogg")
# A folder the user made: its release is what the configuration declares (each file's system version is its own).
RELEASE = Release("spoof folder", None)


def _read_manifest(path: Path) -> list[tuple[int, dict[str, str]]]:
    """The manifest's rows, numbered from 1 as data rows, with every value stripped."""
    if not path.is_file():
        columns = ", ".join(REQUIRED_FIELDS)
        raise CorpusError(str(path), f"spoof manifest not found: expected {MANIFEST_FILE} with columns {columns}")
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [field for field in REQUIRED_FIELDS if field not in (reader.fieldnames or [])]
        if missing:
            raise CorpusError(str(path), f"spoof manifest lacks column(s) {', '.join(missing)}", column=missing[0])
        return [
            (number, {key: (value or "").strip() for key, value in row.items() if key is not None})
            for number, row in enumerate(reader, start=1)
        ]


@corpus_adapter("spoof", RELEASE, spoofs=True)
def load_spoof(root: Path) -> CorpusTable:
    return read_spoof_folder(root, RELEASE)


def read_spoof_folder(root: Path, release: Release) -> CorpusTable:
    """The utterance table of a spoof folder laid out as the module docstring says, recorded as ``release``."""
    builder = CorpusBuilder(root, release)
    listed: set[str] = set()
    for number, row in _read_manifest(builder.root / MANIFEST_FILE):
        where = f"{MANIFEST_FILE}:{number}"
        empty = [field for field in REQUIRED_FIELDS if not row.get(field)]
        if empty:
            builder.problem(where, f"skipped: empty {', '.join(empty)}")
            continue
        relative = PurePosixPath(row["path"])
        if relative.is_absolute() or ".." in relative.parts or "\\" in row["path"]:
            builder.problem(where, f"skipped: path {row['path']!r} is not relative to the spoof folder")
            continue
        if relative.as_posix() in listed:
            builder.problem(where, f"skipped: {relative.as_posix()} is listed twice")
            continue
        listed.add(relative.as_posix())
        builder.add_listed(
            where,
            builder.root.joinpath(*relative.parts),
            utt_id=relative.with_suffix("").as_posix(),
            speaker=row["target_speaker"],
            spoof_system=row["system"],
            spoof_system_version=row["system_version"],
            spoof_source_speaker=row.get("source_speaker") or None,
        )
    for file in builder.walk("*", parsed=False):
        if file.suffix.lower() in AUDIO_SUFFIXES and builder.relative(file) not in listed:
            builder.problem(file, f"not used: not listed in {MANIFEST_FILE}")
    return builder.table()
