"""Reading a results table: the CSV itself and an optional column rename map (TOML).

Everything unreadable becomes an :class:`~schemas.errors.InputError` (exit 2, one line) before any audit step
runs. Cells are read as text (only empty cells are missing), so that ``None``, ``NA`` or ``nan`` in a label
stay labels and numbers are parsed, and reported, by the schema. The user's files are only read, never
written, and only when they are regular files (a FIFO or a device is refused before it is opened). Text is
UTF-8, with or without a byte-order mark, or UTF-16 as spreadsheet programs export it ("Unicode text").
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
import tomllib
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from audit.table.legacy import LegacyMapping
from provenance import Digest, bytes_digest, read_regular_file
from schemas import KNOWN_COLUMNS, REQUIRED_COLUMNS, InputError


@dataclass(frozen=True)
class ResultsSource:
    """A results table as read: an all-text frame with canonical column names, its digest, the renames."""

    path: Path
    digest: Digest
    frame: pd.DataFrame
    renamed: dict[str, str]
    mapping: dict[str, Any] = field(default_factory=dict)  # what the mapping file's value maps did
    value_maps: dict[str, dict[str, str]] = field(default_factory=dict)  # column -> {legacy value: audit value}


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_SPACING = re.compile(r"[\s_\-.]+")
TYPO_MIN_LENGTH = 6  # a column name this long (its skeleton) one edit from an audit column is taken for a typo of it


def name_skeleton(name: str) -> str:
    """A column name reduced to what a reader sees: NFKC, case folded, without blanks, ``_``, ``-``, ``.`` or
    invisible format characters (a zero-width space), and every other non-ASCII character as ``?`` (it may stand in
    for a letter it looks like).

    >>> name_skeleton(" EER_rocch "), name_skeleton("e\\u0435r"), name_skeleton("min-DCF")
    ('eerrocch', 'e?r', 'mindcf')
    """
    folded = _SPACING.sub("", unicodedata.normalize("NFKC", name).casefold())
    return "".join(char if char.isascii() else "?" for char in folded if unicodedata.category(char) != "Cf")


def looks_like(name: str, other: str) -> bool:
    """``name`` passes for ``other`` to a reader: their skeletons agree, a ``?`` of ``name`` standing for any
    character."""
    skeleton, target = name_skeleton(name), name_skeleton(other)
    return len(skeleton) == len(target) and all(a in (b, "?") for a, b in zip(skeleton, target, strict=True))


def _one_edit(a: str, b: str) -> bool:
    """``a`` and ``b`` differ by one inserted, deleted, replaced or swapped (adjacent) character."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        differ = [i for i in range(len(a)) if a[i] != b[i]]
        return len(differ) == 1 or (
            len(differ) == 2
            and differ[1] == differ[0] + 1
            and a[differ[0]] == b[differ[1]]
            and a[differ[1]] == b[differ[0]]
        )
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def meant_column(name: str, absent: list[str]) -> str | None:
    """The audit column of ``absent`` (those the table lacks) that an unknown column ``name`` stands for: one a reader
    takes it for (``looks_like``: ``sub_group``, ``EER ``), or one typo away from it (``subgrup``); None when none is
    that close, as for an extra column such as ``notes`` or ``min_dcf_ci``.

    >>> meant_column("sub_group", ["subgroup", "corpus"]), meant_column("min_dcf_ci", ["min_dcf"])
    ('subgroup', None)
    """
    skeleton = name_skeleton(name)
    for column in absent:
        if looks_like(name, column):
            return column
    if len(skeleton) < TYPO_MIN_LENGTH:
        return None
    return next((column for column in absent if _one_edit(skeleton, name_skeleton(column))), None)


_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _utf16_without_bom(data: bytes) -> str | None:
    """``utf-16-le`` or ``-be`` when more NUL bytes sit on one side of the 16-bit units than on the other, on at
    least half of them, and the text so read has no control characters but tabs and line breaks, as UTF-16 text
    that is mostly ASCII (a table's digits, commas and newlines; a character such as U+0100 puts its NUL on the
    other side); None otherwise."""
    if len(data) % 2:
        return None
    units = len(data) // 2
    nul_even, nul_odd = data[0::2].count(0), data[1::2].count(0)
    if 2 * max(nul_even, nul_odd) < units or nul_even == nul_odd:
        return None
    encoding = "utf-16-le" if nul_odd > nul_even else "utf-16-be"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        return None
    return None if _CONTROL.search(text) else encoding


