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

import io
import json
import subprocess
import wave
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path, PurePosixPath
from typing import Any

import av
import numpy as np
import pandas as pd

from provenance.atomic import atomic_write_bytes, atomic_write_text
from provenance.digests import bytes_digest, file_digest, file_digests
from runner.corpora.base import (
    PROBLEMS_FILE,
    UTTERANCES_FILE,
    CorpusBuilder,
    CorpusError,
    CorpusTable,
    Release,
    corpus_adapter,
    read_problems,
    read_utterances,
)
from runner.stages import StageLog

FORMAT_VERSION = 1
SAMPLE_RATE = 16_000
WAV_HEADER_BYTES = 44  # the plain RIFF/WAVE header the ``wave`` module writes for PCM
DEFAULT_MIN_DURATION_S = 1.0
SOUNDS_ROOT = PurePosixPath("/usr/share/asterisk/sounds")
AUDIO_SUFFIXES = {".g722": "g722", ".gsm": "gsm", ".wav": None}  # suffix -> PyAV demuxer (None: probe)
NOT_SPEECH_FOLDER = "silence"
MANIFEST_FILE = "build-manifest.json"
AUDIO_FOLDER = "audio"
# The release of each utterance is its Debian package and version (source_package, source_version).
RELEASE = Release("Debian asterisk prompt packages", None)
INSTALL_HINT = "install it as root: apt-get install {package} (or run `nox -s tests` as root)"


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
class InstalledPackage:
    name: str
    version: str
    description: str
    files: tuple[PurePosixPath, ...]


