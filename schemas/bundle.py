"""The artefact bundle (DESIGN.md section 3): every file name in one place, and its typed parsers and serialisers.

One home for the layout: the runner writes through :class:`BundleLayout` and the ``*_bytes`` serialisers, the
manifest (``provenance``) names its subjects with it, and the audit parses the bytes it has verified with the
``parse_*`` functions. Parsers take bytes, never paths, so that what is parsed is exactly what was digested; each
checks its table against its schema and raises :class:`BundleFileError` (file and what was expected) instead of
letting a hostile file reach the caller as a traceback. Adding a bundle file touches this module only.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import stat
import tomllib
import unicodedata
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import pandas as pd
from pandera.errors import SchemaError, SchemaErrors

from schemas.documents import (
    DocumentShapeError,
    EnvironmentDocument,
    OperatorsDocument,
    check_checkpoints,
    check_shape,
)
from schemas.errors import Error
from schemas.filenames import (
    CORPUS_DIR,
    SCORES_DIR,
    TRIALS_DIR,
)
from schemas.forked import Forked
from schemas.scores import COHORT_COLUMNS, SCORE_STATUSES, ScoresSchema
from schemas.trials import OPTIONAL_TRIAL_COLUMNS, TrialsSchema, plainly_valid

__all__ = [
    "CM_SCORE_COLUMN",
    "MAX_NAME_BYTES",
    "MAX_SEGMENT_BYTES",
    "SCORE_COLUMNS",
    "SCORE_FILES_AT_ONCE",
    "TRIAL_COLUMNS_READ",
    "TRIAL_LIST_ID_LENGTH",
    "UTTERANCE_COLUMNS_READ",
    "BundleFileError",
    "BundleLayout",
    "RecordScores",
    "corpus_folder_name",
    "csv_file_bytes",
    "is_safe_name",
    "json_file_bytes",
    "parse_checkpoints",
    "parse_environment",
    "parse_json_object",
    "parse_operators",
    "parse_results",
    "parse_score_files",
    "parse_scores",
    "parse_timings",
    "parse_toml",
    "parse_trial_list",
    "parse_utterances",
    "read_bundle_file",
    "read_if_regular",
    "scores_file_bytes",
    "scores_name",
    "trial_list_name",
    "unsafe_name_reason",
]

TRIAL_LIST_ID_LENGTH = 16
SCORE_COLUMNS = ("trial_index", "label", "score", "status")
CM_SCORE_COLUMN = "cm_score"  # optional: the countermeasure's score of each trial's test side (NaN: none)
TRIAL_COLUMNS_READ = ("enrol_utt", "test_utt", "label", "enrol_speaker", "test_speaker")


class BundleFileError(Error, ValueError):
    """A bundle file that cannot be parsed or breaks its schema: ``name`` (bundle-relative) and the problem."""

    def __init__(self, name: str, problem: str) -> None:
        self.name = name
        self.problem = problem
        super().__init__(f"{name}: {problem}")

    def __reduce__(self) -> tuple[type[BundleFileError], tuple[str, str]]:
        """Pickled as its name and problem (a file parsed in a forked process sends its refusal back)."""
        return type(self), (self.name, self.problem)


def trial_list_name(trial_list_id: str) -> str:
    """The bundle path of a trial list."""
    return f"{TRIALS_DIR}/{trial_list_id}.csv"


def scores_name(record_id: str) -> str:
    """The bundle path of a record's score file."""
    return f"{SCORES_DIR}/{record_id}.parquet"


def corpus_folder_name(corpus: str, single: bool) -> str:
    """``corpus/`` for a run of one corpus, ``corpus/<name>/`` for each corpus of a run of several."""
    return CORPUS_DIR if single else f"{CORPUS_DIR}/{corpus}"


MAX_NAME_BYTES = 1024  # a bundle-relative name, UTF-8
MAX_SEGMENT_BYTES = 255  # one folder or file name (NAME_MAX)
# Control characters (NUL among them), lone surrogates, format characters (bidirectional overrides) and line or
# paragraph separators: no file the runner writes has them, and each breaks or disguises a path.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cs", "Cf", "Zl", "Zp"})


