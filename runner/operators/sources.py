"""Noise material for the babble and music operators, bound to them when a chain is built.

``NoiseSources`` names a corpus utterance table (``utt_id, speaker, path``, paths relative to the audio root,
see DESIGN.md section 10) and a music folder. It is not part of an operator's spec, so its content is named by
digest in ``describe()`` instead: the utterance table's BLAKE3 (the table itself carries each audio file's
BLAKE3) and the music folder's tree digest, each beside the file or folder's name only (never a machine path, so
that a description, and the cache keys and bundles built from it, do not depend on where the files live).
Anything missing or unreadable raises ``MissingMaterialError``, which the operators turn into a failed outcome carrying
the reason.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import pandas as pd

from provenance import file_digest, tree_digest
from runner.operators.audio import AudioReadError, read_audio, resample
from schemas import Error

CORPUS_COLUMNS = ("utt_id", "speaker", "path")
# Decoded, resampled material kept in memory: a few music files and the babble utterances last drawn.
DECODED_CACHE_SIZE = 256


class MissingMaterialError(Error):
    """Noise material that is absent or unreadable; the message is the failed outcome's reason."""


@dataclass(frozen=True)
class NoiseSources:
    """Where babble and music come from. ``audio_root`` defaults to the folder holding the utterance table."""

    utterances: Path | None = None
    audio_root: Path | None = None
    music_dir: Path | None = None
    _memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def corpus_table(self) -> pd.DataFrame:
        """The utterance table (utt_id, speaker, path as strings), read once and checked for the needed
        columns."""
        if "table" not in self._memo:
            self._memo["table"] = self._read_table()
        table: pd.DataFrame = self._memo["table"]
        return table

    def speaker_of(self, utt_id: str | None, purpose: str) -> str:
        """The speaker of ``utt_id`` in the utterance table; MissingMaterialError says what ``purpose`` cannot do."""
        if utt_id is None:
            raise MissingMaterialError(f"{purpose} needs the utterance id to find its speaker")
        table = self.corpus_table()
        speaker = table.loc[table["utt_id"] == utt_id, "speaker"]
        if speaker.empty:
            raise MissingMaterialError(f"utterance {utt_id!r} is not in the {purpose} table: its speaker is unknown")
        return str(speaker.iloc[0])

    def corpus_audio(self, relative_path: str, sr: int) -> np.ndarray:
        """One corpus utterance decoded and resampled to ``sr``; the path must stay inside the audio root."""
        if self.utterances is None:
            raise MissingMaterialError("no corpus utterance table is bound for babble")
        root = Path(self.audio_root) if self.audio_root is not None else Path(self.utterances).parent
        posix = PurePosixPath(relative_path)
        if posix.is_absolute() or ".." in posix.parts:
            raise MissingMaterialError(f"utterance path {relative_path!r} is not relative to the corpus root")
        return decoded_audio(str(root.joinpath(*posix.parts)), sr)

    def music_files(self) -> list[Path]:
        """The music folder's regular files, sorted by name (every file is music; unreadable ones fail)."""
        if self.music_dir is None:
            raise MissingMaterialError("no music folder is bound")
        folder = Path(self.music_dir)
        if not folder.is_dir():
            raise MissingMaterialError(f"music folder {folder} does not exist")
        files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
        if not files:
            raise MissingMaterialError(f"music folder {folder} holds no files")
        return files

    def music_audio(self, path: Path, sr: int) -> np.ndarray:
        """One music file decoded and resampled to ``sr``."""
        return decoded_audio(str(path), sr)

    def describe(self) -> dict[str, Any]:
        """Content digests of the bound material (or why there is none), for the manifest."""
        if "describe" not in self._memo:
            self._memo["describe"] = {"corpus": self._describe_corpus(), "music": self._describe_music()}
        description: dict[str, Any] = self._memo["describe"]
        return description

    def _describe_corpus(self) -> dict[str, Any]:
        if self.utterances is None:
            return {"problem": "no corpus utterance table is bound"}
        path = Path(self.utterances)
        if not path.is_file():
            return {"table": path.name, "problem": "utterance table does not exist"}
        return {"table": path.name, "blake3": file_digest(path).blake3}

    def _describe_music(self) -> dict[str, Any]:
        try:
            files = self.music_files()
        except MissingMaterialError as error:
            return {"folder": None if self.music_dir is None else Path(self.music_dir).name, "problem": str(error)}
        folder = files[0].parent
        return {"folder": folder.name, "files": len(files), "blake3": tree_digest(folder).blake3}

    def _read_table(self) -> pd.DataFrame:
        if self.utterances is None:
            raise MissingMaterialError("no corpus utterance table is bound for babble")
        table = read_listing(Path(self.utterances), CORPUS_COLUMNS, "utterance table")
        return table.sort_values("utt_id", kind="stable").reset_index(drop=True)


def read_listing(path: Path, columns: tuple[str, ...], label: str) -> pd.DataFrame:
    """A CSV of material (``columns`` as strings, in that order); MissingMaterialError names the ``label``, the file and
    what is wrong."""
    if not path.is_file():
        raise MissingMaterialError(f"{label} {path} does not exist")
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as error:
        raise MissingMaterialError(f"{label} {path} cannot be read: {error}") from error
    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise MissingMaterialError(f"{label} {path} lacks columns {missing}")
    return table.loc[:, list(columns)]


@functools.lru_cache(maxsize=DECODED_CACHE_SIZE)
def decoded_audio(path: str, sr: int) -> np.ndarray:
    """Decode and resample once per (file, rate); read-only, so no caller can alter the cache."""
    if not Path(path).is_file():
        raise MissingMaterialError(f"audio file {path} does not exist")
    try:
        wave, rate = read_audio(Path(path))
    except AudioReadError as error:
        raise MissingMaterialError(str(error)) from error
    out = resample(wave, rate, sr)
    out.setflags(write=False)
    return out