def _dpkg_query(*args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["dpkg-query", *args], capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise CorpusError("dpkg-query", "not found: the default corpus needs a Debian-based system") from exc


def installed_package(name: str) -> InstalledPackage:
    """Version, description and installed files of a Debian package; ``CorpusError`` when it is missing."""
    query = _dpkg_query("-W", "-f=${db:Status-Status}\n${Version}\n${Description}", name)
    status, _, rest = query.stdout.partition("\n")
    if query.returncode != 0 or status != "installed":
        raise CorpusError(name, f"Debian package not installed; {INSTALL_HINT.format(package=name)}")
    version, _, description = rest.partition("\n")
    listing = _dpkg_query("-L", name)
    files = tuple(sorted(PurePosixPath(line) for line in listing.stdout.splitlines() if line.strip()))
    return InstalledPackage(name, version, " ".join(description.replace("\n .", "\n").split()), files)


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
    sources = []
    for file in installed.files:
        path = Path(file)
        wanted = file.suffix in AUDIO_SUFFIXES and file.is_relative_to(SOUNDS_ROOT)
        if wanted and path.is_file() and not path.is_symlink():
            sources.append(Source(voice, package, path, file.relative_to(SOUNDS_ROOT)))
    return sources


def decode_prompt(path: Path) -> np.ndarray:
    """Decode one prompt to 16 kHz mono int16 samples (libswresample through PyAV)."""
    resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
    chunks: list[np.ndarray] = []
    with av.open(str(path), format=AUDIO_SUFFIXES[path.suffix]) as container:
        for frame in container.decode(container.streams.audio[0]):
            chunks.extend(out.to_ndarray().reshape(-1) for out in resampler.resample(frame))
    chunks.extend(out.to_ndarray().reshape(-1) for out in resampler.resample(None))
    return np.concatenate(chunks).astype(np.int16) if chunks else np.zeros(0, np.int16)


def wav_bytes(samples: np.ndarray) -> bytes:
    """A 16 kHz mono 16-bit PCM WAV file: the plain RIFF header and the samples, nothing time-dependent."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(SAMPLE_RATE)
        writer.writeframes(samples.astype("<i2").tobytes())
    return buffer.getvalue()


def _interleaved(lists: list[list[Source]]) -> Iterator[Source]:
    """Take from each package in turn, so a small slice of a two-language voice has both languages."""
    for group in zip_longest(*lists):
        yield from (source for source in group if source is not None)


def _build_inputs(
    installed: dict[str, InstalledPackage],
    sources: dict[str, list[Source]],
    min_duration_s: float,
    max_per_speaker: int | None,
) -> dict[str, Any]:
    """Everything the built bytes depend on; the cache is valid only while this is unchanged."""
    packages = {}
    for name, package in sorted(installed.items()):
        digests = file_digests([source.path for source in sources[name]])
        listing = "".join(f"{s.relative.as_posix()}\t{d.blake3}\n" for s, d in zip(sources[name], digests, strict=True))
        packages[name] = {
            "version": package.version,
            "source_files": len(sources[name]),
            "source_blake3": bytes_digest(listing.encode()).blake3,
        }
    return {
        "format_version": FORMAT_VERSION,
        "min_duration_s": min_duration_s,
        "max_per_speaker": max_per_speaker,
        "packages": packages,
        "decoder": {
            "pyav": av.__version__,
            **{k: ".".join(map(str, v)) for k, v in av.library_versions.items()},
        },
    }


def _cached(out_dir: Path, inputs: dict[str, Any]) -> CorpusTable | None:
    """The existing build when its manifest records the same inputs, its tables are intact (BLAKE3) and every
    WAV has the size its duration implies (a full re-digest of the audio would cost as much as a rebuild)."""
    manifest_path = out_dir / MANIFEST_FILE
    if not manifest_path.is_file():
        return None
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    if manifest.get("inputs") != inputs:
        return None
    for name, digest in manifest.get("outputs", {}).items():
        if not (out_dir / name).is_file() or file_digest(out_dir / name).blake3 != digest:
            return None
    frame = read_utterances(out_dir / UTTERANCES_FILE)
    for path, seconds in zip(frame["path"], frame["duration_s"], strict=True):
        wav = out_dir / path
        if not wav.is_file() or wav.stat().st_size != WAV_HEADER_BYTES + 2 * round(seconds * SAMPLE_RATE):
            return None
    return CorpusTable(frame, read_problems(out_dir / PROBLEMS_FILE))


def build_default_corpus(
    out_dir: Path,
    *,
    min_duration_s: float = DEFAULT_MIN_DURATION_S,
    max_per_speaker: int | None = None,
    progress: bool = True,
) -> CorpusTable:
    """Build (or reuse) the 7-speaker default corpus in ``out_dir`` and return its table."""
    out_dir = Path(out_dir)
    installed: dict[str, InstalledPackage] = {}
    sources: dict[str, list[Source]] = {}
    for voice in VOICES:
        for package in voice.packages:
            found = installed_package(package.name)
            if package.voice_phrase not in found.description:
                raise CorpusError(
                    package.name,
                    f"description no longer says {package.voice_phrase!r}: review VOICES in {__name__}",
                )
            installed[package.name] = found
            sources[package.name] = package_sources(voice, package, found)
    inputs = _build_inputs(installed, sources, min_duration_s, max_per_speaker)
    cached = _cached(out_dir, inputs)
    if cached is not None:
        return cached

    builder = CorpusBuilder(out_dir)
    counts: dict[str, dict[str, int]] = {
        name: {"kept": 0, "not_speech": 0, "too_short": 0, "failed": 0} for name in installed
    }
    total = sum(len(s) for s in sources.values())
    log = StageLog.for_run(1, progress)  # a bar on a terminal, else a line each tenth of the prompts
    with log.part("default corpus", "prompts read", total) as prompts:
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
    log.done("default corpus", f"{sum(c['kept'] for c in counts.values())} utterances kept")
    table = builder.table()
    _remove_stale_audio(out_dir, set(table.frame["path"]))
    table.write(out_dir)
    manifest = _manifest(table, installed, inputs, counts, out_dir)
    atomic_write_text(out_dir / MANIFEST_FILE, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return table


def _add_prompt(builder: CorpusBuilder, source: Source, package: InstalledPackage, min_duration_s: float) -> str | None:
    """Decode one prompt and add it; returns None when kept, else the counter of why it was skipped."""
    where = source.path.as_posix()
    if NOT_SPEECH_FOLDER in source.relative.parts:
        builder.problem(where, "skipped: silence prompt, not speech")
        return "not_speech"
    try:
        samples = decode_prompt(source.path)
    except (av.FFmpegError, IndexError) as exc:
        builder.problem(where, f"skipped: decoding failed ({exc})")
        return "failed"
    duration = len(samples) / SAMPLE_RATE
    if duration < min_duration_s:
        builder.problem(where, f"skipped: {duration:.3f} s is shorter than the declared minimum {min_duration_s} s")
        return "too_short"
    output = builder.root / source.output
    atomic_write_bytes(output, wav_bytes(samples))
    voice = source.voice
    builder.add(
        output,
        utt_id=source.utt_id,
        speaker=voice.speaker,
        gender=voice.gender,
        language=source.package.language,
        source_package=package.name,
        source_version=package.version,
    )
    return None


def _remove_stale_audio(out_dir: Path, keep: set[str]) -> None:
    """Delete WAVs left by an earlier build with other parameters, so the folder matches its table."""
    audio = out_dir / AUDIO_FOLDER
    if audio.is_dir():
        for wav in audio.rglob("*.wav"):
            if wav.relative_to(out_dir).as_posix() not in keep:
                wav.unlink()


def _manifest(
    table: CorpusTable,
    installed: dict[str, InstalledPackage],
    inputs: dict[str, Any],
    counts: dict[str, dict[str, int]],
    out_dir: Path,
) -> dict[str, Any]:
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
    return {
        "corpus": "asterisk-default",
        "inputs": inputs,
        "speakers": speakers,
        "packages": {name: {"version": p.version, **counts[name]} for name, p in sorted(installed.items())},
        "totals": {
            "speakers": int(frame["speaker"].nunique()),
            "utterances": len(frame),
            "seconds": round(float(frame["duration_s"].sum()), 3),
            "problems": len(table.problems),
        },
        "transcripts": "none: no package ships the text of its prompts",
        "outputs": {name: file_digest(out_dir / name).blake3 for name in (UTTERANCES_FILE, PROBLEMS_FILE)},
    }


@corpus_adapter("asterisk", RELEASE)
def load_built_default_corpus(root: Path) -> CorpusTable:
    """A default corpus already built in ``root`` (see ``build_default_corpus``)."""
    if not (root / MANIFEST_FILE).is_file():
        raise CorpusError(str(root), "no built default corpus here: run `interbias corpus build` first")
    table = CorpusTable(read_utterances(root / UTTERANCES_FILE), read_problems(root / PROBLEMS_FILE))
    verify_audio(root, table.frame)
    return table


def verify_audio(root: Path, frame: pd.DataFrame) -> None:
    """Every audio file of a built table still has the BLAKE3 the table records (an edited or swapped file would
    otherwise be embedded, cached and signed under its old digest): a ``CorpusError`` naming the first that does
    not. Hashed through the run's digest index, so an unchanged rerun reads no file (any write changes the file's
    ctime, which the index compares)."""
    paths = [root / path for path in frame["path"]]
    try:
        digests = file_digests(paths)
    except OSError as error:
        raise CorpusError(
            str(error.filename or root), f"audio listed in {UTTERANCES_FILE} is unreadable: {error.strerror}"
        ) from None
    changed = [
        path
        for path, digest, recorded in zip(paths, digests, frame["blake3"], strict=True)
        if digest.blake3 != recorded
    ]
    if changed:
        raise CorpusError(
            str(changed[0]),
            f"differs from the BLAKE3 {UTTERANCES_FILE} records ({len(changed)} of {len(paths)} audio files changed "
            "since the corpus was built); rebuild it with `interbias corpus build`",
        )
