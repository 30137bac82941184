"""Artefact-evaluation summary: each ACM criterion judged from hand-built legacy and bundle reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reports import write_report
from reports.badges import artefact_evaluation_summary

CRITERIA = [
    "Artifacts Available",
    "Artifacts Evaluated - Functional",
    "Artifacts Evaluated - Reusable",
    "Results Reproduced",
]


def legacy_report() -> dict[str, Any]:
    """The paper's situation: 1,878 of 4,068 rows with a checkpoint digest, no trial lists, no scores."""
    coverage = {
        "checkpoint_blake3": {"present": 1878, "total": 4068, "fraction": 1878 / 4068},
        "run_id": {"present": 4068, "total": 4068, "fraction": 1.0},
        "trial_list_id": {"present": 0, "total": 4068, "fraction": 0.0},
    }
    return {
        "source": {
            "path": "legacy.csv",
            "sha256": "0123456789abcdef" * 4,
            "blake3": "f" * 64,
            "n_rows": 4068,
        },
        "verdict": "fail",
        "flags": [
            {
                "id": "missing-provenance",
                "severity": "warning",
                "records": ["r1"],
                "message": "rows lack it",
                "details": {"coverage": coverage},
            },
            {
                "id": "trials-unverifiable",
                "severity": "warning",
                "records": [],
                "message": "no trial list ids",
            },
            {
                "id": "claims-not-reproduced",
                "severity": "error",
                "records": [],
                "message": "1 not reproduced",
            },
        ],
        "aggregates": {"per_experiment": [{"experiment": "E01"}] * 17, "contrasts": [{"ie": 0.0}] * 40},
        "claims": [
            {"id": "a", "status": "reproduced"},
            {"id": "b", "status": "reproduced"},
            {"id": "c", "status": "reproduced"},
            {"id": "d", "status": "not reproduced"},
        ],
        "sections": [{"id": "per-trial-statistics", "title": "Per-trial statistics", "status": "skipped"}],
    }


def bundle_report(**statuses: str) -> dict[str, Any]:
    """A fully bound, signed bundle of 10 rows; every check passed unless ``statuses`` says otherwise."""
    checks = ["signature", "subject-digests", "rows", "rescore", "shared-trials", "operators"]
    sections: list[dict[str, Any]] = [
        {"id": f"bundle-{check}", "title": check, "status": statuses.get(check.replace("-", "_"), "pass")}
        for check in checks
    ]
    bindings = [
        "a verified checkpoint digest",
        "a verified trial list",
        "verified per-trial scores",
        "metrics that re-score to the signed values",
    ]
    sections.append(
        {
            "id": "bundle-coverage",
            "title": "coverage",
            "status": "pass",
            "lines": [],
            "table": [{"binding": b, "rows": 10, "fraction": 1.0, "audited_rows": 10} for b in bindings],
        }
    )
    return {
        "source": {"path": "results.csv", "sha256": "ab" * 32, "blake3": "cd" * 32, "n_rows": 10},
        "verdict": "pass",
        "trust": {"trust": "trusted-key", "key_id": "ef" * 32, "trusted": True},
        "flags": [],
        "aggregates": {"per_experiment": [{"experiment": "E13"}], "contrasts": [{"ie": 0.01}]},
        "claims": [{"id": "a", "status": "reproduced"}],
        "sections": sections,
    }


def _by_criterion(report: dict[str, Any]) -> dict[str, dict[str, str]]:
    section = artefact_evaluation_summary(report)
    assert section["table"]["columns"] == [
        "criterion",
        "status",
        "what this artefact shows",
        "what is missing",
    ]
    rows = {row["criterion"]: row for row in section["table"]["rows"]}
    assert list(rows) == CRITERIA
    return rows


