"""The binding steps on synthetic bundles: the audited table to the signed rows, the signed rows to the statement.

The rows' metrics come from independent oracles in ``tests/provenance/synthetic_bundle.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).parents[2] / "provenance"))  # the shared bundle factory
from bundle_checks import RECORD, by_id, error_ids, failures_of, sections_of, verify_bundle
from synthetic_bundle import SyntheticBundle


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
