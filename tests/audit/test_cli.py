"""`audit verify` on the command line: exit codes 0/1/2, one-line input errors, JSON output, report files."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "results.csv"
HEADER = "record_id,experiment,model,corpus,condition,eer,n_target,n_nontarget"
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    from audit.cli import app

    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def one_line_error(stderr: str, path: Path, problem: str) -> None:
    """The input-error contract: exactly one line naming the file and the problem, no traceback."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(str(path))
    assert problem in lines[0]
    assert "Traceback" not in stderr


def clean_table(tmp_path: Path, model: str = "m1") -> Path:
    rows = [f"r{i},E14,{model},c1,cond{i},0.{i + 1},100,1000" for i in range(3)]
    return write(tmp_path / "results.csv", HEADER + "\n" + "\n".join(rows) + "\n")


def test_a_table_without_errors_exits_0(tmp_path: Path) -> None:
    import gc

    code, stdout, _ = invoke("verify", str(clean_table(tmp_path)))
    assert code == 0
    assert gc.isenabled()  # the audit paused the cyclic collector while it ran, and no longer
    # a table audited alone says what was not checked, in the verdict's own line
    assert stdout.startswith("PASS (table checks only: no signature, digests or scores were checked): ")
    assert "missing-provenance" in stdout  # warnings do not fail the audit


def test_the_example_table_exits_1_with_every_table_only_flag() -> None:
    code, stdout, _ = invoke("verify", str(EXAMPLE))
    assert code == 1
    # the cause first: the first error in one sentence on the verdict's line, errors listed before warnings
    assert stdout.startswith("FAIL (table checks only: no signature, digests or scores were checked): schema: ")
    severities = [
        line.split()[0] for line in stdout.splitlines()[1:] if line.startswith("  ") and not line.startswith("   ")
    ]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)
    flag_ids = [
        "schema",
        "percent-scale",
        "eer-above-chance",
        "near-chance-prediction",
        "coupled-correlation",
        "unstable-ratio",
        "missing-term",
        "cross-corpus-reference",
        "ambiguous-term",
        "substituted-reference",
        "unmatched-trials",
        "trials-unverifiable",
        "unpaired-subgroup",
        "budget-mismatch",
        "missing-provenance",
        "coverage",
    ]
    for flag_id in flag_ids:
        assert f" {flag_id}: " in stdout, flag_id


def test_json_output_is_strict_json_in_the_report_shape() -> None:
    code, stdout, _ = invoke("verify", str(EXAMPLE), "--json", "--claims", str(ROOT / "examples" / "claims.toml"))
    assert code == 1

    def no_constants(name: str) -> None:
        raise AssertionError(f"non-JSON constant {name}")

    report = json.loads(stdout, parse_constant=no_constants)
    assert set(report) == {
        "tool",
        "source",
        "verdict",
        "cause",
        "checked",
        "trust",
        "run",
        "config",
        "flags",
        "aggregates",
        "claims",
        "sections",
    }
    assert report["trust"] is None and report["run"] is None  # no bundle: nothing was signed
    assert report["source"]["n_rows"] == len(EXAMPLE.read_text().splitlines()) - 1
    assert set(report["flags"][0]) == {"id", "severity", "records", "message", "meaning", "details"}
    contrast_keys = set(
        [
            "experiment",
            "model",
            "corpus",
            "subgroup",
            "factor_a",
            "level_a",
            "factor_b",
            "level_b",
            "eer_clean",
            "eer_a",
            "eer_b",
            "eer_ab",
            "prediction",
            "ie",
        ]
    )
    assert contrast_keys <= set(report["aggregates"]["contrasts"][0])
    assert {s["id"] for s in report["sections"]} == {"rows-used", "per-trial-statistics", "artefact-evaluation"}
    assert {c["status"] for c in report["claims"]} == {"reproduced", "not reproduced", "not computable"}


