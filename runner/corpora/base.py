"""What every corpus adapter shares: the result type, audio headers, the registry and the table files.

An adapter walks a corpus folder and returns a ``CorpusTable``: the utterance table (``schemas.utterances``)
and the problems it met, one ``(path, reason)`` per file or metadata entry it could not use as published.
Nothing is dropped silently: a file that is skipped, or kept with a field left empty, has a problem saying so.
Adapters register themselves by name with the release they read (``@corpus_adapter("ravdess", Release("RAVDESS",
"1.0.0"))``) and are reached through ``load_corpus``. Every row records that release in ``source_package`` and
``source_version``; where the release is not fixed by the adapter (Common Voice, spoof folders) it is what the folder
shows or what the configuration declares, and a release nobody declared is a problem, never a guess.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
import pandera.errors
import soundfile

from provenance.atomic import atomic_write_bytes
from provenance.digests import file_digests
from schemas.bundle import PROBLEMS_FILE, UTTERANCES_FILE
from schemas.errors import Error, InputError
from schemas.utterances import OPTIONAL_COLUMNS, UTTERANCE_COLUMNS, UtteranceSchema


class CorpusError(InputError):
    """A corpus folder, package or metadata file that is missing or unusable as a whole."""


class AudioUnreadableError(Error):
    """An audio file whose header cannot be read or that holds no samples: a problem, not a crash."""


class Problem(NamedTuple):
    """A file or metadata entry an adapter could not use as published, and what it did about it."""

    path: str
    reason: str


@dataclass(frozen=True)
class AudioHeader:
    duration_s: float
    sample_rate: int


def probe_audio(path: Path) -> AudioHeader:
    """Duration and sample rate from the file header (libsndfile: WAV, FLAC, MP3, OGG)."""
    try:
        info = soundfile.info(str(path))
    except (soundfile.LibsndfileError, RuntimeError, TypeError) as exc:
        reason = getattr(exc, "error_string", None) or str(exc).replace(str(path), "<file>")
        raise AudioUnreadableError(f"unreadable audio ({reason})") from exc
    if info.frames <= 0 or info.samplerate <= 0:
        raise AudioUnreadableError("audio holds no samples")
    return AudioHeader(info.frames / info.samplerate, int(info.samplerate))


def validate_utterances(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """Validate (and coerce) an utterance table; every failure is counted, the first one is named.

    Rows are numbered from 1 as data rows of the CSV (the header is not counted).
    """
    try:
        return UtteranceSchema.validate(frame, lazy=True)
    except pandera.errors.SchemaErrors as exc:
        cases = exc.failure_cases
        first = cases.iloc[0]
        row = None if pd.isna(first["index"]) else int(first["index"]) + 1
        column = None if pd.isna(first["column"]) else str(first["column"])
        problem = (
            f"utterance table breaks the schema: {first['check']} failed for value {first['failure_case']!r}"
            f" ({len(cases)} failure(s) in all)"
        )
        raise CorpusError(source, problem, row=row, column=column) from exc


@dataclass(frozen=True)
class Release:
    """The published corpus an adapter reads and its release; ``version`` None when the adapter reads every release
    alike and the folder or the configuration says which one it is."""

    package: str
    version: str | None


@dataclass(frozen=True)
class CorpusTable:
    """An utterance table (validated, sorted by ``utt_id``) and the problems met while building it."""

    frame: pd.DataFrame
    problems: tuple[Problem, ...] = ()

    @classmethod
    def from_records(cls, records: Iterable[dict[str, Any]], problems: Iterable[Problem], source: str) -> CorpusTable:
        frame = pd.DataFrame.from_records(list(records), columns=list(UTTERANCE_COLUMNS))
        frame = frame.sort_values("utt_id", kind="stable").reset_index(drop=True)
        return cls(validate_utterances(frame, source), tuple(sorted(set(problems))))

    def utterances_csv(self) -> bytes:
        """The table as CSV bytes: every contract column in contract order, empty cells for nulls."""
        buffer = io.StringIO()
        self.frame.reindex(columns=list(UTTERANCE_COLUMNS)).to_csv(buffer, index=False, lineterminator="\n")
        return buffer.getvalue().encode("utf-8")

    def problems_csv(self) -> bytes:
        frame = pd.DataFrame(list(self.problems), columns=list(Problem._fields))
        return frame.to_csv(index=False, lineterminator="\n").encode("utf-8")

    def write(self, folder: Path) -> None:
        """Write ``utterances.csv`` and ``problems.csv`` into ``folder``, each atomically."""
        atomic_write_bytes(Path(folder) / UTTERANCES_FILE, self.utterances_csv())
        atomic_write_bytes(Path(folder) / PROBLEMS_FILE, self.problems_csv())


def read_utterances(path: Path) -> pd.DataFrame:
    """Read and validate an ``utterances.csv``; a missing or broken file is a ``CorpusError`` naming it."""
    path = Path(path)
    if not path.is_file():
        raise CorpusError(str(path), "utterance table not found")
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    return validate_utterances(frame, str(path))


def read_problems(path: Path) -> tuple[Problem, ...]:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    return tuple(Problem(str(path), str(reason)) for path, reason in zip(frame["path"], frame["reason"], strict=True))


class CorpusBuilder:
    """Collects utterance rows and problems while an adapter walks a corpus folder."""

    def __init__(self, root: Path, release: Release | None = None) -> None:
        self.root = Path(root).absolute()
        self.release = release
        self.records: list[dict[str, Any]] = []
        self.files: list[Path] = []  # the audio file of each record
        self.problems: list[Problem] = []

    def relative(self, file: Path) -> str:
        return Path(file).absolute().relative_to(self.root).as_posix()

    def problem(self, file: Path | str, reason: str) -> None:
        """Record a problem; ``file`` is a path under the root or a name (a metadata file, a source path)."""
        name = self.relative(file) if isinstance(file, Path) else file
        self.problems.append(Problem(name, reason))

    def add(self, file: Path, utt_id: str, speaker: str, **fields: Any) -> bool:
        """Read the header and digest of ``file`` and add its row; an unreadable file becomes a problem."""
        unknown = set(fields) - set(OPTIONAL_COLUMNS)
        if unknown:
            raise TypeError(f"not utterance-table columns: {sorted(unknown)}")
        try:
            header = probe_audio(file)
        except AudioUnreadableError as exc:
            self.problem(file, f"skipped: {exc}")
            return False
        if self.release is not None:  # the row's own source (a Debian package of the default corpus) comes first
            fields.setdefault("source_package", self.release.package)
            fields.setdefault("source_version", self.release.version)
        self.files.append(Path(file))
        self.records.append(
            {
                "utt_id": utt_id,
                "speaker": speaker,
                "path": self.relative(file),
                "duration_s": header.duration_s,
                "sample_rate": header.sample_rate,
                "blake3": None,  # digested with every other file in table(), in parallel
                **fields,
            }
        )
        return True

    def add_listed(self, where: str, file: Path, utt_id: str, speaker: str, **fields: Any) -> bool:
        """``add`` for a file a list names at ``where`` (a manifest or protocol line): an absent file is a problem
        at that line."""
        if not file.is_file():
            self.problem(where, f"skipped: {self.relative(file)} does not exist")
            return False
        return self.add(file, utt_id, speaker, **fields)

    def table(self) -> CorpusTable:
        digests = file_digests(self.files)
        records = [{**record, "blake3": digest.blake3} for record, digest in zip(self.records, digests, strict=True)]
        return CorpusTable.from_records(records, self.problems, str(self.root))


CorpusAdapter = Callable[[Path], CorpusTable]
ADAPTERS: dict[str, CorpusAdapter] = {}
RELEASES: dict[str, Release] = {}  # adapter -> the release it reads
SPOOF_ADAPTERS: set[str] = set()  # adapters whose tables are spoof folders (speaker: the imitated speaker)


def corpus_adapter(name: str, release: Release, *, spoofs: bool = False) -> Callable[[CorpusAdapter], CorpusAdapter]:
    """Register ``function(root) -> CorpusTable`` under ``name`` for ``load_corpus``, with the release it reads;
    ``spoofs`` marks an adapter of converted or synthesised speech, usable only through spoof conditions."""

    def register(function: CorpusAdapter) -> CorpusAdapter:
        if name in ADAPTERS:
            raise ValueError(f"corpus adapter {name!r} registered twice")
        ADAPTERS[name] = function
        RELEASES[name] = release
        if spoofs:
            SPOOF_ADAPTERS.add(name)
        return function

    return register


def table_release(frame: pd.DataFrame) -> str | None:
    """The release a table records: its distinct ``source_version`` values, sorted and joined (None: none)."""
    versions = sorted({str(value) for value in frame["source_version"].dropna()}) if len(frame) else []
    return ", ".join(versions) or None


def pin_release(table: CorpusTable, name: str, declared: str | None, where: str) -> CorpusTable:
    """The table with its release checked against ``declared`` (a configuration's ``release``, or None).

    A table that records a release must record exactly the declared one (else a ``CorpusError`` at ``where``, one
    line); a table that records none takes the declared one, or keeps none with a problem saying how to declare it.
    """
    seen = table_release(table.frame)
    if seen is not None:
        if declared is not None and declared != seen:
            raise CorpusError(where, f"release {declared!r} is declared but the {name} folder holds release {seen!r}")
        return table
    if declared is None:
        problem = Problem(".", f"release not recorded: the {name} folder does not show it; declare it (release = ...)")
        return CorpusTable(table.frame, tuple(sorted({*table.problems, problem})))
    frame = table.frame.copy()
    frame["source_package"] = frame["source_package"].fillna(RELEASES[name].package)
    frame["source_version"] = declared
    return CorpusTable(validate_utterances(frame, where), table.problems)


def load_corpus(name: str, root: Path, release: str | None = None, where: str | None = None) -> CorpusTable:
    """Turn the corpus folder ``root`` into its utterance table with the adapter registered as ``name``; ``release``
    is the release the configuration declares at ``where`` (see ``pin_release``)."""
    adapter = ADAPTERS.get(name)
    if adapter is None:
        raise CorpusError("corpus", f"unknown corpus {name!r}; known corpora: {', '.join(sorted(ADAPTERS))}")
    root = Path(root)
    if not root.is_dir():
        raise CorpusError(str(root), f"corpus folder not found: provide the {name} corpus in this folder")
    return pin_release(adapter(root), name, release, where or str(root))


def sorted_files(root: Path, pattern: str) -> list[Path]:
    """Regular files under ``root`` matching ``pattern``, in a stable order (relative POSIX path)."""
    return sorted((p for p in Path(root).rglob(pattern) if p.is_file()), key=lambda p: p.as_posix())
