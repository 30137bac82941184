"""``audit verify --out BUNDLE/report``: the folder ``interbias reproduce`` writes, which the audit never reads.

On a signed synthetic bundle: the report is written there, the bundle still passes with it present (a second audit
gives the same verdict and checks), and a folder of the same bundle other than ``report/`` is still refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.provenance.synthetic_bundle import SyntheticBundle


def audit(*args: str | Path) -> tuple[int, str, str]:
    from audit.cli import app

    result = CliRunner().invoke(app, ["verify", *map(str, args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.slow
def test_the_report_is_written_into_the_bundles_report_folder_and_changes_nothing_audited(
    bundle: SyntheticBundle,
) -> None:
    out = bundle.root / "report"
    args = (bundle.root / "results.csv", "--bundle", bundle.root, "--key", bundle.public_key, "--out", out)
    code, stdout, stderr = audit(*args)
    assert code == 0 and stdout.startswith("PASS"), stderr
    first = json.loads((out / "report.json").read_text())
    assert (out / "report.html").is_file() and list((out / "figures").glob("*.png"))
    code, stdout, _ = audit(*args)  # the report of the first run lies in the bundle now
    second = json.loads((out / "report.json").read_text())
    assert code == 0 and stdout.startswith("PASS")
    assert [(s["id"], s["status"]) for s in second["sections"]] == [(s["id"], s["status"]) for s in first["sections"]]
    assert second["flags"] == first["flags"]
    code, _, stderr = audit(*args[:-1], bundle.root / "scores" / "report")
    assert code == 2 and "is inside the bundle folder" in stderr
