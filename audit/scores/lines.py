"""Whitespace-separated text files (trial lists, score files) streamed in blocks and split into fields by Arrow.

A VoxCeleb-scale list is millions of lines: read as Python strings, line by line, 10 M trials took 131 s and 6.8 GB.
Here the file is read in blocks of ``BLOCK_BYTES`` (plain or gzip, told by its magic bytes), each block's lines are
split by Arrow's compiled kernels, and the caller keeps only compact columns (utterance codes, numbers), so memory
stays near what the result holds and time is linear in the file. The digest is of the file's bytes as stored (the
``.gz`` itself), hashed as they are read. Every line keeps its 1-based number, blank lines counted, so a line that
does not follow the layout is named as the line-by-line readers named it. Text is UTF-8; a file with a UTF-16
byte-order mark is decoded whole first (spreadsheet exports are small).
"""

from __future__ import annotations

import codecs
import gzip
import hashlib
import io
import itertools
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import blake3
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from audit.table import text_encoding
from provenance import Digest, open_regular_file
from schemas import InputError

BLOCK_BYTES = 1 << 22  # text read per block: 4 MiB, about 80,000 lines (the splitting holds ~8x a block)
GZIP_MAGIC = b"\x1f\x8b"
_NOT_A_FIELD = "\x1f"  # the CSV reader's delimiter: a whole line is one cell, split on whitespace afterwards
# Bytes that send a chunk down the slow path (each found by memchr): whitespace other than spaces and line breaks,
# and the slow path's delimiter (an error it names).
_NOT_PLAIN = (b"\t", b"\v", b"\f", b"\x1f")