def unsafe_name_reason(name: object) -> str | None:
    """Why ``name`` is not a safe bundle-relative POSIX name, or None when it is one: a non-empty string without an
    absolute root, backslash, drive, ``..``, ``.`` or empty segment, without control, surrogate, format or
    separator characters, at most MAX_NAME_BYTES long and each segment at most MAX_SEGMENT_BYTES."""
    if not isinstance(name, str) or not name:
        return "not a non-empty string"
    odd = next((char for char in name if unicodedata.category(char) in _UNSAFE_CATEGORIES), None)
    if odd is not None:
        return f"holds the character U+{ord(odd):04X} ({unicodedata.category(odd)})"
    encoded = name.encode("utf-8")
    if len(encoded) > MAX_NAME_BYTES:
        return f"longer than {MAX_NAME_BYTES} bytes"
    if "\\" in name or (len(name) > 1 and name[1] == ":") or PurePosixPath(name).is_absolute():
        return "an absolute path, a drive or a backslash"
    parts = name.split("/")
    if any(part in ("..", ".", "") for part in parts):
        return "a '..', '.' or empty segment"
    if any(len(part.encode("utf-8")) > MAX_SEGMENT_BYTES for part in parts):
        return f"a segment longer than {MAX_SEGMENT_BYTES} bytes"
    return None


def is_safe_name(name: object) -> bool:
    """Whether ``name`` is a safe bundle-relative name (see :func:`unsafe_name_reason`)."""
    return unsafe_name_reason(name) is None


@dataclass(frozen=True)
class BundleLayout:
    """Paths of one bundle folder; every name comes from this module's constants."""

    root: Path

    def path(self, name: str) -> Path:
        return self.root / name

    def trial_list(self, trial_list_id: str) -> Path:
        return self.root / trial_list_name(trial_list_id)

    def scores(self, record_id: str) -> Path:
        return self.root / scores_name(record_id)

    def corpus_folder(self, corpus: str, single: bool) -> Path:
        return self.root / corpus_folder_name(corpus, single)


