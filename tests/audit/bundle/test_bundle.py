"""verify_bundle on a clean synthetic bundle: every step passes, with full coverage. The tampering scenarios are
beside it, one module per verification step (test_signature, test_subjects, test_binding, test_trial_checks), and
the hostile authors and forgers in test_hostile_bundles.

The bundles are written by ``tests/provenance/synthetic_bundle.py``; the rows' metrics there come from
independent oracles (sklearn's roc_curve snippet, a brute-force minDCF sweep, sklearn's AUC), not from
``audit.metrics.point``.
"""

from __future__ import annotations

from tests.audit.bundle.bundle_checks import sections_of, verify_bundle
from tests.provenance.synthetic_bundle import SyntheticBundle


def test_clean_bundle_passes_with_full_coverage(bundle: SyntheticBundle) -> None:
    flags, sections = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    assert flags == []
    assert {section["status"] for section in sections} == {"pass"}
    by_id = sections_of(sections)
    assert "reviewer's key" in by_id["bundle-signature"]["lines"][0]
    assert bundle.manifest.key_id in by_id["bundle-signature"]["lines"][0]
    assert [row["fraction"] for row in by_id["bundle-coverage"]["table"]] == [1.0] * 5
    assert [row["audited_rows"] for row in by_id["bundle-coverage"]["table"]] == [8] * 5
    assert len(by_id["bundle-rescore"]["table"]) == 8