class _HashingReader(io.RawIOBase):
    """The bytes of a file as read, hashed on the way (SHA-256 and BLAKE3)."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle, self.sha, self.b3, self.size = handle, hashlib.sha256(), blake3.blake3(), 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self.handle.read(len(buffer))
        self.sha.update(data)
        self.b3.update(data)
        self.size += len(data)
        buffer[: len(data)] = data
        return len(data)

    def digest(self) -> Digest:
        while self.read(1 << 20):  # what the parser left unread (a trailing part after the last line) is hashed too
            pass
        return Digest(self.sha.hexdigest(), self.b3.hexdigest(), self.size)


@dataclass(frozen=True)
class FieldBlock:
    """The data lines of one block: their 1-based numbers and one string array per field."""

    lines: np.ndarray
    fields: list[pa.Array]

    def first(self, field: int, failing: np.ndarray) -> tuple[int, str]:
        """The line number and text of field ``field`` at the first line where ``failing`` is True."""
        at = int(np.flatnonzero(failing)[0])
        return int(self.lines[at]), str(self.fields[field][at].as_py())


class FieldReader:
    """A text file of whitespace-separated fields: its first data lines (``head``), then every data line in
    blocks of one width (``blocks``); ``digest`` once read through."""

    def __init__(self, path: Path, what: str) -> None:
        self.path, self.what = Path(path), what
        self._raw = _HashingReader(open_regular_file(self.path, what))
        buffered = io.BufferedReader(self._raw, 1 << 20)
        self.compressed = buffered.peek(2)[:2] == GZIP_MAGIC
        self._text: io.BufferedIOBase = gzip.GzipFile(fileobj=buffered) if self.compressed else buffered
        self._chunk_iter = self._chunks()
        self._held: list[bytes] = []  # blocks head() read, which blocks() then parses first

    def digest(self) -> Digest:
        """The digest of the file's bytes (after ``blocks`` has been read through)."""
        return self._raw.digest()

    def _read(self, size: int = -1) -> bytes:
        try:
            return self._text.read(size)
        except (OSError, EOFError, zlib.error) as error:  # gzip's BadGzipFile is an OSError
            raise InputError(str(self.path), f"not a readable gzip file: {error} (expected {self.what})") from None

    def _chunks(self) -> Iterator[bytes]:
        """Blocks of whole lines, UTF-8 (UTF-16, told by its byte-order mark or its NUL bytes, re-encoded whole)."""
        first = self._read(BLOCK_BYTES)
        encoding = text_encoding(first[:4096] if len(first) > 4096 else first)
        if encoding.startswith("utf-16"):
            try:
                yield (first + self._read()).decode(encoding).removeprefix("\ufeff").encode("utf-8")
            except UnicodeDecodeError as error:
                raise InputError(str(self.path), f"not UTF-16 text (expected {self.what})") from error
            return
        data, more = b"", first.removeprefix(codecs.BOM_UTF8)
        while more:  # a block may end exactly at a line's end: only the file's end stops the loop
            data += more
            cut = data.rfind(b"\n")
            if cut >= 0:
                yield data[: cut + 1]
                data = data[cut + 1 :]
            more = self._read(BLOCK_BYTES)
        if data:
            yield data  # the last line, without a line break

    def head(self, n: int = 2) -> list[tuple[int, list[str]]]:
        """The first ``n`` data lines (number, fields), from the first blocks (``blocks`` then parses them again,
        from the start); a file without one data line is an InputError."""
        found: list[tuple[int, list[str]]] = []
        exhausted = False
        while len(found) < n:
            chunk = next(self._chunk_iter, None)
            if chunk is None:
                exhausted = True
                break
            self._held.append(chunk)
            text = b"".join(self._held)[: 1 << 16]  # a few lines suffice
            numbered = enumerate(text.decode("utf-8", errors="replace").splitlines(), start=1)
            found = [(number, fields) for number, line in numbered if (fields := line.split())][:n]
            if len(text) == 1 << 16:
                break
        if not found and exhausted:
            raise InputError(str(self.path), f"empty file (expected {self.what})")
        return found

    def blocks(self, width: int, layout: str, skip: int | None = None) -> Iterator[FieldBlock]:
        """Each block's data lines split into ``width`` fields (line ``skip``, a header, left out); blank lines are
        skipped and counted; a line of another width is an InputError naming it and ``layout`` (as quoted)."""
        next_line, any_data = 1, False
        for chunk in itertools.chain(self._held, self._chunk_iter):
            if b"\x00" in chunk:
                raise InputError(str(self.path), f"binary file (expected {self.what})")
            fields = self._split(chunk, width) if skip is None or skip < next_line else None
            if fields is not None:  # every line of the chunk has its width: no line to name
                numbers = np.arange(next_line, next_line + len(fields[0]))
                next_line += len(fields[0])
                any_data = True
                yield FieldBlock(numbers, fields)
                continue
            trimmed = pc.utf8_trim_whitespace(self._lines(chunk))
            numbers = np.arange(next_line, next_line + len(trimmed))
            next_line += len(trimmed)
            data = pc.not_equal(trimmed, "").to_numpy(zero_copy_only=False) & (numbers != skip)
            if not data.any():
                continue
            any_data = True
            split = pc.split_pattern_regex(pc.filter(trimmed, data), r"\s+")
            counts = pc.list_value_length(split).to_numpy()
            numbers = numbers[data]
            wrong = np.flatnonzero(counts != width)
            if wrong.size:
                row, got = int(numbers[wrong[0]]), int(counts[wrong[0]])
                raise InputError(str(self.path), f"expected {layout}, got {got} field(s)", row=row)
            flat = pc.list_flatten(split)
            yield FieldBlock(numbers, [pc.take(flat, pa.array(np.arange(i, len(flat), width))) for i in range(width)])
        if not any_data:
            raise InputError(str(self.path), f"empty file (expected {self.what})")

    def _split(self, chunk: bytes, width: int) -> list[pa.Array] | None:
        """The fast path: the chunk's fields split by Arrow's CSV reader on single spaces, when every line is
        ``width`` fields of printable ASCII separated by one space (what toolkits write); None otherwise (a blank
        line, a tab, runs of spaces, a line of another width, non-ASCII text), and the chunk goes the slow path,
        which splits on any whitespace and names the first line that does not follow the layout."""
        if not chunk.isascii() or any(c in chunk for c in _NOT_PLAIN):
            return None
        try:
            table = pcsv.read_csv(
                io.BytesIO(chunk),
                read_options=pcsv.ReadOptions(
                    column_names=[str(i) for i in range(width)], use_threads=False, block_size=len(chunk) + 1
                ),
                parse_options=pcsv.ParseOptions(
                    delimiter=" ", quote_char=False, escape_char=False, ignore_empty_lines=False
                ),
                convert_options=pcsv.ConvertOptions(
                    column_types=dict.fromkeys(map(str, range(width)), pa.string()), strings_can_be_null=False
                ),
            )
        except pa.ArrowInvalid:  # a line of another width, a blank line, a space at a line's end
            return None
        fields = [column.combine_chunks() for column in table.columns]
        if any(pc.min(pc.binary_length(field)).as_py() == 0 for field in fields):  # two spaces in a row
            return None
        return fields

    def _lines(self, chunk: bytes) -> pa.Array:
        """The lines of a chunk (blank ones kept, so numbers stay right), as one string array."""
        try:
            table = pcsv.read_csv(
                io.BytesIO(chunk),
                read_options=pcsv.ReadOptions(column_names=["line"], use_threads=False, block_size=len(chunk) + 1),
                parse_options=pcsv.ParseOptions(
                    delimiter=_NOT_A_FIELD, quote_char=False, escape_char=False, ignore_empty_lines=False
                ),
                convert_options=pcsv.ConvertOptions(column_types={"line": pa.string()}, strings_can_be_null=False),
            )
        except pa.ArrowInvalid as error:
            problem = str(error).split("\n")[0]
            if "utf8" in problem.lower() or "utf-8" in problem.lower():
                problem = "not UTF-8 text"
            elif "columns" in problem:
                problem = "a line holds the unit separator (\\x1f), which no field may"
            raise InputError(str(self.path), f"{problem} (expected {self.what})") from None
        return table.column("line").combine_chunks()