def test_out_writes_the_report_and_escapes_html_from_labels(tmp_path: Path) -> None:
    label = "<script>alert(1)</script>"
    table = write(tmp_path / "results.csv", f'{HEADER}\nr1,E14,"{label}",c1,clean,0.1,100,1000\n')
    code, stdout, _ = invoke("verify", str(table), "--out", str(tmp_path / "report"))
    assert code == 0
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["aggregates"]["per_encoder"][0]["model"] == label
    html = (tmp_path / "report" / "report.html").read_text()
    assert label not in html
    assert "&lt;script&gt;" in html
    assert f"wrote {tmp_path / 'report' / 'report.html'}" in stdout


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("empty.csv", "", "empty file"),
        ("blank.csv", "\n \n", "empty file"),
        ("binary.csv", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
        (
            "latin1.csv",
            (HEADER + "\nr1,E14,m\xe9,c,clean,0.1,100,1000\n").encode("latin-1"),
            "not UTF-8 text",
        ),
        ("page.csv", "<html><body><p>Not found</p></body></html>\n", "not a results table"),
        ("header.csv", HEADER + "\n", "no data rows"),
        (
            "ragged.csv",
            HEADER + "\nr1,E14,m,c,clean,0.1,100,1000,extra,more\n",
            "row 1: not a CSV table: 10 fields",
        ),
        (
            "short.csv",
            HEADER + "\nr1,E14,m,c,clean,0.1,100,1000\nr2,E14\n",
            "row 2: not a CSV table: 2 fields",
        ),
        ("quote.csv", HEADER + '\nr1,E14,"m,c,clean,0.1,100,1000\n', "row 1: not a CSV table: 3 fields"),
        ("twice.csv", HEADER + ",eer\nr1,E14,m,c,clean,0.1,100,1000,0.2\n", "duplicate column names"),
    ],
)
def test_unreadable_tables_exit_2_with_one_line(tmp_path: Path, name: str, content: str | bytes, problem: str) -> None:
    path = write(tmp_path / name, content)
    code, stdout, stderr = invoke("verify", str(path))
    assert code == 2
    assert stdout == ""
    one_line_error(stderr, path, problem)


def test_missing_file_and_directory_exit_2(tmp_path: Path) -> None:
    code, _, stderr = invoke("verify", str(tmp_path / "absent.csv"))
    assert code == 2
    one_line_error(stderr, tmp_path / "absent.csv", "no such file")
    code, _, stderr = invoke("verify", str(tmp_path))
    assert code == 2
    one_line_error(stderr, tmp_path, "is a directory")
    code, _, stderr = invoke("verify", str(EXAMPLE), "--bundle", str(tmp_path / "no-bundle"))
    assert code == 2
    one_line_error(
        stderr,
        tmp_path / "no-bundle",
        "bundle not found (expected the folder of results.csv, trials/, scores/, or a .zip/.tar.gz of it)",
    )


@pytest.mark.parametrize(
    ("mapping", "problem"),
    [
        ("[columns\n", "not valid TOML"),
        ('[columns]\n"EER" = "eer"\n', "names columns absent from"),
        ('[columns]\n"model" = "encoder"\n', "not a results.csv column"),
        ('[columns]\n"model" = "corpus"\n', "renames onto columns that"),
        ('names = ["x"]\n', "expected a [columns] table"),
    ],
)
def test_bad_column_maps_exit_2(tmp_path: Path, mapping: str, problem: str) -> None:
    column_map = write(tmp_path / "map.toml", mapping)
    code, _, stderr = invoke("verify", str(clean_table(tmp_path)), "--columns", str(column_map))
    assert code == 2
    one_line_error(stderr, column_map, problem)


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("claims.toml", '[[claim]]\nid = "x"\n', "[[claim]] number 1: missing 'table'"),
        ("binary.toml", b"\x00\x01", "binary file (expected a TOML claims file)"),
        ("folder", None, "is a directory (expected a TOML claims file)"),
        ("absent.toml", None, "no such file (expected a TOML claims file)"),
    ],
)
def test_bad_claims_files_exit_2(tmp_path: Path, name: str, content: str | bytes | None, problem: str) -> None:
    claims = tmp_path / name
    if content is not None:
        write(claims, content)
    elif name == "folder":
        claims.mkdir()
    code, _, stderr = invoke("verify", str(clean_table(tmp_path)), "--claims", str(claims))
    assert code == 2
    one_line_error(stderr, claims, problem)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("r1,E14,m,c,clean,nan,100,1000", "1 schema failure in 1 row"),
        ("r1,E14,m,c,clean,inf,100,1000", "1 schema failure in 1 row"),
        ("r1,E14,m,c,clean,0.1,lots,1000", "1 schema failure in 1 row"),
        ("r1,E14,m,c,clean,0.1,100,1000\nr1,E14,m,c,noisy,0.2,100,1000", "2 schema failures in 2 rows"),
        ("r1,E14,m,c,clean,12.5,100,1000", "percent-scale: 1 row with an EER above 1"),
    ],
)
def test_bad_values_exit_1_with_the_flag(tmp_path: Path, rows: str, message: str) -> None:
    table = write(tmp_path / "results.csv", f"{HEADER}\n{rows}\n")
    code, stdout, _ = invoke("verify", str(table))
    assert code == 1
    assert message in stdout


