"""The audit without its command line: ``audit.verify.verify`` and ``exit_code``, and ``reports.finish_report``,
the one ending shared by ``audit verify`` and ``interbias reproduce``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit.result import exit_code
from audit.verify import AuditRequest, verify
from reports import finish_report
from reports.badges import SECTION_ID
from schemas.errors import InputError
from tests.provenance.synthetic_bundle import SyntheticBundle, build_bundle


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> SyntheticBundle:
    return build_bundle(tmp_path_factory.mktemp("api"))


def test_a_bundle_signed_by_the_trusted_key_passes_and_exits_0(bundle: SyntheticBundle) -> None:
    report = verify(AuditRequest(bundle.root / "results.csv", bundle=bundle.root, key=bundle.public_key))
    assert report["verdict"] == "pass" and exit_code(report) == 0


def test_without_a_trusted_key_the_verdict_is_unauthenticated_and_exits_1(bundle: SyntheticBundle) -> None:
    report = verify(AuditRequest(bundle.root / "results.csv", bundle=bundle.root))
    assert report["verdict"] == "unauthenticated" and exit_code(report) == 1


@pytest.mark.slow
def test_finish_report_adds_the_summary_and_writes_the_report(bundle: SyntheticBundle, tmp_path: Path) -> None:
    report = verify(AuditRequest(bundle.root / "results.csv", bundle=bundle.root, key=bundle.public_key))
    n_sections = len(report["sections"])
    written = finish_report(report, tmp_path / "report")
    assert [section["id"] for section in report["sections"][n_sections:]] == [SECTION_ID]
    assert [path.name for path in written[:3]] == ["report.json", "report.md", "report.html"]
    assert json.loads((tmp_path / "report" / "report.json").read_text())["verdict"] == "pass"
    assert finish_report(verify(AuditRequest(bundle.root / "results.csv", bundle=bundle.root)), None) == []


def test_a_report_folder_that_is_a_file_is_an_input_error(bundle: SyntheticBundle, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    report = verify(AuditRequest(bundle.root / "results.csv", bundle=bundle.root, key=bundle.public_key))
    with pytest.raises(InputError, match="cannot write here: --out is a link or not a folder"):
        finish_report(report, blocker)