def read_if_regular(path: Path, *, follow_links: bool) -> tuple[int, bytes | None]:
    """``(mode, bytes)`` of ``path``, or ``(mode, None)`` when the opened file is not regular (a FIFO, device,
    socket or folder, which could block or never end). Opened without blocking and checked on the descriptor, so a
    file swapped in after a check is still caught; OSError from the open is the caller's to word."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | (0 if follow_links else os.O_NOFOLLOW)
    descriptor = os.open(path, flags)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            return mode, None
        chunks = []
        while chunk := os.read(descriptor, 1 << 20):
            chunks.append(chunk)
        return mode, b"".join(chunks)
    finally:
        os.close(descriptor)


def read_bundle_file(root: Path, name: str) -> bytes:
    """The bytes of the regular file ``name`` under ``root``: never through a link, never a FIFO or device, never
    outside the bundle."""
    if (reason := unsafe_name_reason(name)) is not None:
        raise BundleFileError(name, f"unsafe name: {reason}")
    path = root / name
    for parent in list(PurePosixPath(name).parents)[:-1]:
        if (root / parent).is_symlink():
            raise BundleFileError(name, f"its folder {parent} is a link")
    try:
        _, data = read_if_regular(path, follow_links=False)
    except FileNotFoundError:
        raise BundleFileError(name, "missing") from None
    except OSError as error:
        problem = "a link" if path.is_symlink() else f"cannot be opened ({error.strerror})"
        raise BundleFileError(name, problem) from None
    if data is None:
        raise BundleFileError(name, "not a regular file")
    return data


# --- serialisers: what the runner writes -> bytes -----------------------------------------------------------


def json_file_bytes(value: dict[str, Any]) -> bytes:
    """A bundle JSON file (run.json, operators.json, checkpoints.json, environment.json): keys sorted, indent 2,
    UTF-8 with non-ASCII text kept, one trailing newline. Readable by people; its digest in the statement binds it
    (the canonical form of ``provenance.canonical`` is for what a digest or an id is taken over)."""
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def csv_file_bytes(frame: pd.DataFrame) -> bytes:
    """A bundle CSV table (results.csv, the trial lists): a header row, no index column, LF line ends, UTF-8."""
    return frame.to_csv(index=False, lineterminator="\n").encode("utf-8")


def scores_file_bytes(
    labels: np.ndarray,
    scores: np.ndarray,
    status: np.ndarray,
    run_id: str,
    cm_scores: np.ndarray | None = None,
    cohort: np.ndarray | None = None,
) -> bytes:
    """A ``scores/<record_id>.parquet`` file: the score columns in their Arrow types (``trial_index`` is the row
    number), with ``cm_score`` when a countermeasure scored the test sides and the four ``COHORT_COLUMNS`` (one
    column each of ``cohort``) when the run declares AS-norm, zstd-compressed, the run id in the schema metadata."""
    import pyarrow as arrow  # here, not at import: the table-only audit never touches Parquet
    import pyarrow.parquet as pq

    table = arrow.table(
        {
            "trial_index": arrow.array(np.arange(len(labels), dtype=np.int64)),
            "label": arrow.array(np.asarray(labels, dtype=np.int8)),
            "score": arrow.array(np.asarray(scores, dtype=np.float64)),
            "status": arrow.array(np.asarray(status, dtype=str), type=arrow.large_string()),
            **(
                {CM_SCORE_COLUMN: arrow.array(np.asarray(cm_scores, dtype=np.float64))} if cm_scores is not None else {}
            ),
            **(
                {name: arrow.array(np.asarray(cohort, dtype=np.float64)[:, i]) for i, name in enumerate(COHORT_COLUMNS)}
                if cohort is not None
                else {}
            ),
        }
    ).replace_schema_metadata({"run_id": run_id})
    sink = arrow.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return bytes(sink.getvalue().to_pybytes())


# --- parsers: bytes that were verified -> typed tables ---------------------------------------------------------


def _text(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BundleFileError(name, f"not UTF-8 text at byte {error.start}") from error


def parse_json_object(name: str, data: bytes) -> dict[str, Any]:
    """A JSON document whose top level is an object."""
    text = _text(name, data)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:  # ValueError: bad JSON or a 5000-digit number; deep nesting
        raise BundleFileError(name, f"not JSON: {type(error).__name__}: {str(error)[:200]}") from error
    if not isinstance(value, dict):
        raise BundleFileError(name, "expected a JSON object at the top level")
    try:  # JSON's "\\ud800" escape reads as a lone surrogate, which nothing downstream could print or write
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as error:
        raise BundleFileError(name, f"holds text that is not Unicode: {error.reason}") from error
    return value


def _document(name: str, data: bytes, check: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    try:
        return check(parse_json_object(name, data))
    except DocumentShapeError as error:
        raise BundleFileError(name, f"breaks its shape: {error}") from None


def parse_operators(name: str, data: bytes) -> dict[str, Any]:
    """``operators.json``, its shape checked (:class:`~schemas.documents.OperatorsDocument`)."""
    return _document(name, data, partial(check_shape, OperatorsDocument))


def parse_checkpoints(name: str, data: bytes) -> dict[str, Any]:
    """``checkpoints.json``, each label's entry checked (:class:`~schemas.documents.CheckpointEntry`)."""
    return _document(name, data, check_checkpoints)


def parse_environment(name: str, data: bytes) -> dict[str, Any]:
    """``environment.json``, the fields the audit reads checked (:class:`~schemas.documents.EnvironmentDocument`)."""
    return _document(name, data, partial(check_shape, EnvironmentDocument))


def parse_toml(name: str, data: bytes) -> dict[str, Any]:
    """The TOML document ``data`` of the bundle file ``name``; bad text or TOML is an error naming the file."""
    text = _text(name, data)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise BundleFileError(name, f"not valid TOML: {error}") from error
    except RecursionError as error:
        raise BundleFileError(name, "not valid TOML: nested too deeply") from error


