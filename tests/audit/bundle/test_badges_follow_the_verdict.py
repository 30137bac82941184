"""The ACM summary follows the verdict, one audit per verdict kind on a synthetic signed bundle.

PASS, a declared subset's PASS, a FAIL of each family (signature, digest, bundle schema, table binding, score
mismatch), UNAUTHENTICATED and a table audited alone: a FAIL or UNAUTHENTICATED lowers every criterion it undermines
with its reason first among the gaps, and every count is over the audited rows (a count never exceeds its total).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from audit.verify import AuditRequest, verify
from provenance.digests import file_digest
from provenance.keys import generate_keypair
from reports.badges import artefact_evaluation_summary
from tests.audit.bundle.bundle_checks import RECORD, resign
from tests.provenance.synthetic_bundle import SyntheticBundle, build_bundle

ANALYSIS = 'equivalence_margin = 0.05\nn_resamples = 40\nseed = 3\ndev_speakers = ["s0", "s1"]'
AVAILABLE, FUNCTIONAL, REUSABLE, REPRODUCED = (
    "Artifacts Available",
    "Artifacts Evaluated - Functional",
    "Artifacts Evaluated - Reusable",
    "Results Reproduced",
)
EVERY_ROW_AGREES = re.compile(r"every audited row \(\d+\) were recomputed")


def badges(report: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Each criterion's row of the summary; every 'X of N' it prints has X <= N."""
    rows = {row["criterion"]: row for row in artefact_evaluation_summary(report)["table"]["rows"]}
    for row in rows.values():
        for present, total in re.findall(r"(\d+) of (\d+)", row["what this artefact shows"] + row["what is missing"]):
            assert int(present) <= int(total), row
    return rows


def statuses(rows: dict[str, dict[str, str]]) -> list[str]:
    return [rows[criterion]["status"] for criterion in (AVAILABLE, FUNCTIONAL, REUSABLE, REPRODUCED)]


def first_gap(rows: dict[str, dict[str, str]], criterion: str) -> str:
    return rows[criterion]["what is missing"].split("\n")[0]


def audit(bundle: SyntheticBundle, table: Path | None = None, **options: Any) -> dict[str, Any]:
    options = {"bundle": bundle.root, "key": bundle.public_key} | options
    chosen = {k: v for k, v in options.items() if v is not None}
    return verify(AuditRequest(table or bundle.root / "results.csv", **chosen))


@pytest.fixture
def bundle(tmp_path: Path) -> SyntheticBundle:
    return build_bundle(tmp_path, analysis=ANALYSIS)


def test_pass_shows_reusable_over_every_row(bundle: SyntheticBundle) -> None:
    report = audit(bundle)
    rows = badges(report)
    assert report["verdict"] == "pass"
    assert statuses(rows) == ["partly shown", "partly shown", "shown", "partly shown"]  # DOI, coverage, a rerun
    assert (
        "a verified checkpoint digest for 8 of 8 audited rows (100.0 %)" in rows[REUSABLE]["what this artefact shows"]
    )
    assert EVERY_ROW_AGREES.search(rows[REPRODUCED]["what this artefact shows"])
    assert "verdict" not in " ".join(row["what is missing"] for row in rows.values())


def test_a_subset_pass_counts_the_audited_rows(bundle: SyntheticBundle, tmp_path: Path) -> None:
    table = tmp_path / "m1.csv"
    bundle.results[bundle.results["model"] == "m1"].to_csv(table, index=False)
    report = audit(bundle, table, subset="model = m1")
    rows = badges(report)
    assert report["verdict"] == "pass" and report["trust"]["subset"]["rows"] == 4
    assert rows[REUSABLE]["status"] == "shown"
    assert (
        "a verified checkpoint digest for 4 of 4 audited rows (100.0 %)" in rows[REUSABLE]["what this artefact shows"]
    )
    assert "every audited row (4) were recomputed" in rows[REPRODUCED]["what this artefact shows"]


def _other_key(bundle: SyntheticBundle) -> None:
    generate_keypair(bundle.root.parent / "other.pem", bundle.root.parent / "other.pub")


def _truncated_scores(bundle: SyntheticBundle) -> None:
    path = bundle.root / "scores" / f"{RECORD}.parquet"
    path.write_bytes(path.read_bytes()[:100])


def _operators_not_json_resigned(bundle: SyntheticBundle) -> None:
    (bundle.root / "operators.json").write_text("{not json")

    def redigest(statement: dict[str, Any]) -> None:
        for subject in statement["subject"]:
            digest = file_digest(bundle.root / subject["name"])
            subject["digest"] = {"sha256": digest.sha256, "blake3": digest.blake3}

    resign(bundle, redigest)


