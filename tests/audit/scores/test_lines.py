"""audit.scores.lines against Python's own line splitting: whatever the text and wherever the blocks end (a block
ending exactly at a line's end, in the middle of a line, of a field), the streamed reader gives every data line's
number and fields as ``str.splitlines`` and ``str.split`` do, plain or gzip, and the digest of the bytes stored."""

from __future__ import annotations

import gzip
import hashlib
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.scores import lines as lines_module
from audit.scores.lines import FieldReader
from tests.fuzzing import examples

FIELD = st.text(alphabet="abcxyz0123456789./-_", min_size=1, max_size=6)
LINE = st.one_of(
    st.just(""),
    st.lists(FIELD, min_size=3, max_size=3).map(" ".join),
    st.lists(FIELD, min_size=3, max_size=3).map(lambda f: f"  {f[0]}\t{f[1]}   {f[2]} "),
    st.lists(FIELD, min_size=3, max_size=3).map(lambda f: " ".join(f) + "\r"),  # CRLF, as Windows writes
    st.lists(FIELD, min_size=3, max_size=3).map(lambda f: f"{f[0]}  {f[1]} {f[2]}"),  # a run of spaces
)


def _expected(text: str) -> list[tuple[int, list[str]]]:
    return [(number, line.split()) for number, line in enumerate(text.splitlines(), start=1) if line.split()]


def _read(path: Path) -> list[tuple[int, list[str]]]:
    reader = FieldReader(path, "a test file")
    reader.head()
    found = []
    for block in reader.blocks(3, "'<a> <b> <c>'"):
        columns = [field.to_pylist() for field in block.fields]
        found += [(int(number), [column[i] for column in columns]) for i, number in enumerate(block.lines)]
    assert reader.digest().sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(LINE, min_size=1, max_size=40).filter(lambda rows: any(r.strip() for r in rows)),
    block=st.integers(1, 64),
    final_newline=st.booleans(),
    packed=st.booleans(),
)
def test_every_line_read_as_python_splits_it_wherever_the_blocks_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: list[str], block: int, final_newline: bool, packed: bool
) -> None:
    monkeypatch.setattr(lines_module, "BLOCK_BYTES", block)
    text = "\n".join(rows) + ("\n" if final_newline else "")
    path = tmp_path / ("f.txt.gz" if packed else "f.txt")
    path.write_bytes(gzip.compress(text.encode()) if packed else text.encode())
    assert _read(path) == _expected(text)


def test_a_block_that_ends_exactly_at_a_line_end_does_not_end_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The case that lost 27 % of a 10 M-line file: every block of 12 bytes ends with a line break."""
    monkeypatch.setattr(lines_module, "BLOCK_BYTES", 12)
    text = "".join(f"a{i:02d} b{i:02d} c{i:02d}\n" for i in range(50))  # 12 bytes a line
    (tmp_path / "f.txt").write_text(text)
    assert [number for number, _ in _read(tmp_path / "f.txt")] == list(range(1, 51))


@pytest.mark.parametrize(("bad", "problem"), [("a b", "got 2 field(s)"), ("a b c d", "got 4 field(s)")])
def test_a_line_of_another_width_after_plain_blocks_is_named_by_its_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str, problem: str
) -> None:
    """Plain blocks go the fast path (Arrow's CSV reader); the block holding the bad line goes the slow one, which
    names it by the number Python's own splitting gives it (blank lines counted)."""
    from schemas import InputError

    monkeypatch.setattr(lines_module, "BLOCK_BYTES", 64)
    rows = [f"a{i:03d} b{i:03d} c{i:03d}" for i in range(300)]
    rows[10] = ""
    rows[257] = bad
    (tmp_path / "f.txt").write_text("\n".join(rows) + "\n")
    with pytest.raises(InputError, match=re.escape(problem)) as raised:
        _read(tmp_path / "f.txt")
    assert raised.value.row == 258
