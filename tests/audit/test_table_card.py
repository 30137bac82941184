"""``audit verify TABLE --out DIR --croissant``: a Croissant card of a table audited without a bundle, written beside
the report once the audit finished; refused without ``--out`` and with ``--bundle`` (one line, exit 2); removed by a
later audit into the same folder without the flag. mlcroissant is the oracle of the card (``tests/provenance/
test_croissant.py`` compares its records with pandas' reading); digests are recomputed with ``hashlib``."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import mlcroissant as mlc
import pytest
from typer.testing import CliRunner

from audit.table import read_results
from provenance import write_table_card

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def cli(*args: str | Path) -> tuple[int, str, str]:
    from audit.cli import app

    result = CliRunner().invoke(app, [str(arg) for arg in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.slow  # two table audits with their reports and figures: about 12 s on a loaded machine
def test_the_card_lies_beside_the_report_and_goes_when_a_later_audit_does_not_ask(tmp_path: Path) -> None:
    table = shutil.copy(EXAMPLES / "results.csv", tmp_path / "results.csv")
    out = tmp_path / "report"
    code, _, stderr = cli("verify", table, "--out", out, "--croissant")
    assert code == 1, stderr  # the example table raises error flags: the audit finished, with a FAIL
    card = json.loads((out / "croissant.json").read_bytes())
    (table_object,) = card["distribution"]
    assert table_object["contentUrl"] == "../results.csv"
    assert table_object["sha256"] == hashlib.sha256(Path(table).read_bytes()).hexdigest()
    issues = mlc.Dataset(jsonld=str(out / "croissant.json")).metadata.ctx.issues
    assert not issues.errors and not [w for w in issues.warnings if "required" in w], issues.report()
    assert not [path for path in out.iterdir() if path.name.endswith(".tmp")]
    code, _, _ = cli("verify", table, "--out", out)
    assert code == 1 and not (out / "croissant.json").exists()  # no card beside a report that did not write it


def test_a_legacy_table_s_fields_are_read_under_its_own_column_names(tmp_path: Path) -> None:
    """The rename map as the audit reads it (``read_results``, what ``audit verify --columns`` passes on)."""
    source = read_results(EXAMPLES / "legacy-results.csv", EXAMPLES / "legacy-mapping.toml")
    path = write_table_card(tmp_path, source.path, source.digest, "0.1.0", source.renamed)
    card = json.loads(path.read_bytes())
    columns = {field["name"]: field["source"]["extract"]["column"] for field in card["recordSet"][0]["field"]}
    assert columns["eer"] == "EER (%)" and columns["model"] == "Model"  # by hand, from legacy-mapping.toml
    assert "not applied" in card["description"]  # the map's percent EER is not what the file holds
    dataset = mlc.Dataset(jsonld=str(path))
    assert not dataset.metadata.ctx.issues.errors, dataset.metadata.ctx.issues.report()
    first = next(iter(dataset.records("results")))
    assert first["results/eer"] == pytest.approx(0.83) and first["results/model"] == b"campplus"  # as the file has


def test_croissant_needs_out_no_bundle_and_a_utf8_table(tmp_path: Path) -> None:
    table = EXAMPLES / "results.csv"
    code, stdout, stderr = cli("verify", table, "--croissant")
    assert (code, stdout) == (2, "") and stderr.count("\n") == 1 and "give --out too" in stderr
    code, stdout, stderr = cli("verify", table, "--out", tmp_path / "r", "--croissant", "--bundle", tmp_path / "b")
    assert (code, stdout) == (2, "") and stderr.count("\n") == 1
    assert "the bundle carries its own signed croissant.json" in stderr
    utf16 = tmp_path / "utf16.csv"
    utf16.write_bytes(table.read_text(encoding="utf-8").encode("utf-16"))  # the audit reads it; Croissant does not
    code, stdout, stderr = cli("verify", utf16, "--out", tmp_path / "r", "--croissant")
    assert (code, stdout) == (2, "") and stderr.count("\n") == 1 and "save this UTF-16 one as UTF-8" in stderr
    assert not (tmp_path / "r").exists()
