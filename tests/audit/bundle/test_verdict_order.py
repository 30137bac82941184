"""Issue 44: honest tables in shapes the toolkit did not write PASS, and the verdict's first line is the true cause.

The bundle is the synthetic one (``tests/provenance/synthetic_bundle.py``), its ``config.toml`` declaring the factor
level ``babble`` held out, as the default bundle declares two. The rounding oracle is Python's ``decimal`` module
(``ROUND_HALF_EVEN``, ``ROUND_HALF_UP``) and pandas' own ``DataFrame.round``, never the code under test.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from audit.verify import AuditRequest
from audit.verify import verify as verify_api
from schemas import PUBLIC_KEY_FILE
from tests.audit.bundle.bundle_checks import RECORD, failures_of, verify_bundle
from tests.provenance.synthetic_bundle import SyntheticBundle, build_bundle

HELD_OUT = 'held_out_levels = ["babble"]'


@pytest.fixture
def held_out(tmp_path: Path) -> SyntheticBundle:
    return build_bundle(tmp_path, analysis=HELD_OUT)


def _signed(bundle: SyntheticBundle) -> pd.DataFrame:
    return pd.read_csv(bundle.root / "results.csv", dtype=str, keep_default_na=False)


def _paper(bundle: SyntheticBundle) -> pd.DataFrame:
    """The signed rows as a paper prints them: its key columns and the EER rounded by pandas to 3 decimals."""
    signed = _signed(bundle)
    return signed[["experiment", "model", "condition"]].assign(eer=signed["eer"].astype(float).round(3))


def _audit(bundle: SyntheticBundle, table: pd.DataFrame, folder: Path, **request: Any) -> dict[str, Any]:
    path = folder / "table.csv"
    table.to_csv(path, index=False)
    return verify_api(AuditRequest(path, bundle=bundle.root, key=request.pop("key", bundle.public_key), **request))


def _errors(report: dict[str, Any]) -> list[str]:
    return [flag["id"] for flag in report["flags"] if flag["severity"] == "error"]


def _section(report: dict[str, Any], section_id: str) -> dict[str, Any]:
    return next(section for section in report["sections"] if section["id"] == section_id)


def test_a_paper_shaped_table_with_one_changed_value_is_blamed_on_the_binding_alone(
    held_out: SyntheticBundle, tmp_path: Path
) -> None:
    """Point 1: the held-out levels are checked against the signed rows, not the audited table; the statistics do
    not run on a table that did not bind; the columns a paper never prints do not become a schema error."""
    paper = _paper(held_out)
    assert _audit(held_out, paper, tmp_path)["verdict"] == "pass"
    row = int(paper.index[_signed(held_out)["record_id"] == RECORD][0])
    signed_eer = _signed(held_out).loc[row, "eer"]
    paper.loc[row, "eer"] = round(float(signed_eer), 3) + 0.01
    report = _audit(held_out, paper, tmp_path)
    assert report["verdict"] == "fail" and _errors(report) == ["table-binding"]
    cause = report["cause"]
    assert cause["flag"] == "table-binding" and cause["other_errors"] == []
    assert cause["cases"] == [
        f"row {row + 1}, record {RECORD}, column eer: {paper.loc[row, 'eer']} in the table, {signed_eer} signed"
    ]
    assert _section(report, "per-trial-statistics")["lines"][0].startswith(
        "Not run: the audited table did not bind to the signed results table"
    )


def test_a_signed_held_out_level_that_no_signed_row_has_is_still_the_first_cause(tmp_path: Path) -> None:
    """The check of the signed configuration still runs, on the signed files, whatever table is audited."""
    bundle = build_bundle(tmp_path, analysis='held_out_levels = ["pink"]')
    report = _audit(bundle, _paper(bundle), tmp_path)
    assert _errors(report) == ["bundle-schema"]
    assert "held_out_levels: 1 name is no factor level of the experiments: pink" in report["cause"]["message"]


TIES = {"E13-m1-babble-opus": "0.1125", "E13-m2-none-none": "0.0875", "E13-m2-babble-none": "0.3335"}


def _at_ties(results: pd.DataFrame) -> pd.DataFrame:
    return results.assign(eer=[TIES.get(str(record), eer) for record, eer in results[["record_id", "eer"]].values])


def _printed(text: str, rounding: str) -> str:
    return str(Decimal(text).quantize(Decimal("0.001"), rounding=rounding))


@pytest.mark.parametrize(
    ("rule", "binds"),
    [
        ("pandas", True),  # DataFrame.round: half to even on the double (0.1125 -> 0.112)
        (ROUND_HALF_EVEN, True),
        (ROUND_HALF_UP, True),  # 0.1125 -> 0.113
        ("one unit below", False),
        ("one unit above", False),
    ],
)
def test_a_value_within_half_a_unit_of_its_last_printed_digit_binds_and_nothing_wider(
    tmp_path: Path, rule: str, binds: bool
) -> None:
    """Point 2: signed EERs exactly halfway between two printed values, printed by either rounding rule."""
    bundle = build_bundle(tmp_path, results_edit=_at_ties)
    table = pd.read_csv(bundle.root / "results.csv", dtype=str, keep_default_na=False)
    if rule == "pandas":
        table["eer"] = table["eer"].astype(float).round(3).map(lambda value: f"{value:.3f}")
    elif rule in (ROUND_HALF_EVEN, ROUND_HALF_UP):
        table["eer"] = table["eer"].map(lambda text: _printed(text, rule))
    else:
        table["eer"] = table["eer"].map(lambda text: _printed(text, ROUND_HALF_EVEN))
        step = Decimal("-0.001") if rule == "one unit below" else Decimal("0.001")
        low, high = Decimal("0.112"), Decimal("0.113")  # the two printings of the tie 0.1125
        row = table["record_id"] == RECORD
        table.loc[row, "eer"] = str((low if step < 0 else high) + step)
    assert table.loc[table["record_id"] == RECORD, "eer"].iloc[0] in {"0.111", "0.112", "0.113", "0.114"}
    flags, _ = verify_bundle(table, bundle.root, bundle.public_key)
    binding = [flag for flag in flags if flag.id == "table-binding"]
    # the signed EERs no longer re-score (score-mismatch): only the binding is under test here
    assert not binding if binds else [case["record_id"] for case in failures_of(flags, "table-binding")] == [RECORD]


def test_an_honest_table_declared_in_percent_binds(held_out: SyntheticBundle, tmp_path: Path) -> None:
    """Point 7: percents as a float multiplication prints them (``100 * eer``, noise in the last place) and
    rounded to one decimal, both declared with ``eer_scale = "percent"``."""
    mapping = tmp_path / "percent.toml"
    mapping.write_text('eer_scale = "percent"\n[columns]\n')
    percent = _signed(held_out)["eer"].astype(float) * 100
    for printed in (percent.map(repr), percent.round(1).map(str)):
        report = _audit(held_out, _paper(held_out).assign(eer=printed), tmp_path, columns=mapping)
        assert report["verdict"] == "pass", report.get("cause")


@pytest.mark.parametrize(
    ("shape", "subset"),
    [
        ("signed", "condition in [none+none, none+opus]"),
        ("paper", "condition in [none+none, none+opus] and model = m1"),
        ("paper", "model = m2"),
    ],
)
def test_a_correctly_declared_subset_passes(held_out: SyntheticBundle, tmp_path: Path, shape: str, subset: str) -> None:
    """Points 4 and 7: a subset that leaves out every row of a held-out level (``babble``) passes."""
    table = _signed(held_out) if shape == "signed" else _paper(held_out)
    keep = table["condition"].isin(["none+none", "none+opus"]) if "condition in" in subset else True
    if "model =" in subset:
        keep &= table["model"] == subset.rsplit("= ", 1)[1]
    report = _audit(held_out, table[keep], tmp_path, subset=subset)
    assert report["verdict"] == "pass", report.get("cause")
    assert report["trust"]["subset"]["rows"] == int(keep.sum())


def _cli(*args: str) -> tuple[int, str, str]:
    from audit.cli import app

    result = CliRunner().invoke(app, ["verify", *args])
    assert "Traceback" not in result.stdout + result.stderr
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(("name", "meant"), [("EER ", "eer"), ("sub_group", "subgroup"), ("Subgrup", "subgroup")])
@pytest.mark.parametrize("with_bundle", [False, True], ids=["table-only", "bundle"])
def test_a_column_that_stands_for_an_audit_column_gets_a_did_you_mean(
    held_out: SyntheticBundle, tmp_path: Path, name: str, meant: str, with_bundle: bool
) -> None:
    """Points 4 and 6: never dropped without a word, never read as a false cause; one line, exit 2."""
    table = _signed(held_out)
    table = table.rename(columns={"eer": name}) if meant == "eer" else table.assign(**{name: "gender=F"})
    table.to_csv(tmp_path / "table.csv", index=False)
    bundle = ["--bundle", str(held_out.root), "--key", str(held_out.public_key)] if with_bundle else []
    code, stdout, stderr = _cli(str(tmp_path / "table.csv"), *bundle)
    assert code == 2 and stdout == ""
    [line] = stderr.strip().splitlines()
    assert f"column {name!r}: not a results.csv column; did you mean {meant!r}?" in line


def test_an_extra_column_unlike_any_audit_column_is_kept_as_not_compared(
    held_out: SyntheticBundle, tmp_path: Path
) -> None:
    report = _audit(held_out, _signed(held_out).assign(min_dcf_ci="[0.1, 0.2]"), tmp_path)
    assert report["verdict"] == "pass" and report["trust"]["not_compared"] == ["min_dcf_ci"]


def test_the_bundles_own_enclosed_key_as_key_is_unauthenticated(held_out: SyntheticBundle, tmp_path: Path) -> None:
    """Point 5: the reviewer trusted nothing independent of the bundle."""
    report = _audit(held_out, _signed(held_out), tmp_path, key=held_out.root / PUBLIC_KEY_FILE)
    assert report["verdict"] == "unauthenticated"
    assert report["trust"]["trust"] == "bundle-key" and not report["trust"]["trusted"]
    assert any("lies inside the bundle" in line for line in _section(report, "bundle-signature")["lines"])
    outside = tmp_path / "authors.pub"  # the same key, obtained from the authors: trusted
    shutil.copyfile(held_out.public_key, outside)
    assert _audit(held_out, _signed(held_out), tmp_path, key=outside)["verdict"] == "pass"


def test_the_folder_a_release_zip_was_unzipped_into_gives_the_zips_verdict(
    held_out: SyntheticBundle, tmp_path: Path
) -> None:
    """Point 5: a release archive wraps the bundle in one top-level folder, which unzipping keeps."""
    archive = Path(shutil.make_archive(str(tmp_path / "release"), "zip", held_out.root.parent, held_out.root.name))
    with zipfile.ZipFile(archive) as opened:
        opened.extractall(tmp_path / "unzipped")
    table = held_out.root / "results.csv"

    def verdict(bundle: Path) -> tuple[int, str, list[str]]:
        code, stdout, _ = _cli(str(table), "--bundle", str(bundle), "--key", str(held_out.public_key), "--json")
        report = json.loads(stdout)
        return code, report["verdict"], sorted(flag["id"] for flag in report["flags"])

    assert verdict(tmp_path / "unzipped") == verdict(archive) == verdict(held_out.root)
    assert verdict(archive)[:2] == (0, "pass")


@pytest.mark.parametrize(
    ("column", "values", "passes"),
    [
        ("model", {"M1": "m2", "M2": "m1"}, False),  # the paper prints M1 beside m2's numbers
        ("model", {"m\u0031\u200b": "m2"}, False),  # "m1" with a zero-width space, bound to m2
        ("condition", {"None+Opus": "babble+none", "Babble+None": "none+opus"}, False),
        ("model", {"M1": "m1", "M2": "m2"}, True),  # respelled as themselves
        ("model", {"ECAPA": "m1"}, True),  # a legacy name that reads as no signed value
    ],
)
def test_a_value_map_through_look_alike_labels_binds_only_to_the_value_it_reads_as(
    held_out: SyntheticBundle, tmp_path: Path, column: str, values: dict[str, str], passes: bool
) -> None:
    """Point 7: a map that swaps look-alike labels (or two conditions through them) fails; an honest one passes."""
    paper = _paper(held_out)
    inverse = {target: source for source, target in values.items()}
    paper[column] = paper[column].map(lambda value: inverse.get(value, value))
    mapping = tmp_path / "map.toml"
    entries = "".join(f'"{source}" = "{target}"\n' for source, target in values.items())
    mapping.write_text(f"[columns]\n[values.{column}]\n{entries}")
    report = _audit(held_out, paper, tmp_path, columns=mapping)
    assert (report["verdict"] == "pass") is passes, report.get("cause")
    if not passes:
        assert report["cause"]["flag"] == "table-binding"
        assert any("which reads as the signed value" in case for case in report["cause"]["cases"])