def _csv(name: str, data: bytes, dtype: Any) -> pd.DataFrame:
    try:
        return pd.read_csv(io.StringIO(_text(name, data)), dtype=dtype, keep_default_na=False, na_values=[""])
    except (ValueError, pd.errors.EmptyDataError) as error:  # ParserError is a ValueError
        raise BundleFileError(name, f"not a CSV table: {str(error).strip()}") from error


def parse_results(name: str, data: bytes) -> pd.DataFrame:
    """``results.csv`` as an all-text frame (``schemas.results.validate_results`` parses its numbers)."""
    return _csv(name, data, str)


def _first_failures(error: SchemaErrors | SchemaError) -> str:
    cases = getattr(error, "failure_cases", None)
    if isinstance(cases, pd.DataFrame) and len(cases):
        first = cases.iloc[0]
        return (
            f"check {first.get('check')!s} fails on column {first.get('column')!s}, value {first.get('failure_case')!r}"
        )
    return str(error).splitlines()[0]


def parse_trial_list(name: str, data: bytes) -> pd.DataFrame:
    """``trials/<id>.csv`` validated by :class:`~schemas.trials.TrialsSchema` (text columns kept as text)."""
    frame = _csv(name, data, {"enrol_utt": str, "test_utt": str, "enrol_speaker": str, "test_speaker": str})
    missing = [column for column in ("trial_index", *TRIAL_COLUMNS_READ) if column not in frame.columns]
    if missing:
        raise BundleFileError(name, f"trial list lacks column(s) {', '.join(missing)}")
    for column in OPTIONAL_TRIAL_COLUMNS:
        if column in frame.columns:
            frame[column] = frame[column].astype("string").astype(object).where(frame[column].notna(), None)
    if plainly_valid(frame):
        return frame
    try:
        return TrialsSchema.validate(frame, lazy=True)
    except (SchemaErrors, SchemaError) as error:
        raise BundleFileError(name, f"breaks the trial-list schema: {_first_failures(error)}") from error


@dataclass(frozen=True)
class RecordScores:
    """One record's per-trial scores, in trial-list order: labels, scores (NaN when not scored), scored mask, and the
    countermeasure's scores when the file has them (NaN where the countermeasure scored no test side), and the
    trials' AS-norm cohort statistics when it has them (one row per trial, ``COHORT_COLUMNS`` in order)."""

    labels: np.ndarray
    scores: np.ndarray
    scored: np.ndarray
    cm_scores: np.ndarray | None = None
    cohort: np.ndarray | None = None

    @property
    def n_trials(self) -> int:
        return len(self.labels)


def _score_types() -> dict[str, Any]:
    """The Arrow type of each score column (``status`` may also be ``large_string``)."""
    import pyarrow as arrow  # here, not at import: the table-only audit never reads Parquet

    return {
        "trial_index": arrow.int64(),
        "label": arrow.int8(),
        "score": arrow.float64(),
        "status": arrow.string(),
        CM_SCORE_COLUMN: arrow.float64(),
        **dict.fromkeys(COHORT_COLUMNS, arrow.float64()),
    }


