"""Corpora built from installed Debian packages of recorded speech (asterisk prompts, Fish Fillets NG voices).

What such a build shares: the installed package (version, description, files, through ``dpkg-query``), the
deterministic decode of each source file to 16 kHz mono 16-bit WAV (PyAV: libavcodec and libswresample), the build's
inputs (package versions, a digest of each package's source files, the decoder versions and the build parameters),
the cache of a finished build (valid only while its manifest records the same inputs and its files are intact), and
the verification of a built folder's audio at load, and the build itself (``build_from_packages``). Each corpus
(``asterisk.py``, ``fillets.py``) decides which files are speech, who speaks them and what its manifest says
(``PackageBuild``, a reader and a describer).
"""

from __future__ import annotations

import io
import json
import subprocess
import wave
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import av
import numpy as np
import pandas as pd

from provenance import atomic_write_bytes, atomic_write_text, bytes_digest, file_digest, file_digests
from runner.corpora.base import (
    PROBLEMS_FILE,
    UTTERANCES_FILE,
    CorpusBuilder,
    CorpusError,
    CorpusTable,
    read_problems,
    read_utterances,
)
from runner.stages import StageLog, StagePart

SAMPLE_RATE = 16_000
WAV_HEADER_BYTES = 44  # the plain RIFF/WAVE header the ``wave`` module writes for PCM
MANIFEST_FILE = "build-manifest.json"
AUDIO_FOLDER = "audio"
INSTALL_HINT = "install it as root: apt-get install {package} (or run `nox -s tests` as root)"


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
        raise CorpusError("dpkg-query", "not found: this corpus is built from Debian packages") from exc


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


def package_files(package: InstalledPackage, root: PurePosixPath, suffixes: Sequence[str]) -> list[Path]:
    """The package's own regular files (not links) under ``root`` with one of ``suffixes``, sorted by path."""
    chosen = []
    for file in package.files:
        path = Path(file)
        if file.suffix in suffixes and file.is_relative_to(root) and path.is_file() and not path.is_symlink():
            chosen.append(path)
    return chosen


def decode_16k(path: Path, demuxer: str | None) -> np.ndarray:
    """Decode one file to 16 kHz mono int16 samples (libswresample through PyAV); ``demuxer`` None probes."""
    resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
    chunks: list[np.ndarray] = []
    with av.open(str(path), format=demuxer) as container:
        for frame in container.decode(container.streams.audio[0]):
            chunks.extend(out.to_ndarray().reshape(-1) for out in resampler.resample(frame))
    chunks.extend(out.to_ndarray().reshape(-1) for out in resampler.resample(None))
    return np.concatenate(chunks).astype(np.int16) if chunks else np.zeros(0, np.int16)


def checked_package(name: str, phrase: str, where: str) -> InstalledPackage:
    """The installed package ``name``, after checking that its description still says ``phrase`` (the words that
    identify its voice or language); ``where`` names the table to review when it does not."""
    found = installed_package(name)
    if phrase not in found.description:
        raise CorpusError(name, f"description no longer says {phrase!r}: review {where}")
    return found


def add_decoded(
    builder: CorpusBuilder,
    source: Path,
    demuxer: str | None,
    output: str,
    min_duration_s: float,
    **row: Any,
) -> str | None:
    """Decode ``source`` to the WAV ``output`` (under the builder's root) and add its row (``row``: ``utt_id``,
    ``speaker`` and the optional columns); None when kept, else the counter of why it was skipped (``failed``,
    ``too_short``), with a problem naming the source."""
    where = source.as_posix()
    try:
        samples = decode_16k(source, demuxer)
    except (av.FFmpegError, IndexError) as exc:
        builder.problem(where, f"skipped: decoding failed ({exc})")
        return "failed"
    duration = len(samples) / SAMPLE_RATE
    if duration < min_duration_s:
        builder.problem(where, f"skipped: {duration:.3f} s is shorter than the declared minimum {min_duration_s} s")
        return "too_short"
    atomic_write_bytes(builder.root / output, wav_bytes(samples))
    builder.add(builder.root / output, **row)
    return None


def wav_bytes(samples: np.ndarray) -> bytes:
    """A 16 kHz mono 16-bit PCM WAV file: the plain RIFF header and the samples, nothing time-dependent."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(SAMPLE_RATE)
        writer.writeframes(samples.astype("<i2").tobytes())
    return buffer.getvalue()


def package_inputs(package: InstalledPackage, sources: Sequence[tuple[PurePosixPath, Path]]) -> dict[str, Any]:
    """A package's part of a build's inputs: its version, and the count and digest of its source files (each file's
    name as the build knows it, ``relative``, with the BLAKE3 of its bytes)."""
    digests = file_digests([path for _, path in sources])
    listing = "".join(f"{relative.as_posix()}\t{d.blake3}\n" for (relative, _), d in zip(sources, digests, strict=True))
    return {
        "version": package.version,
        "source_files": len(sources),
        "source_blake3": bytes_digest(listing.encode()).blake3,
    }


def decoder_versions() -> dict[str, str]:
    """The decoder a build's bytes depend on: PyAV and the FFmpeg libraries it carries."""
    return {"pyav": av.__version__, **{k: ".".join(map(str, v)) for k, v in av.library_versions.items()}}


