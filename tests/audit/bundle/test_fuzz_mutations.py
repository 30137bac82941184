"""Property-based mutations of an audited table and of a signed bundle, through the command line a reviewer runs.

One clean signed synthetic bundle is copied per example and mutated the way a careless or hostile party could:
cells, rows and column names of the audited table (value changes beyond printing, look-alike names, dropped and
repeated rows), and the bundle's own files (a byte changed, a file cut short, removed or added, a link in place of a
file) without the author's key. The invariants, whatever the mutation:

- exit 0 only when the audited table still equals the signed rows in every signed column and every file verifies:
  a mutation that changes a signed value or a file is never a PASS;
- never a traceback, only the exit codes 0, 1 and 2;
- nothing written outside ``--out``: the bundle's files and the table are byte for byte what they were.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.fuzzing import examples
from tests.provenance.synthetic_bundle import SyntheticBundle, build_bundle

FUZZ = settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
SIGNED_NUMBERS = ("eer", "min_dcf", "auc", "n_target", "n_nontarget")
SIGNED_TEXT = ("experiment", "model", "condition", "level_a", "checkpoint_blake3", "trial_list_id")
LOOK_ALIKES = ("EER", "eer ", "e\u0435r", "Min_DCF", "A.U.C", "n-target")
BUNDLE_FILES = ("results.csv", "operators.json", "checkpoints.json", "config.toml", "corpus/utterances.csv")


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> SyntheticBundle:
    return build_bundle(tmp_path_factory.mktemp("clean"), analysis="equivalence_margin = 0.05\nn_resamples = 20")


def _snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder``: a file's bytes, a link's target."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            found[name] = f"-> {os.readlink(path)}"
        elif path.is_file():
            found[name] = path.read_bytes()
    return found


TABLE_MUTATIONS = st.one_of(
    st.tuples(st.just("number"), st.sampled_from(SIGNED_NUMBERS), st.integers(0, 7), st.sampled_from([0.5, -1, 7])),
    st.tuples(st.just("text"), st.sampled_from(SIGNED_TEXT), st.integers(0, 7), st.text(min_size=1, max_size=6)),
    st.tuples(st.just("drop-row"), st.integers(0, 7)),
    st.tuples(st.just("repeat-row"), st.integers(0, 7)),
    st.tuples(st.just("look-alike"), st.sampled_from(LOOK_ALIKES)),
    st.tuples(st.just("rename"), st.sampled_from(SIGNED_NUMBERS + SIGNED_TEXT), st.sampled_from(LOOK_ALIKES)),
)
FILE_MUTATIONS = st.one_of(
    st.tuples(st.just("byte"), st.sampled_from(BUNDLE_FILES), st.integers(0, 10_000), st.integers(1, 255)),
    st.tuples(st.just("truncate"), st.sampled_from(BUNDLE_FILES), st.integers(0, 200)),
    st.tuples(st.just("remove"), st.sampled_from(BUNDLE_FILES)),
    st.tuples(st.just("stray"), st.sampled_from(["notes.txt", "scores/extra.parquet", "trials/x.csv"])),
    st.tuples(st.just("link"), st.sampled_from(BUNDLE_FILES)),
)


def _mutate_table(table: pd.DataFrame, mutation: tuple[Any, ...]) -> tuple[pd.DataFrame, bool]:
    """The mutated table, and whether the mutation certainly leaves it bound to the signed rows."""
    kind = mutation[0]
    if kind in ("number", "text", "rename") and mutation[1] not in table.columns:
        return table, True  # renamed by an earlier mutation: that one decided
    if kind == "number":
        _, column, row, delta = mutation
        row %= len(table)  # an earlier mutation may have dropped rows
        table.loc[row, column] = str(float(table.loc[row, column]) + delta)
        return table, False
    if kind == "text":
        _, column, row, text = mutation
        row %= len(table)
        unchanged = table.loc[row, column] == text
        table.loc[row, column] = text
        return table, bool(unchanged)
    if kind == "drop-row":
        return table.drop(index=mutation[1] % len(table)).reset_index(drop=True), False
    if kind == "repeat-row":
        return pd.concat([table, table.iloc[[mutation[1] % len(table)]]], ignore_index=True), False
    if kind == "look-alike":
        return table.assign(**{mutation[1]: "0.01"}), False
    _, column, name = mutation
    return table.rename(columns={column: name}), False


def _mutate_file(root: Path, mutation: tuple[Any, ...]) -> None:
    kind, name = mutation[0], mutation[1]
    path = root / name
    if kind == "byte":
        data = bytearray(path.read_bytes())
        data[mutation[2] % len(data)] ^= mutation[3]
        path.write_bytes(bytes(data))
    elif kind == "truncate":
        path.write_bytes(path.read_bytes()[: mutation[2] % max(len(path.read_bytes()), 1)])
    elif kind == "remove":
        path.unlink()
    elif kind == "stray":
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"not ours\n")
    else:  # a link to a copy outside the bundle, in place of the file
        outside = root.parent / f"outside-{path.name}"
        shutil.copyfile(path, outside)
        path.unlink()
        path.symlink_to(outside)


def _audit(table: Path, root: Path, key: Path, out: Path) -> tuple[int, dict[str, Any] | None]:
    from audit.cli import app

    result = CliRunner().invoke(app, ["verify", str(table), "--bundle", str(root), "--key", str(key), "--json",
                                      "--out", str(out)])  # fmt: skip
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.stdout + result.stderr
    assert result.exit_code in (0, 1, 2), result.exit_code
    report = json.loads(result.stdout) if result.stdout.strip().startswith("{") else None
    return result.exit_code, report


def _same_rows(table: pd.DataFrame, signed: pd.DataFrame) -> bool:
    """Whether ``table`` holds exactly the signed rows (the same columns, each row as often), in any order."""
    if list(table.columns) != list(signed.columns):
        return False
    return sorted(map(tuple, table.to_numpy().tolist())) == sorted(map(tuple, signed.to_numpy().tolist()))


def _copy(clean: SyntheticBundle, tmp_path: Path) -> tuple[Path, Path]:
    """A fresh folder holding a copy of the clean bundle (hypothesis reruns an example while it shrinks)."""
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    shutil.copytree(clean.root, folder / "bundle", symlinks=True)
    return folder, folder / "bundle"


@pytest.mark.slow
@FUZZ
@given(mutations=st.lists(TABLE_MUTATIONS, min_size=1, max_size=3))
def test_a_mutated_table_passes_only_when_it_is_still_the_signed_one(
    clean: SyntheticBundle, tmp_path: Path, mutations: list[tuple[Any, ...]]
) -> None:
    folder, root = _copy(clean, tmp_path)
    signed = pd.read_csv(root / "results.csv", dtype=str, keep_default_na=False)
    table, bound = signed.copy(), True
    for mutation in mutations:
        table, unchanged = _mutate_table(table, mutation)
        bound &= unchanged
    # A row repeated and then dropped can leave the signed rows in another order: still the signed table.
    bound |= _same_rows(table, signed)
    path = folder / "table.csv"
    table.to_csv(path, index=False)
    before = _snapshot(folder)
    code, _ = _audit(path, root, clean.public_key, folder / "out")
    if not bound:
        assert code != 0, mutations
    after = {name: data for name, data in _snapshot(folder).items() if name.split("/")[0] != "out"}
    assert after == before  # the audit wrote nothing but its report


@pytest.mark.slow
@FUZZ
@given(mutation=FILE_MUTATIONS)
def test_a_bundle_changed_without_the_key_never_passes_and_is_never_written_to(
    clean: SyntheticBundle, tmp_path: Path, mutation: tuple[Any, ...]
) -> None:
    folder, root = _copy(clean, tmp_path)
    table = folder / "table.csv"
    shutil.copyfile(root / "results.csv", table)
    _mutate_file(root, mutation)
    before = _snapshot(folder)
    code, report = _audit(table, root, clean.public_key, folder / "out")
    assert code != 0, mutation
    if report is not None:
        assert report["verdict"] == "fail" and report["cause"] is not None
    after = {name: data for name, data in _snapshot(folder).items() if name.split("/")[0] != "out"}
    assert after == before