def test_legacy_table_states_what_cannot_be_rederived() -> None:
    rows = _by_criterion(legacy_report())
    assert rows["Artifacts Available"]["status"] == "partly shown"
    assert "SHA-256 0123456789abcdef..." in rows["Artifacts Available"]["what this artefact shows"]
    assert "DOI" in rows["Artifacts Available"]["what is missing"]
    functional = rows["Artifacts Evaluated - Functional"]
    assert functional["status"] == "partly shown"  # a table alone: no signature, digests or scores checked
    assert functional["what is missing"].startswith("table checks only: no signature, digests or scores were checked")
    assert "17 experiments and 40 contrasts" in functional["what this artefact shows"]
    reusable = rows["Artifacts Evaluated - Reusable"]
    assert reusable["status"] == "partly shown"
    assert "checkpoint digest coverage is only 1878 of 4068 rows (46.2 %)" in reusable["what is missing"]
    assert "trial list id coverage is only 0 of 4068 rows (0.0 %)" in reusable["what is missing"]
    assert "run id recorded for 4068 of 4068 rows (100.0 %)" in reusable["what this artefact shows"]
    assert "trials-unverifiable" in reusable["what is missing"]
    reproduced = rows["Results Reproduced"]
    assert reproduced["status"] == "not shown"  # a published number is contradicted
    assert "3 of 4 published numbers recomputed within tolerance" in reproduced["what this artefact shows"]
    assert "per-trial scores are absent, so the results cannot be re-derived" in reproduced["what is missing"]
    assert "1 published number not reproduced" in reproduced["what is missing"]
    assert artefact_evaluation_summary(legacy_report())["status"] == "fail"


def test_clean_bundle_shows_functional_and_reusable() -> None:
    rows = _by_criterion(bundle_report())
    assert rows["Artifacts Evaluated - Functional"]["status"] == "shown"
    assert (
        "recomputed for 1 experiment and 1 contrast"
        in rows["Artifacts Evaluated - Functional"]["what this artefact shows"]
    )
    assert rows["Artifacts Evaluated - Reusable"]["status"] == "shown"
    assert (
        "a verified checkpoint digest for 10 of 10 audited rows (100.0 %)"
        in rows["Artifacts Evaluated - Reusable"]["what this artefact shows"]
    )
    assert "statement signed by a trusted key" in rows["Artifacts Available"]["what this artefact shows"]
    reproduced = rows["Results Reproduced"]
    assert reproduced["status"] == "partly shown"  # an independent rerun from audio is still outside the audit
    assert (
        "every audited row (10) were recomputed from its verified per-trial scores"
        in reproduced["what this artefact shows"]
    )
    assert "per-trial scores are absent" not in reproduced["what is missing"]
    section = artefact_evaluation_summary(bundle_report())
    assert section["status"] == "warning"
    assert len(section["lines"]) == 4


def test_tampered_bundle_contradicts_functional_and_reproduced() -> None:
    report = bundle_report(subject_digests="fail", rescore="fail")
    report["flags"] = [
        {
            "id": "digest-mismatch",
            "severity": "error",
            "records": ["r1"],
            "message": "scores/r1.parquet differs",
        },
        {"id": "score-mismatch", "severity": "error", "records": ["r1"], "message": "r1 EER 0.1 vs 0.2"},
    ]
    rows = _by_criterion(report)
    functional, reproduced = rows["Artifacts Evaluated - Functional"], rows["Results Reproduced"]
    assert functional["status"] == reproduced["status"] == "not shown"
    assert functional["what is missing"].startswith("verdict FAIL (digest-mismatch): bundle files differ")
    assert "verdict FAIL (score-mismatch): signed metrics do not follow" in reproduced["what is missing"]
    assert rows["Artifacts Available"]["status"] == "partly shown"


def test_empty_report_shows_nothing() -> None:
    rows = _by_criterion({})
    assert {row["status"] for row in rows.values()} == {"not shown"}
    assert all(row["what this artefact shows"] == "nothing" for row in rows.values())


def test_summary_renders_as_a_report_section(tmp_path: Path) -> None:
    report = legacy_report()
    report["sections"].append(artefact_evaluation_summary(report))
    write_report(report, tmp_path)
    markdown = (tmp_path / "report.md").read_text()
    assert "## Artefact-evaluation summary (ACM badges) (status: fail)" in markdown
    assert "checkpoint digest coverage is only 1878 of 4068 rows (46.2 %)" in markdown
    assert "<br>" in markdown  # several items in one cell stay inside the table row


def test_a_bundle_signed_only_by_its_own_key_never_shows_a_verified_statement() -> None:
    report = bundle_report()
    report["verdict"] = "unauthenticated"
    report["trust"] = {"trust": "bundle-key", "key_id": "ef" * 32, "trusted": False}
    rows = _by_criterion(report)
    shown = " ".join(row["what this artefact shows"] for row in rows.values())
    assert "trusted key" not in shown and "statement verifies" not in shown
    assert "who signed them is not established" in rows["Artifacts Available"]["what is missing"]
