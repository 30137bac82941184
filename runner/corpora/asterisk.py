"""The embedded default corpus: real recorded speech from Debian's asterisk prompt packages, 7 speakers.

Eight packages (``configs/system-packages.txt``) hold seven voices: the English and the Mexican-Spanish core
sounds are both by Allison Smith (their descriptions say so), so they are one speaker in two languages. Each
voice's identity is checked against its package description at build time. Gender is taken from the
upstream install folder code ``<lang>_<COUNTRY>_<f|m>_<voice>`` where the package has one; the two packages
without it (``fr/`` Armelle Desjardins, ``es/`` July E. Jimenez) state no gender anywhere, so theirs is left
empty and the build manifest says why. No package ships transcripts, so ``transcript`` is empty.

Every prompt is decoded with PyAV (G.722, GSM, PCM WAV) to 16 kHz mono 16-bit WAV. ``silence/`` prompts and
prompts shorter than ``min_duration_s`` are skipped and listed in ``problems.csv``. The build is deterministic
(sorted inputs, no timestamps: a rebuild gives the same bytes) and cached: ``build-manifest.json`` records the
package versions, the digests of the source files, the decoder versions and the build parameters; a later
call with the same inputs returns the existing table without decoding.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from runner.corpora.base import (
    CorpusBuilder,
    CorpusTable,
    Release,
    corpus_adapter,
)
from runner.corpora.debian import (
    AUDIO_FOLDER,
    InstalledPackage,
    PackageBuild,
    add_decoded,
    build_from_packages,
    checked_package,
    decode_16k,
    load_built,
    package_files,
)
from runner.stages import StagePart

FORMAT_VERSION = 1
DEFAULT_MIN_DURATION_S = 1.0
SOUNDS_ROOT = PurePosixPath("/usr/share/asterisk/sounds")
AUDIO_SUFFIXES = {".g722": "g722", ".gsm": "gsm", ".wav": None}  # suffix -> PyAV demuxer (None: probe)
NOT_SPEECH_FOLDER = "silence"
BUILD_COMMAND = "interbias corpus build"
# The release of each utterance is its Debian package and version (source_package, source_version).
RELEASE = Release("Debian asterisk prompt packages", None)
BUILD = PackageBuild("asterisk-default", "default corpus", "prompts", FORMAT_VERSION, {})


@dataclass(frozen=True)
class Package:
    """One Debian package of prompts, its language and the phrase of its description that names the voice."""

    name: str
    language: str
    voice_phrase: str


@dataclass(frozen=True)
class Voice:
    """One speaker of the corpus: the packages that hold their voice and what is known of their gender."""

    speaker: str
    packages: tuple[Package, ...]
    gender: str | None
    gender_source: str


VOICES: tuple[Voice, ...] = (
    Voice(
        "allison-smith",
        (
            Package("asterisk-core-sounds-en-g722", "en-US", "in English (US, by Allison Smith)"),
            Package("asterisk-core-sounds-es-g722", "es-MX", "in Spanish (MX, by Allison Smith)"),
        ),
        "F",
        "install folders en_US_f_Allison and es_MX_f_Allison (f = female)",
    ),
    Voice(
        "june-wallack",
        (Package("asterisk-core-sounds-fr-g722", "fr-CA", "in French (Canadian, by June Wallack)"),),
        "F",
        "install folder fr_CA_f_June (f = female)",
    ),
    Voice(
        "carlo-flora",
        (Package("asterisk-core-sounds-it-g722", "it-IT", "in Italian (by Carlo Flora)"),),
        "M",
        "install folder it_IT_m_Carlo (m = male)",
    ),
    Voice(
        "ivrvoice-ru",
        (Package("asterisk-core-sounds-ru-g722", "ru-RU", "in Russian (provided by Maxim Topal)"),),
        "F",
        "install folder ru_RU_f_IvrvoiceRU (f = female); the description names the provider, not the voice",
    ),
    Voice(
        "paola-dal-zot",
        (Package("asterisk-prompt-it-menardi-wav", "it-IT", "re-recorded in Italian by Paola Dal Zot"),),
        "F",
        "install folder it_IT_f_Menardi (f = female)",
    ),
    Voice(
        "armelle-desjardins",
        (Package("asterisk-prompt-fr-armelle", "fr", "recorded by Armelle Desjardins"),),
        None,
        "left empty: the description names the voice ('recorded by Armelle Desjardins') but states no gender,"
        " and the install folder fr/ carries no gender code",
    ),
    Voice(
        "july-jimenez",
        (Package("asterisk-prompt-es-co", "es-CO", "Colombian Spanish voice prompts"),),
        None,
        "left empty: LEEME names the voice ('con la voz de July E. Jimenez') but no file states a gender,"
        " and the install folder es/ carries no gender code",
    ),
)


@dataclass(frozen=True)
class Source:
    """One prompt file of a package and where its decoded WAV goes."""

    voice: Voice
    package: Package
    path: Path
    relative: PurePosixPath  # under SOUNDS_ROOT, e.g. en_US_f_Allison/digits/1.g722

    @property
    def utt_id(self) -> str:
        return f"{self.voice.speaker}/{self.relative.with_suffix('').as_posix()}"

    @property
    def output(self) -> str:
        return f"{AUDIO_FOLDER}/{self.utt_id}.wav"


def package_sources(voice: Voice, package: Package, installed: InstalledPackage) -> list[Source]:
    """The package's own prompt files (regular files, not symlinks), sorted by path."""
    files = package_files(installed, SOUNDS_ROOT, tuple(AUDIO_SUFFIXES))
    return [Source(voice, package, path, PurePosixPath(path).relative_to(SOUNDS_ROOT)) for path in files]