def test_missing_columns_exit_1_naming_them(tmp_path: Path) -> None:
    table = write(tmp_path / "results.csv", "record_id,experiment,model,corpus,condition\nr1,E14,m,c,clean\n")
    code, stdout, _ = invoke("verify", str(table))
    assert code == 1
    assert "Required columns are missing (eer, n_target, n_nontarget)" in stdout


def test_schema_failure_row_and_column_in_json(tmp_path: Path) -> None:
    table = write(tmp_path / "results.csv", f"{HEADER}\nr1,E14,m,c,clean,0.1,100,1000\nr2,E14,m,c,x,0.1,100,-5\n")
    code, stdout, _ = invoke("verify", str(table), "--json")
    assert code == 1
    (flag,) = [f for f in json.loads(stdout)["flags"] if f["id"] == "schema"]
    assert flag["details"]["failures"] == [
        {"row": 2, "column": "n_nontarget", "check": "must be > 0", "value": -5, "record_id": "r2"}
    ]


@pytest.mark.parametrize("args", [[], ["verify"], ["verify", "x.csv", "--bogus"], ["unknown-command"]])
def test_usage_errors_exit_2(args: list[str]) -> None:
    code, _, _ = invoke(*args)
    assert code == 2


def test_the_installed_entry_point_prints_one_line_and_no_traceback(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "audit.cli", "verify", str(tmp_path / "absent.csv")],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 2
    one_line_error(done.stderr, tmp_path / "absent.csv", "no such file")


@pytest.mark.every_install  # torch installed beside it is what makes this a check
def test_importing_the_audit_does_not_import_torch() -> None:
    code = "import sys, audit.verify, audit.cli; print(sorted(m for m in sys.modules if m.startswith('torch')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "[]"


def test_the_examples_are_what_the_script_writes() -> None:
    spec = importlib.util.spec_from_file_location("make_examples", ROOT / "examples" / "make_examples.py")
    assert spec is not None and spec.loader is not None
    make_examples = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_examples)
    assert EXAMPLE.read_text() == make_examples.results_csv()
    for name, text in make_examples.FILES.items():
        assert (ROOT / "examples" / name).read_text() == text, name


def test_a_tables_figures_drawn_beside_the_audit_are_those_drawn_in_process(tmp_path: Path) -> None:
    """``--out`` without a bundle: the figures matplotlib draws come from a process forked before the audit's
    imports (``table_drawer``), the heatmap from this one; the report is byte for byte the one drawn in process."""
    from audit.verify import AuditRequest, verify
    from reports import finish_report

    code, stdout, _ = invoke("verify", str(EXAMPLE), "--out", str(tmp_path / "beside"))
    assert code == 1
    written = [Path(line.removeprefix("wrote ")) for line in stdout.splitlines() if line.startswith("wrote ")]
    finish_report(verify(AuditRequest(EXAMPLE)), tmp_path / "in-process")
    assert {path.name for path in written} >= {"interaction_plots.svg", "eer_heatmap.png", "gap_vs_snr.png"}
    assert sorted(p.relative_to(tmp_path / "in-process") for p in (tmp_path / "in-process").rglob("*.*")) == sorted(
        path.relative_to(tmp_path / "beside") for path in written
    )
    for path in written:
        assert path.read_bytes() == (tmp_path / "in-process" / path.relative_to(tmp_path / "beside")).read_bytes()


def test_the_command_line_starts_without_pandas() -> None:
    """The table drawer is forked before the audit imports pandas, so that matplotlib's import runs beside it: the
    command line's own start (typer, the commands' modules) imports neither."""
    code = "import sys, audit.cli; print(sorted({'pandas', 'pandera', 'matplotlib'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert result.stdout.strip() == "[]"