def text_encoding(data: bytes) -> str:
    """The codec that reads ``data``: UTF-8 (with or without a byte-order mark) or UTF-16 (either byte order,
    with a byte-order mark or recognised by its NUL bytes)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding
    return _utf16_without_bom(data) or "utf-8"


def _decode_text(path: Path, data: bytes, what: str) -> str:
    encoding = text_encoding(data)
    name = "UTF-16" if encoding.startswith("utf-16") else "UTF-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        if encoding == "utf-8" and b"\x00" in data:
            raise InputError(str(path), f"binary file (expected {what})") from error
        raise InputError(str(path), f"not {name} text at byte {error.start} (expected {what})") from error
    if "\x00" in text:
        raise InputError(str(path), f"binary file (expected {what})")
    if not text.strip():
        raise InputError(str(path), f"empty file (expected {what})")
    return text


def read_text(path: Path, what: str) -> str:
    """A text file (UTF-8 or UTF-16, see above); unreadable, not a regular file, empty or binary is an
    InputError saying ``what`` was expected."""
    return _decode_text(path, read_regular_file(path, what), what)


def read_text_and_digest(path: Path, what: str) -> tuple[str, Digest]:
    """``read_text`` and the digest of the bytes read (trial lists and score files are named in the report by it)."""
    path = Path(path)
    data = read_regular_file(path, what)
    return _decode_text(path, data, what), bytes_digest(data)


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """A TOML document; an unreadable file or bad TOML is an InputError saying ``what`` was expected."""
    path = Path(path)
    text = read_text(path, what)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(str(path), f"not valid TOML: {error}") from error
    except RecursionError as error:  # tomllib recurses into nested arrays and inline tables
        raise InputError(str(path), "not valid TOML: nested too deeply") from error


def read_column_map(path: Path) -> tuple[dict[str, str], LegacyMapping]:
    """Read a mapping file: its ``[columns]`` table of ``"legacy name" = "canonical name"`` pairs, checked, and
    its value-level part (``audit.table.legacy``)."""
    document = read_toml(path, "a TOML column map")
    return _column_renames(path, document), LegacyMapping.of(str(path), document)


def _column_renames(path: Path, document: dict[str, Any]) -> dict[str, str]:
    mapping = document.get("columns")
    if not isinstance(mapping, dict):
        raise InputError(str(path), 'expected a [columns] table of "legacy name" = "canonical name" pairs')
    seen: dict[str, str] = {}
    for legacy, canonical in mapping.items():
        if not isinstance(canonical, str):
            raise InputError(str(path), f"the target of {legacy!r} must be a column name (a string)")
        if canonical not in KNOWN_COLUMNS:
            raise InputError(str(path), f"{legacy!r} maps to {canonical!r}, which is not a results.csv column")
        if canonical in seen:
            raise InputError(str(path), f"{seen[canonical]!r} and {legacy!r} both map to {canonical!r}")
        seen[canonical] = legacy
    return dict(mapping)


def read_training_corpora(path: Path) -> dict[str, tuple[str, ...]]:
    """Each encoder label's declared ``training_corpora`` from an encoder roster (``[[encoders]]`` entries);
    only these two fields are read (the runner validates the rest). A label without the field declares none."""
    document = read_toml(path, "a TOML encoder roster")
    entries = document.get("encoders")
    if not isinstance(entries, list):
        raise InputError(str(path), "expected [[encoders]] entries")
    declared: dict[str, tuple[str, ...]] = {}
    for row, entry in enumerate(entries, start=1):
        label = entry.get("label") if isinstance(entry, dict) else None
        if not isinstance(label, str) or not label:
            raise InputError(str(path), "expected a non-empty label", row=row, column="label")
        corpora = entry.get("training_corpora", [])
        if not (isinstance(corpora, list) and all(isinstance(name, str) and name for name in corpora)):
            raise InputError(str(path), "expected a list of corpus names", row=row, column="training_corpora")
        declared[label] = tuple(corpora)
    return declared


def _csv_rows(path: Path, text: str) -> list[list[str]]:
    """The CSV's non-blank rows as lists of fields (the header first)."""
    try:
        return [fields for fields in csv.reader(io.StringIO(text)) if fields]
    except csv.Error as error:
        raise InputError(str(path), f"not a CSV file: {error}") from error