def _score_table(item: tuple[str, bytes], max_rows: int | None = None) -> Any:
    """The Arrow table of one score file holding exactly the score columns in their types (``status`` as each
    row's position in ``SCORE_STATUSES``, :func:`_status_codes`), or the BundleFileError that says why not
    (returned, not raised: files are read in a thread pool's map).

    What a hostile file could make expand is checked on its metadata before any column is decoded: its columns and
    types, its row count (at most ``max_rows``: no score file is longer than the longest trial list) and its
    ``status`` values, read as a dictionary and checked before any row is looked at.
    """
    import pyarrow as arrow  # here, not at import: the table-only audit never reads Parquet
    import pyarrow.parquet as pq

    name, data = item
    try:
        try:  # one open, its footer parsed once: read_dictionary changes what is decoded, not the schema below
            source = pq.ParquetFile(arrow.BufferReader(data), read_dictionary=["status"])
        except KeyError:  # no column named status (refused by the column check below)
            source = pq.ParquetFile(arrow.BufferReader(data))
        schema = source.metadata.schema.to_arrow_schema()  # the types as written, string status not as dictionary
        columns = set(schema.names)  # decoded here: a corrupt name is not UTF-8 (a ValueError)
    except (arrow.ArrowException, OSError, ValueError) as error:
        return BundleFileError(name, f"not a Parquet file: {error}")
    optional = columns - set(SCORE_COLUMNS)
    if (
        not set(SCORE_COLUMNS) <= columns
        or optional - {CM_SCORE_COLUMN, *COHORT_COLUMNS}
        or (optional & set(COHORT_COLUMNS) not in (set(), set(COHORT_COLUMNS)))
    ):
        return BundleFileError(
            name,
            f"expected exactly the columns {', '.join(SCORE_COLUMNS)} (and optionally {CM_SCORE_COLUMN}, and "
            f"{', '.join(COHORT_COLUMNS)} together), found {sorted(columns)}",
        )
    for column, expected in _score_types().items():
        if column not in columns:
            continue
        found = schema.field(column).type
        if found != expected and not (column == "status" and found == arrow.large_string()):
            return BundleFileError(name, f"column {column} is {found}, expected {expected}")
    if max_rows is not None and source.metadata.num_rows > max_rows:
        return BundleFileError(
            name, f"holds {source.metadata.num_rows} rows, more than the longest trial list ({max_rows}): not read"
        )
    try:
        # One file, one thread: read_table's dataset layer and thread pool cost more than the read (1.3 against
        # 0.5 ms a score file, thousands a bundle).
        table = source.read(use_threads=False)
    except (arrow.ArrowException, OSError, ValueError) as error:
        return BundleFileError(name, f"not a Parquet file: {error}")
    codes = _status_codes(table.column("status"))
    if isinstance(codes, str):
        return BundleFileError(name, f"a status is not one of {', '.join(SCORE_STATUSES)} ({codes[:40]!r})")
    return table.set_column(table.schema.get_field_index("status"), "status", codes)


def _status_codes(statuses: Any) -> Any:
    """Each row's status as its position in ``SCORE_STATUSES`` (int8, null where the status is null), or the first
    value (sorted) that is not a status. ``statuses`` is read as a dictionary (a string or large_string column
    always is), whose values are spelt once a file, never once a row: the rows are then checked and compared as small
    integers, not cast to text and compared as strings."""
    import pyarrow as arrow  # here, not at import: the table-only audit never reads Parquet

    spelled = [[str(value) for value in chunk.dictionary.to_pylist()] for chunk in statuses.chunks]
    odd = {value for values in spelled for value in values} - set(SCORE_STATUSES)
    if odd:
        return sorted(odd)[0]
    positions = [arrow.array([SCORE_STATUSES.index(value) for value in values], arrow.int8()) for values in spelled]
    return arrow.chunked_array(
        [position.take(chunk.indices) for position, chunk in zip(positions, statuses.chunks, strict=True)],
        arrow.int8(),
    )


def _score_tables(items: list[tuple[str, bytes]], max_rows: int | None) -> list[Any]:
    """:func:`_score_table` of each item, in order: one thread's share of a batch."""
    return [_score_table(item, max_rows) for item in items]