def decode_prompt(path: Path) -> np.ndarray:
    """Decode one prompt to 16 kHz mono int16 samples (libswresample through PyAV)."""
    return decode_16k(path, AUDIO_SUFFIXES[path.suffix])


def _interleaved(lists: list[list[Source]]) -> Iterator[Source]:
    """Take from each package in turn, so a small slice of a two-language voice has both languages."""
    for group in zip_longest(*lists):
        yield from (source for source in group if source is not None)


def build_default_corpus(
    out_dir: Path,
    *,
    min_duration_s: float = DEFAULT_MIN_DURATION_S,
    max_per_speaker: int | None = None,
    progress: bool = True,
) -> CorpusTable:
    """Build (or reuse) the 7-speaker default corpus in ``out_dir`` and return its table."""
    installed: dict[str, InstalledPackage] = {}
    sources: dict[str, list[Source]] = {}
    for voice in VOICES:
        for package in voice.packages:
            found = checked_package(package.name, package.voice_phrase, f"VOICES in {__name__}")
            installed[package.name] = found
            sources[package.name] = package_sources(voice, package, found)

    def read(builder: CorpusBuilder, prompts: StagePart) -> dict[str, dict[str, Any]]:
        counts: dict[str, dict[str, Any]] = {
            name: {"kept": 0, "not_speech": 0, "too_short": 0, "failed": 0} for name in installed
        }
        for voice in VOICES:
            kept = 0
            for source in _interleaved([sources[p.name] for p in voice.packages]):
                if max_per_speaker is not None and kept >= max_per_speaker:
                    break
                prompts.advance(1)
                count = counts[source.package.name]
                reason = _add_prompt(builder, source, installed[source.package.name], min_duration_s)
                if reason is None:
                    kept += 1
                    count["kept"] += 1
                else:
                    count[reason] += 1
        return counts

    return build_from_packages(
        out_dir,
        BUILD,
        installed,
        {name: [(source.relative, source.path) for source in found] for name, found in sources.items()},
        min_duration_s=min_duration_s,
        max_per_speaker=max_per_speaker,
        read=read,
        describe=_description,
        progress=progress,
    )


def _add_prompt(builder: CorpusBuilder, source: Source, package: InstalledPackage, min_duration_s: float) -> str | None:
    """Decode one prompt and add it; returns None when kept, else the counter of why it was skipped."""
    if NOT_SPEECH_FOLDER in source.relative.parts:
        builder.problem(source.path.as_posix(), "skipped: silence prompt, not speech")
        return "not_speech"
    return add_decoded(
        builder,
        source.path,
        AUDIO_SUFFIXES[source.path.suffix],
        source.output,
        min_duration_s,
        utt_id=source.utt_id,
        speaker=source.voice.speaker,
        gender=source.voice.gender,
        language=source.package.language,
        source_package=package.name,
        source_version=package.version,
    )


def _description(table: CorpusTable) -> dict[str, Any]:
    """The manifest's account of the voices: who each speaker is, from which packages, and how much they say."""
    frame = table.frame
    speakers = []
    for voice in VOICES:
        rows = frame[frame["speaker"] == voice.speaker]
        speakers.append(
            {
                "speaker": voice.speaker,
                "gender": voice.gender,
                "gender_source": voice.gender_source,
                "packages": [p.name for p in voice.packages],
                "languages": [p.language for p in voice.packages],
                "identity": {p.name: p.voice_phrase for p in voice.packages},
                "utterances": len(rows),
                "seconds": round(float(rows["duration_s"].sum()), 3),
            }
        )
    return {"speakers": speakers, "transcripts": "none: no package ships the text of its prompts"}


@corpus_adapter("asterisk", RELEASE)
def load_built_default_corpus(root: Path) -> CorpusTable:
    """A default corpus already built in ``root`` (see ``build_default_corpus``), its audio verified."""
    return load_built(root, BUILD_COMMAND)