def _check_header(path: Path, header: list[str], renames: dict[str, str], column_map: Path | None) -> None:
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        raise InputError(str(path), f"duplicate column names in the header: {', '.join(duplicates)}")
    absent = [legacy for legacy in renames if legacy not in header]
    if absent:
        raise InputError(
            str(column_map),
            f"names columns absent from {path}: {', '.join(absent)} (header: {', '.join(header)})",
        )
    clashes = [target for target in renames.values() if target in header and target not in renames]
    if clashes:
        raise InputError(str(column_map), f"renames onto columns that {path} already has: {', '.join(clashes)}")
    if not any(renames.get(name, name) in REQUIRED_COLUMNS for name in header):
        raise InputError(
            str(path),
            f"not a results table: none of the columns {', '.join(REQUIRED_COLUMNS)} "
            f"(found {', '.join(header[:8])}); use --columns MAP.toml for other names",
        )


def _check_unknown_columns(path: Path, columns: list[str]) -> None:
    """A column the audit does not read but that stands for one the table lacks (``meant_column``) is an input
    error with a did-you-mean: read as an extra column, it would be dropped without a word (``sub_group`` would
    leave every row without its subgroup)."""
    absent = sorted(KNOWN_COLUMNS - set(columns))
    for name in columns:
        if name not in KNOWN_COLUMNS and (meant := meant_column(name, absent)) is not None:
            raise InputError(
                str(path),
                f"not a results.csv column; did you mean {meant!r}? Rename it in the table or with a --columns map "
                f"({_toml_string(name)} = {_toml_string(meant)}); an extra column needs a name unlike the audit's",
                column=name,
            )


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string on one line: JSON's escapes are TOML's, and the characters JSON leaves bare
    that TOML refuses (DEL) or that break a line (NEL, U+2028, U+2029) are written as ``\\uXXXX``."""
    quoted = json.dumps(text, ensure_ascii=False)
    return quoted.translate({ord(char): f"\\u{ord(char):04x}" for char in "\x7f\x85\u2028\u2029"})


def _check_rows(path: Path, rows: list[list[str]]) -> None:
    """Every data row has as many fields as the header (rows numbered from 1 below the header)."""
    width = len(rows[0])
    for number, fields in enumerate(rows[1:], start=1):
        if len(fields) != width:
            raise InputError(str(path), f"not a CSV table: {len(fields)} fields, the header has {width}", row=number)
    if len(rows) == 1:
        raise InputError(str(path), "no data rows below the header")


def read_results(path: Path, column_map: Path | None = None) -> ResultsSource:
    """Read ``path`` as a results CSV, applying the rename map at ``column_map`` when given."""
    path = Path(path)
    what = "a results CSV"
    data = read_regular_file(path, what)
    text = _decode_text(path, data, what)
    renames, legacy = read_column_map(column_map) if column_map is not None else ({}, None)
    rows = _csv_rows(path, text)
    _check_header(path, rows[0], renames, column_map)
    _check_rows(path, rows)
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_values=[""], index_col=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, csv.Error) as error:
        raise InputError(str(path), f"not a CSV file: {str(error).strip()}") from error
    frame = frame.rename(columns=renames)
    _check_unknown_columns(path, [str(column) for column in frame.columns])
    if legacy is None:
        return ResultsSource(path, bytes_digest(data), frame, renames)
    mapped, notes = legacy.apply(frame)
    return ResultsSource(path, bytes_digest(data), mapped, renames, notes, legacy.value_maps)
