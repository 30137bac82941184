"""The binding steps on synthetic bundles: the audited table to the signed rows, the signed rows to the statement.

The rows' metrics come from independent oracles in ``tests/provenance/synthetic_bundle.py``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from audit.table.reading import read_results
from audit.verify import AuditRequest
from audit.verify import verify as verify_api
from tests.audit.bundle.bundle_checks import RECORD, by_id, error_ids, failures_of, sections_of, verify_bundle
from tests.provenance.synthetic_bundle import SyntheticBundle


def test_changed_eer_in_a_table_outside_the_bundle_is_a_table_binding_error_only(bundle: SyntheticBundle) -> None:
    results = bundle.read_results()
    signed = float(results.loc[results["record_id"] == RECORD, "eer"].iloc[0])
    results.loc[results["record_id"] == RECORD, "eer"] += 0.002
    flags, _ = verify_bundle(results, bundle.root, bundle.public_key)
    assert error_ids(flags) == {"table-binding"}
    [failure] = failures_of(flags, "table-binding")
    assert (failure["record_id"], failure["column"]) == (RECORD, "eer")
    assert float(failure["signed"]) == signed and float(failure["table"]) == signed + 0.002


def test_a_table_row_naming_other_digests_is_not_bound(bundle: SyntheticBundle) -> None:
    results = bundle.read_results()
    results.loc[results["record_id"] == RECORD, "checkpoint_blake3"] = "0" * 64
    flags, sections = verify_bundle(results, bundle.root, bundle.public_key)
    assert error_ids(flags) == {"table-binding"}
    assert by_id(flags)["table-binding"].records == (RECORD,)
    assert failures_of(flags, "table-binding")[0]["column"] == "checkpoint_blake3"
    coverage = {row["binding"]: row["rows"] for row in sections_of(sections)["bundle-coverage"]["table"]}
    assert coverage["all three verified"] == 8  # the signed rows themselves are bound


def test_an_all_text_table_as_read_by_audit_io_verifies(bundle: SyntheticBundle) -> None:
    text_table = pd.read_csv(bundle.root / "results.csv", dtype=str, keep_default_na=False, na_values=[""])
    flags, _ = verify_bundle(text_table, bundle.root, bundle.public_key)
    assert flags == []


def _paper_table(bundle: SyntheticBundle) -> pd.DataFrame:
    """The signed rows as a paper prints them: no record_id or provenance, capitalised headers, EER to 3 decimals."""
    signed = pd.read_csv(bundle.root / "results.csv", dtype=str, keep_default_na=False)
    return pd.DataFrame(
        {
            "Experiment": signed["experiment"],
            "Model": signed["model"],
            "Condition": signed["condition"],
            "EER": signed["eer"].astype(float).map(lambda value: f"{value:.3f}"),
        }
    )


PAPER_COLUMNS = '[columns]\n"Experiment" = "experiment"\n"Model" = "model"\n"Condition" = "condition"\n"EER" = "eer"\n'


def test_a_paper_shaped_table_binds_by_its_natural_key_and_takes_provenance_from_the_bundle(
    bundle: SyntheticBundle, tmp_path: Path
) -> None:
    table, mapping = tmp_path / "paper.csv", tmp_path / "map.toml"
    _paper_table(bundle).to_csv(table, index=False)
    mapping.write_text(PAPER_COLUMNS)
    report = verify_api(AuditRequest(table, columns=mapping, bundle=bundle.root, key=bundle.public_key))
    assert report["verdict"] == "pass", [f["message"] for f in report["flags"] if f["severity"] == "error"]
    assert not {flag["id"] for flag in report["flags"]} & {"schema", "missing-provenance", "table-binding"}
    lines = " ".join(next(s for s in report["sections"] if s["id"] == "bundle-table-binding")["lines"])
    assert "bind by the key experiment, model, condition" in lines and "eer 3 decimals" in lines
    assert "Taken from the bound signed rows" in lines and "checkpoint_blake3" in lines
    assert report["trust"]["rounded_columns"] == ["eer"]


def test_a_key_that_several_signed_rows_share_or_none_is_named(bundle: SyntheticBundle, tmp_path: Path) -> None:
    paper = _paper_table(bundle)
    ambiguous = paper.drop(columns="Condition")
    ambiguous.to_csv(tmp_path / "ambiguous.csv", index=False)
    (tmp_path / "map.toml").write_text(PAPER_COLUMNS.replace('"Condition" = "condition"\n', ""))
    flags, _ = verify_bundle(
        read_results(tmp_path / "ambiguous.csv", tmp_path / "map.toml").frame, bundle.root, bundle.public_key
    )
    problems = {failure["problem"] for failure in failures_of(flags, "table-binding")}
    assert any(problem.startswith("4 signed rows share this key: E13-m1-") for problem in problems)
    unknown = pd.read_csv(bundle.root / "results.csv", dtype=str).drop(columns="record_id")
    unknown.loc[0, "condition"] = "none+gsm"
    flags, _ = verify_bundle(unknown, bundle.root, bundle.public_key)
    [case] = [f for f in failures_of(flags, "table-binding") if f["problem"] == "not a record of the signed table"]
    assert case["row"] == 1 and "condition=none+gsm" in case["record_id"]


@pytest.mark.parametrize("name", ["EER", "eer ", "e\u0435r", "Min-DCF", "AUC"])
def test_a_column_that_passes_for_a_signed_one_is_an_error(bundle: SyntheticBundle, name: str) -> None:
    """Its forged values would be read as the signed ones while the binding compared nothing."""
    table = pd.read_csv(bundle.root / "results.csv", dtype=str).assign(**{name: "0.9"})
    flags, _ = verify_bundle(table, bundle.root, bundle.public_key)
    [case] = failures_of(flags, "table-binding")
    assert case["column"] == name and case["problem"].startswith("looks like the signed column")


def test_an_unrelated_column_is_named_as_not_compared(bundle: SyntheticBundle) -> None:
    table = pd.read_csv(bundle.root / "results.csv", dtype=str).assign(notes="checked by hand")
    flags, sections = verify_bundle(table, bundle.root, bundle.public_key)
    assert flags == []
    assert (
        "Not compared (the signed table has no such column): notes."
        in sections_of(sections)["bundle-table-binding"]["lines"]
    )


def test_one_cell_printed_coarser_than_its_column_is_compared_at_the_columns_precision(
    bundle: SyntheticBundle,
) -> None:
    table = pd.read_csv(bundle.root / "results.csv", dtype=str)
    table["eer"] = table["eer"].astype(float).map(lambda value: f"{value:.3f}")
    row = int(table.index[table["record_id"] == RECORD][0])
    signed = table.loc[row, "eer"]
    table.loc[row, "eer"] = signed[:3]  # 0.217 printed as 0.2: true to one decimal, not to the column's three
    flags, _ = verify_bundle(table, bundle.root, bundle.public_key)
    [case] = failures_of(flags, "table-binding")
    assert (case["record_id"], case["column"], case["table"]) == (RECORD, "eer", signed[:3])


@pytest.mark.parametrize(
    ("values", "fails"),
    [('"m1" = "m2"\n"m2" = "m1"\n', True), ('"ECAPA" = "m1"\n', False)],
    ids=["swaps-two-signed-models", "respells-a-legacy-name"],
)
def test_a_value_map_that_respells_a_signed_value_is_an_error(
    bundle: SyntheticBundle, tmp_path: Path, values: str, fails: bool
) -> None:
    """Swapping two encoders' rows and mapping them back would otherwise bind."""
    table = pd.read_csv(bundle.root / "results.csv", dtype=str, keep_default_na=False)
    table["model"] = table["model"].map({"m1": "m2", "m2": "m1"} if fails else {"m1": "ECAPA", "m2": "m2"})
    if fails:  # each model's numbers given to the other
        table["record_id"] = table["record_id"].str.replace("-m1-", "-mX-").str.replace("-m2-", "-m1-")
        table["record_id"] = table["record_id"].str.replace("-mX-", "-m2-")
    table.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "map.toml").write_text("[columns]\n[values.model]\n" + values)
    report = verify_api(
        AuditRequest(tmp_path / "t.csv", columns=tmp_path / "map.toml", bundle=bundle.root, key=bundle.public_key)
    )
    binding = next((f for f in report["flags"] if f["id"] == "table-binding"), None)
    assert (binding is not None) is fails
    if fails:
        problems = [case["problem"] for case in binding["details"]["failures"] if case.get("column") == "model"]
        assert problems[:2] == [
            "the mapping file respells the signed value 'm1' as 'm2'",
            "the mapping file respells the signed value 'm2' as 'm1'",
        ]


def test_the_examples_paper_shaped_table_binds_with_its_mapping(bundle: SyntheticBundle, tmp_path: Path) -> None:
    """examples/paper_shaped_table.py and examples/paper_columns.toml, as the review tutorial runs them."""
    import importlib.util

    examples = Path(__file__).resolve().parents[3] / "examples"
    spec = importlib.util.spec_from_file_location("paper_shaped_table", examples / "paper_shaped_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.paper_table(bundle.root / "results.csv").to_csv(tmp_path / "paper.csv", index=False)
    report = verify_api(
        AuditRequest(
            tmp_path / "paper.csv", columns=examples / "paper_columns.toml", bundle=bundle.root, key=bundle.public_key
        )
    )
    assert report["verdict"] == "pass" and report["trust"]["key"] == ["experiment", "model", "condition"]
    assert report["trust"]["not_compared"] == ["subgroup"]  # the synthetic bundle signs no subgroup column