# A number as toolkits print it: ASCII digits, an optional exponent, or nan/inf spelt out. Python's float() also takes
# "1_0" (10.0) and digits of other scripts, which no score file means.
NUMBER = r"^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:nan|inf|infinity))$"


def numbers(path: Path, block: FieldBlock, field: int, column: str) -> np.ndarray:
    """Field ``field`` of every line as float64 (NaN where not finite); a field that is not a number is an
    InputError naming its line and column."""
    values = block.fields[field]
    try:  # the fast path: Arrow's parser takes what NUMBER takes, and NaN payloads ("nan(1)"), checked below
        parsed = pc.cast(values, pa.float64()).to_numpy(zero_copy_only=False)
        nan = np.isnan(parsed)
        valid = not nan.any() or pc.all(pc.match_substring_regex(pc.filter(values, nan), NUMBER)).as_py()
    except pa.ArrowInvalid:
        valid = False
    if not valid:  # the slow path, only to name the first field that is not a number
        matches = pc.match_substring_regex(values, NUMBER).to_numpy(zero_copy_only=False)
        row, text = block.first(field, ~matches)
        raise InputError(str(path), f"expected a number, got {text[:40]!r}", row=row, column=column)
    return np.where(np.isfinite(parsed), parsed, np.nan)


def codes(path: Path, block: FieldBlock, field: int, spellings: dict[str, int], layout: str, column: str) -> np.ndarray:
    """Field ``field`` of every line as the code its spelling stands for (``target`` -> 1); another spelling is an
    InputError naming its line."""
    values = block.fields[field]
    at = pc.index_in(values, value_set=pa.array(list(spellings))).to_numpy(zero_copy_only=False)
    unknown = np.isnan(at) if at.dtype.kind == "f" else np.zeros(len(at), dtype=bool)
    if unknown.any():
        row, text = block.first(field, unknown)
        raise InputError(str(path), f"expected '{layout}', got {column} {text[:40]!r}", row=row, column=column)
    return np.asarray(list(spellings.values()), dtype=np.int8)[at.astype(np.int64)]


class Vocabulary:
    """Utterance ids as codes in one space, shared by the files of one audit (the trial list, the score files),
    so that their pairs can be joined as integers. The ids known so far are one Arrow string array, codes in order
    of first appearance; a block is encoded by Arrow's hash kernel over the known ids and the block's values
    together, so no id becomes a Python string per block (a block repeats most utterances: per-block dict look-ups
    were most of the reading time)."""

    def __init__(self) -> None:
        self._names: pa.Array = pa.array([], pa.string())

    def encode(self, *values: pa.Array) -> list[np.ndarray]:
        """The codes of each array of ``values`` (in one pass), new ids appended in order of first appearance."""
        known = len(self._names)
        encoded = pc.dictionary_encode(pa.concat_arrays([self._names, *(v.cast(pa.string()) for v in values)]))
        self._names = encoded.dictionary
        codes = np.array(encoded.indices.to_numpy(zero_copy_only=False)[known:], dtype=np.int32)  # a copy: a view
        # would keep the known ids' codes alive with every block
        return np.split(codes, np.cumsum([len(v) for v in values])[:-1])

    def categorical(self, codes: np.ndarray) -> pd.Categorical:
        """``codes`` as a pandas categorical over the ids known now (codes stay comparable across files)."""
        names = pd.Index(self._names.to_numpy(zero_copy_only=False), dtype=object)
        return pd.Categorical.from_codes(codes, categories=names, validate=False)


def read_pairs(
    reader: FieldReader,
    width: int,
    layout: str,
    skip: int | None,
    vocabulary: Vocabulary,
    sides: tuple[int, int],
    columns: dict[str, Callable[[FieldBlock], np.ndarray]],
    *,
    numbered: bool = True,
) -> pd.DataFrame:
    """Every data line of ``reader`` as a row: ``enrol_utt`` and ``test_utt`` (fields ``sides``, categorical over
    ``vocabulary``), each of ``columns`` (made from each block), and with ``numbered`` the 1-based ``line``."""
    parts: dict[str, list[np.ndarray]] = {name: [] for name in ("enrol_utt", "test_utt", *columns, "line")}
    for block in reader.blocks(width, layout, skip=skip):
        enrol, test = vocabulary.encode(block.fields[sides[0]], block.fields[sides[1]])
        parts["enrol_utt"].append(enrol)
        parts["test_utt"].append(test)
        for name, column in columns.items():
            parts[name].append(column(block))
        parts["line"].append(block.lines.astype(np.int32))
    joined = {name: np.concatenate(arrays) for name, arrays in parts.items()}
    frame = pd.DataFrame(
        {
            "enrol_utt": vocabulary.categorical(joined.pop("enrol_utt")),
            "test_utt": vocabulary.categorical(joined.pop("test_utt")),
            **joined,
        }
    )
    return frame if numbered else frame.drop(columns="line")