def cached_build(out_dir: Path, inputs: dict[str, Any]) -> CorpusTable | None:
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


def finish_build(out_dir: Path, table: CorpusTable, manifest: dict[str, Any]) -> None:
    """Delete WAVs an earlier build left (so the folder matches its table), write the tables and the manifest
    with the digests of the tables (``outputs``), each file atomically."""
    keep = set(table.frame["path"])
    audio = out_dir / AUDIO_FOLDER
    if audio.is_dir():
        for wav in audio.rglob("*.wav"):
            if wav.relative_to(out_dir).as_posix() not in keep:
                wav.unlink()
    table.write(out_dir)
    outputs = {name: file_digest(out_dir / name).blake3 for name in (UTTERANCES_FILE, PROBLEMS_FILE)}
    atomic_write_text(
        out_dir / MANIFEST_FILE, json.dumps({**manifest, "outputs": outputs}, indent=2, sort_keys=True) + "\n"
    )


@dataclass(frozen=True)
class PackageBuild:
    """What a corpus built from installed Debian packages decides for itself: its name in the manifest and the
    progress lines, what a source file is called there, the version of its build rules and any rule its bytes
    depend on (``rules``: recorded in the inputs, so a changed rule rebuilds)."""

    corpus: str  # "asterisk-default", "fillets"
    stage: str  # the progress stage: "default corpus"
    unit: str  # what the stage reads: "prompts"
    format_version: int
    rules: dict[str, Any]


# Reads the sources into the builder (advancing the stage part once per source) and returns the counts per package.
Reader = Callable[[CorpusBuilder, StagePart], dict[str, dict[str, Any]]]
# The corpus's own part of the manifest (its speakers, what it lacks), from the built table.
Describer = Callable[[CorpusTable], dict[str, Any]]


def build_from_packages(
    out_dir: Path,
    build: PackageBuild,
    installed: dict[str, InstalledPackage],
    sources: dict[str, list[tuple[PurePosixPath, Path]]],
    *,
    min_duration_s: float,
    max_per_speaker: int | None,
    read: Reader,
    describe: Describer,
    progress: bool,
) -> CorpusTable:
    """Build (or reuse) a corpus of the ``installed`` packages in ``out_dir``: its inputs (the parameters, each
    package's version and the digest of its ``sources``, named as the build knows them, the decoder, the corpus's
    rules), the cached build while they are unchanged, else every source read by ``read`` with a progress line per
    tenth, and the manifest (the corpus's ``describe``, the inputs, the counts per package, the totals)."""
    out_dir = Path(out_dir)
    inputs = {
        "format_version": build.format_version,
        "min_duration_s": min_duration_s,
        "max_per_speaker": max_per_speaker,
        **build.rules,
        "packages": {name: package_inputs(package, sources[name]) for name, package in sorted(installed.items())},
        "decoder": decoder_versions(),
    }
    cached = cached_build(out_dir, inputs)
    if cached is not None:
        return cached
    builder = CorpusBuilder(out_dir)
    log = StageLog.for_run(1, progress)  # a bar on a terminal, else a line each tenth of the sources
    with log.part(build.stage, f"{build.unit} read", sum(len(found) for found in sources.values())) as part:
        counts = read(builder, part)
    log.done(build.stage, f"{sum(count['kept'] for count in counts.values())} utterances kept")
    table = builder.table()
    frame = table.frame
    manifest = {
        **describe(table),
        "corpus": build.corpus,
        "inputs": inputs,
        "packages": {name: {"version": package.version, **counts[name]} for name, package in sorted(installed.items())},
        "totals": {
            "speakers": int(frame["speaker"].nunique()),
            "utterances": len(frame),
            "seconds": round(float(frame["duration_s"].sum()), 3),
            "problems": len(table.problems),
        },
    }
    finish_build(out_dir, table, manifest)
    return table


def load_built(root: Path, command: str) -> CorpusTable:
    """A corpus already built in ``root``, its audio verified (``verify_audio``); ``command`` builds one."""
    if not (root / MANIFEST_FILE).is_file():
        raise CorpusError(str(root), f"no built corpus here: run `{command}` first")
    table = CorpusTable(read_utterances(root / UTTERANCES_FILE), read_problems(root / PROBLEMS_FILE))
    verify_audio(root, table.frame, command)
    return table


def verify_audio(root: Path, frame: pd.DataFrame, command: str) -> None:
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
            f"since the corpus was built); rebuild it with `{command}`",
        )