ALL = (AVAILABLE, FUNCTIONAL, REUSABLE, REPRODUCED)
# Per family: the damage, the four statuses, the criteria it caps (its reason first among their gaps) and whether
# every audited row still re-scores (a broken operators.json leaves the scores and their metrics verified).
FAILS: dict[str, tuple[Callable[[SyntheticBundle], None], list[str], tuple[str, ...], bool]] = {
    "bad-signature": (_other_key, ["partly shown", "not shown", "not shown", "not shown"], ALL, False),
    "digest-mismatch": (_truncated_scores, ["partly shown", "not shown", "partly shown", "partly shown"], ALL, False),
    "bundle-schema": (
        _operators_not_json_resigned,
        ["partly shown", "not shown", "partly shown", "partly shown"],
        (FUNCTIONAL, REUSABLE, REPRODUCED),
        True,
    ),
}


@pytest.mark.parametrize("family", sorted(FAILS))
def test_a_bundle_that_fails_caps_what_it_undermines(bundle: SyntheticBundle, family: str) -> None:
    damage, expected, capped, rescored = FAILS[family]
    damage(bundle)
    other = bundle.root.parent / "other.pub"
    report = audit(bundle, key=other if other.exists() else bundle.public_key)
    rows = badges(report)
    assert report["verdict"] == "fail" and report["cause"]["flag"] == family
    assert statuses(rows) == expected
    for criterion in capped:
        assert first_gap(rows, criterion).startswith(f"verdict FAIL ({family}): "), rows[criterion]
    assert bool(EVERY_ROW_AGREES.search(rows[REPRODUCED]["what this artefact shows"])) == rescored


def test_a_table_that_differs_from_the_signed_one_leaves_nothing_shown(bundle: SyntheticBundle, tmp_path: Path) -> None:
    table = pd.read_csv(bundle.root / "results.csv", dtype=str, keep_default_na=False)
    table.loc[table["record_id"] == RECORD, "eer"] = "0.3"
    table.to_csv(tmp_path / "paper.csv", index=False)
    report = audit(bundle, tmp_path / "paper.csv")
    rows = badges(report)
    assert report["cause"]["flag"] == "table-binding"
    assert statuses(rows) == ["partly shown", "partly shown", "partly shown", "not shown"]
    for criterion in (FUNCTIONAL, REUSABLE, REPRODUCED):
        assert first_gap(rows, criterion).startswith("verdict FAIL (table-binding): the audited table is not the")
    shown = rows[REPRODUCED]["what this artefact shows"]
    assert not EVERY_ROW_AGREES.search(shown) and "7 of 8 audited rows (87.5 %)" in shown
    assert "all three verified for 7 of 8 audited rows (87.5 %)" in rows[REUSABLE]["what is missing"]


def test_signed_metrics_that_their_scores_contradict_are_not_reproduced(tmp_path: Path) -> None:
    def lie(results: pd.DataFrame) -> pd.DataFrame:
        return results.assign(eer=results["eer"].where(results["record_id"] != RECORD, results["eer"] + 0.05))

    report = audit(build_bundle(tmp_path, analysis=ANALYSIS, results_edit=lie))
    rows = badges(report)
    assert report["cause"]["flag"] == "score-mismatch"
    assert statuses(rows) == ["partly shown", "partly shown", "partly shown", "not shown"]
    assert (
        first_gap(rows, REPRODUCED) == "verdict FAIL (score-mismatch): signed metrics do not follow from their "
        "per-trial scores"
    )
    assert "7 of 8 audited rows (87.5 %)" in rows[REPRODUCED]["what this artefact shows"]


def test_unauthenticated_caps_every_criterion_with_its_reason(bundle: SyntheticBundle) -> None:
    report = audit(bundle, key=None)
    rows = badges(report)
    assert report["verdict"] == "unauthenticated"
    assert statuses(rows) == ["partly shown"] * 4
    assert all(first_gap(rows, c).startswith("verdict UNAUTHENTICATED: the signature verifies only") for c in rows)
    assert all("trusted key" not in row["what this artefact shows"] for row in rows.values())


def test_a_table_alone_says_what_was_not_checked(bundle: SyntheticBundle) -> None:
    report = verify(AuditRequest(bundle.root / "results.csv"))
    rows = badges(report)
    assert report["verdict"] == "pass" and report["checked"] == "table only"
    assert statuses(rows) == ["partly shown", "partly shown", "partly shown", "not shown"]
    for criterion in (FUNCTIONAL, REUSABLE, REPRODUCED):
        assert first_gap(rows, criterion) == "table checks only: no signature, digests or scores were checked"
