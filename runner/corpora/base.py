"""What every corpus adapter shares: the result type, audio headers, the registry and the table files.

An adapter walks a corpus folder and returns a ``CorpusTable``: the utterance table (``schemas.utterances``)
and the problems it met, one ``(path, reason)`` per file or metadata entry it could not use as published.
Nothing is dropped silently: a file that is skipped, or kept with a field left empty, has a problem saying so.
Folders are walked with their links followed (per-speaker links are the usual way to merge or flatten corpora);
a folder reached twice, through a link loop or a second link, is walked once and the repeat is a problem. An
utterance id found twice is kept once when both files hold the same bytes (a copy that ships every file twice),
and is one ``CorpusError`` naming both paths when they differ. A folder whose audio files parse to no row at all
is one ``CorpusError`` naming the layout the adapter expected and the first paths it saw, not an empty table.
Adapters register themselves by name with the release they read (``@corpus_adapter("ravdess", Release("RAVDESS",
"1.0.0"))``) and are reached through ``load_corpus``. Every row records that release in ``source_package`` and
``source_version``; where the release is not fixed by the adapter (Common Voice, spoof folders) it is what the folder
shows or what the configuration declares, and a release nobody declared is a problem, never a guess.
"""

from __future__ import annotations

import fnmatch
import io
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
import pandera.errors
import soundfile

from provenance import atomic_write_bytes, file_digests
from schemas import (
    OPTIONAL_COLUMNS,
    PROBLEMS_FILE,
    UTTERANCE_COLUMNS,
    UTTERANCES_FILE,
    Error,
    InputError,
    UtteranceSchema,
)


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
    """Collects utterance rows and problems while an adapter walks a corpus folder.

    ``layout`` is what the adapter expects (``Actor_NN/MM-VV-EE-II-SS-RR-AA.wav``): the one line a folder whose
    files give no row at all is refused with.
    """

    SHOWN_PATHS = 3  # the first paths a refusal shows

    def __init__(self, root: Path, release: Release | None = None, layout: str | None = None) -> None:
        self.root = Path(root).absolute()
        self.release = release
        self.layout = layout
        self.records: list[dict[str, Any]] = []
        self.files: list[Path] = []  # the audio file of each record
        self.problems: list[Problem] = []
        self.seen: list[Path] = []  # every file a parsing walk found (see walk)

    def relative(self, file: Path) -> str:
        return Path(file).absolute().relative_to(self.root).as_posix()

    def problem(self, file: Path | str, reason: str) -> None:
        """Record a problem; ``file`` is a path under the root or a name (a metadata file, a source path)."""
        name = self.relative(file) if isinstance(file, Path) else file
        self.problems.append(Problem(name, reason))

    def walk(self, pattern: str, under: Path | None = None, *, parsed: bool = True) -> list[Path]:
        """Regular files under ``under`` (the root by default) whose name matches ``pattern``, links followed, in
        a stable order; a repeated folder, a broken link or a matching name that is not a regular file is a
        problem. ``parsed`` files (those the adapter reads rows from, not files it only checks against a list)
        count as seen for the refusal of a folder that gives no row."""
        found: list[Path] = []
        for path, kind in walk_tree(under or self.root):
            if kind in (REGULAR, BROKEN_LINK, NOT_REGULAR) and not fnmatch.fnmatchcase(path.name, pattern):
                continue
            if kind == REGULAR:
                found.append(path)
            else:
                self.problem(path, f"skipped: {kind}")
        found.sort(key=lambda path: path.as_posix())
        if parsed:
            self.seen.extend(found)
        return found

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
        """The validated table: rows digested, one row per utterance id (``_without_copies``); a walked folder
        whose files gave no row is a ``CorpusError`` naming the expected layout."""
        if self.seen and not self.records:
            shown = ", ".join(self.relative(path) for path in self.seen[: self.SHOWN_PATHS])
            more = f" (of {len(self.seen)})" if len(self.seen) > self.SHOWN_PATHS else ""
            expected = f"expected {self.layout}" if self.layout else "none could be used"
            raise CorpusError(
                str(self.root),
                f"{len(self.seen)} audio file(s) found but none parsed: {expected}; first seen: {shown}{more}",
            )
        digests = file_digests(self.files)
        records = [{**record, "blake3": digest.blake3} for record, digest in zip(self.records, digests, strict=True)]
        return CorpusTable.from_records(self._without_copies(records), self.problems, str(self.root))

    def _without_copies(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One row per utterance id: a second file with the same bytes is a problem (the first path, in path
        order, is kept); a second file with other bytes under the same id is a ``CorpusError`` naming both."""
        kept: dict[str, dict[str, Any]] = {}
        for record in sorted(records, key=lambda record: record["path"]):
            first = kept.setdefault(record["utt_id"], record)
            if first is record:
                continue
            if first["blake3"] != record["blake3"]:
                raise CorpusError(
                    str(self.root),
                    f"utterance {record['utt_id']!r} is both {first['path']} and {record['path']}, with different "
                    "content: remove the one that is not the published file",
                )
            self.problems.append(Problem(record["path"], f"skipped: the same bytes as {first['path']} (one copy kept)"))
        return list(kept.values())


REGULAR = "regular file"
REPEATED_FOLDER = "folder already walked (a link loop, or a second link to it)"
BROKEN_LINK = "link to nothing (broken link)"
NOT_REGULAR = "not a regular file"


def walk_tree(root: Path) -> Iterator[tuple[Path, str]]:
    """Every file under ``root`` with its kind (``REGULAR``, ``BROKEN_LINK``, ``NOT_REGULAR``), and every folder
    not walked with the reason (``REPEATED_FOLDER``, or unreadable). Links to folders and files are followed; a
    folder is walked once by its identity (device, inode), so a link loop ends."""
    visited: set[tuple[int, int]] = set()
    unreadable: list[OSError] = []
    for folder, folders, names in os.walk(root, followlinks=True, onerror=unreadable.append):
        yield from ((Path(str(error.filename)), f"unreadable folder ({error.strerror})") for error in unreadable)
        unreadable.clear()
        identity = os.stat(folder)
        if (identity.st_dev, identity.st_ino) in visited:
            folders[:] = []
            yield Path(folder), REPEATED_FOLDER
            continue
        visited.add((identity.st_dev, identity.st_ino))
        folders.sort()
        for name in sorted(names):
            path = Path(folder) / name
            try:
                mode = os.stat(path).st_mode
            except FileNotFoundError:
                yield path, BROKEN_LINK
                continue
            yield path, REGULAR if stat.S_ISREG(mode) else NOT_REGULAR
    yield from ((Path(str(error.filename)), f"unreadable folder ({error.strerror})") for error in unreadable)


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