def _checked_scores(tables: dict[str, Any]) -> dict[str, RecordScores | BundleFileError]:
    """Each table's scores, or the :class:`~schemas.scores.ScoresSchema` rules it breaks; every rule is evaluated
    once over the rows of all ``tables``, then attributed to the files."""
    import pyarrow as arrow

    lengths = np.fromiter((table.num_rows for table in tables.values()), np.int64, len(tables))
    ends = np.cumsum(lengths)

    def column(name: str) -> Any:
        chunks = [chunk for table in tables.values() for chunk in table.column(name).chunks]
        return arrow.chunked_array(chunks, arrow.int8() if name == "status" else _score_types()[name])

    def breaks(name: str, row_ok: np.ndarray) -> np.ndarray:
        """Per file: whether column ``name`` has a null or a row where ``row_ok`` is False."""
        nulls = np.fromiter((table.column(name).null_count for table in tables.values()), np.int64, len(tables))
        broken = np.zeros(len(tables), dtype=bool)
        if not row_ok.all():
            broken[np.repeat(np.arange(len(tables)), lengths)[~row_ok]] = True
        return broken | (nulls > 0)

    index = column("trial_index").fill_null(-1).to_numpy()  # a null breaks its rule (below) in any case
    labels = column("label").fill_null(-1).to_numpy()
    scores = column("score").to_numpy().astype(np.float64)
    status = column("status").fill_null(-1).to_numpy()  # positions in SCORE_STATUSES (_status_codes)
    scored = status == SCORE_STATUSES.index("scored")
    rules = (
        (
            "trial_index is not 0..n-1 in row order",
            breaks("trial_index", index == np.arange(len(index)) - np.repeat(ends - lengths, lengths)),
        ),
        ("a label is not 0 or 1", breaks("label", np.isin(labels, (0, 1)))),
        # A file without rows breaks this rule.
        (
            f"a status is not one of {', '.join(SCORE_STATUSES)}",
            breaks("status", status >= 0) | (lengths == 0),
        ),
        (
            "a scored trial without a finite score, or an unscored one with a score",
            breaks("status", np.isfinite(scores) == scored),
        ),
    )
    labels = labels.astype(np.int8)
    cm_scores = {
        name: table.column(CM_SCORE_COLUMN).fill_null(np.nan).to_numpy().astype(np.float64)
        for name, table in tables.items()
        if CM_SCORE_COLUMN in table.column_names
    }
    cohorts = {
        name: np.column_stack(
            [table.column(column).fill_null(np.nan).to_numpy().astype(np.float64) for column in COHORT_COLUMNS]
        )
        for name, table in tables.items()
        if COHORT_COLUMNS[0] in table.column_names
    }
    outcomes: dict[str, RecordScores | BundleFileError] = {}
    for position, (name, start, end) in enumerate(zip(tables, ends - lengths, ends, strict=True)):
        problems = [problem for problem, broken in rules if broken[position]]
        cm = cm_scores.get(name)
        if cm is not None and np.isinf(cm).any():
            problems.append(f"a {CM_SCORE_COLUMN} is infinite (NaN where no countermeasure score)")
        cohort = cohorts.get(name)
        if cohort is not None:
            with np.errstate(invalid="ignore"):
                usable = np.isfinite(cohort).all(axis=1) & (cohort[:, 1] >= 0) & (cohort[:, 3] >= 0)
            if not usable[scored[start:end]].all():
                problems.append("a scored trial's cohort statistics are not finite, or a standard deviation is < 0")
        outcomes[name] = (
            BundleFileError(name, f"breaks the scores schema ({ScoresSchema.__name__}): {'; '.join(problems)}")
            if problems
            else RecordScores(
                labels=labels[start:end],
                scores=scores[start:end],
                scored=scored[start:end],
                cm_scores=cm,
                cohort=cohort,
            )
        )
    return outcomes


SCORE_FILES_AT_ONCE = 256  # files checked together: amortises the per-call cost, bounds the Arrow memory held


def parse_score_files(
    files: Mapping[str, bytes], max_rows: int | None = None
) -> dict[str, RecordScores | BundleFileError]:
    """Every ``scores/<record_id>.parquet`` of ``files`` checked against :class:`~schemas.scores.ScoresSchema`:
    its scores, or the BundleFileError that says why it cannot be used (a file of more than ``max_rows`` rows is
    refused before it is decoded).

    The rules of the pandera model, vectorised on the Arrow tables of many files at once: a bundle holds thousands
    of these files and per-file validation would dominate the audit (``tests/schemas`` checks that both agree).
    Files are decoded in threads (Parquet decoding releases the GIL). A bundle of many files is parsed in two
    processes instead, half each on one thread: opening a file and checking its tables hold the GIL, about half the
    work (4,068 files: 3.9 s wall on two threads, 2.5-3.0 s in two processes).
    """
    items = list(files.items())
    if len(items) < 2 * SCORE_FILES_AT_ONCE:
        return _parsed_score_files(items, max_rows)
    half = len(items) // 2
    with Forked(_parsed_score_files, items[half:], max_rows, 1) as second:
        outcomes = _parsed_score_files(items[:half], max_rows, 1)
        outcomes.update(second.result())
    return outcomes


def _parsed_score_files(
    items: list[tuple[str, bytes]], max_rows: int | None, threads: int = os.cpu_count() or 1
) -> dict[str, RecordScores | BundleFileError]:
    """:func:`parse_score_files` of ``items`` in this process."""
    outcomes: dict[str, RecordScores | BundleFileError] = {}
    with ThreadPoolExecutor(threads) as pool:
        for first in range(0, len(items), SCORE_FILES_AT_ONCE):
            batch = items[first : first + SCORE_FILES_AT_ONCE]
            # One task of consecutive files per thread: a task per file costs about what reading a small file does.
            size = -(-len(batch) // threads)
            parts = pool.map(
                partial(_score_tables, max_rows=max_rows),
                (batch[start : start + size] for start in range(0, len(batch), size)),
            )
            read = dict(zip((name for name, _ in batch), itertools.chain.from_iterable(parts), strict=True))
            tables = {name: table for name, table in read.items() if not isinstance(table, BundleFileError)}
            checked = _checked_scores(tables) if tables else {}
            outcomes.update({name: checked.get(name, table) for name, table in read.items()})
    return outcomes


def parse_scores(name: str, data: bytes) -> RecordScores:
    """One ``scores/<record_id>.parquet`` checked as :func:`parse_score_files` checks each."""
    outcome = parse_score_files({name: data})[name]
    if isinstance(outcome, BundleFileError):
        raise outcome
    return outcome


UTTERANCE_COLUMNS_READ = ("speaker", "spoof_system", "source_package", "source_version", "duration_s", "session")


def parse_utterances(name: str, data: bytes) -> pd.DataFrame:
    """A corpus table reduced to what trials are checked against and the run block shows: ``utt_id`` (unique, the
    index), ``speaker``, ``spoof_system``, and the release each utterance comes from (``source_package``,
    ``source_version``; empty in tables written before corpora recorded their release); ``duration_s`` and
    ``session`` (as text) for the trial-design audit."""
    frame = _csv(name, data, str)
    missing = [column for column in ("utt_id", "speaker") if column not in frame.columns]
    if missing:
        raise BundleFileError(name, f"utterance table lacks column(s) {', '.join(missing)}")
    if frame["utt_id"].isna().any() or frame["utt_id"].duplicated().any():
        raise BundleFileError(name, "utt_id is empty or repeated")
    for column in UTTERANCE_COLUMNS_READ:
        if column not in frame.columns:
            frame[column] = None
    return frame.set_index("utt_id")[list(UTTERANCE_COLUMNS_READ)]


def parse_timings(name: str, data: bytes) -> dict[str, dict[str, float]]:
    """Per encoder label of ``timings.json``: the ``audio_s`` it embedded and the ``wall_s`` that took (numbers >=
    0), the figures a throughput is made of."""
    document = parse_json_object(name, data)
    encoders = document.get("encoders")
    if not isinstance(encoders, dict):
        raise BundleFileError(name, "expected an object 'encoders' of label -> figures")
    figures = {}
    for label, row in encoders.items():
        values = {key: row.get(key) if isinstance(row, dict) else None for key in ("audio_s", "wall_s")}
        for key, value in values.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value) or value < 0:
                raise BundleFileError(name, f"encoders.{label}.{key}: expected a number >= 0, got {value!r}")
        figures[str(label)] = {key: float(value) for key, value in values.items()}  # type: ignore[arg-type]
    return figures
