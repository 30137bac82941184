"""Legacy tables: the mapping file's value maps and EER scale, checked by hand, and the synthetic legacy example on
which every paper claim is computed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from audit.table.reading import read_results
from audit.verify import AuditRequest, verify
from schemas.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
HEADER = "Run,Exp,Model,Condition,Gender,EER,n_target,n_nontarget"
COLUMNS = '[columns]\n"Run" = "record_id"\n"Exp" = "experiment"\n"Gender" = "subgroup"\n"EER" = "eer"\n'


def table(tmp_path: Path, rows: list[str], mapping: str) -> tuple[Path, Path]:
    (tmp_path / "legacy.csv").write_text(
        "\n".join([HEADER.replace("Model", "model").replace("Condition", "condition"), *rows]) + "\n"
    )
    (tmp_path / "map.toml").write_text(mapping)
    return tmp_path / "legacy.csv", tmp_path / "map.toml"


def test_value_maps_conditions_snr_and_percent(tmp_path: Path) -> None:
    rows = [
        "r1,exp13,campplus,clean,,0.86,100,1000",
        "r2,exp13,campplus,age 60+,,1.5,100,1000",
        "r3,exp16,campplus,babble 5dB,female,12.5,100,1000",
        "r4,exp16,campplus,clean,male,2,100,1000",
    ]
    mapping = COLUMNS + (
        '[experiments]\n"exp13" = "E13"\n"exp16" = "E16"\n'
        '[values.model]\n"campplus" = "CAM++"\n[values.subgroup]\n"female" = "gender=F"\n"male" = "gender=M"\n'
        "[snr]\npattern = '^(?P<noise>[a-z]+) (?P<snr>-?\\d+)dB$'\n"
        '[conditions."age 60+"]\nfactor_a = "age"\nlevel_a = "60+"\n'
        '[conditions.E13.clean]\nfactor_a = "age"\nlevel_a = "none"\n'
    )
    source = read_results(*table(tmp_path, rows, mapping))
    frame = source.frame
    assert frame["experiment"].tolist() == ["E13", "E13", "E16", "E16"]
    assert frame["model"].tolist() == ["CAM++"] * 4
    assert frame["subgroup"].tolist()[2:] == ["gender=F", "gender=M"]
    assert frame["condition"].tolist() == ["clean", "age 60+", "babble_5dB", "clean"]
    # The E13-only clean label sets the factor there, not on E16's clean row.
    assert frame["level_a"].tolist()[:2] == ["none", "60+"] and frame["level_a"].isna().tolist()[2:] == [True, True]
    # 12.5 > 1: the whole table is percent, so 0.86 % is 0.0086, not a fraction 0.86.
    assert frame["eer"].tolist() == ["0.0086", "0.015", "0.125", "0.02"]
    assert source.mapping == {
        "experiment ids mapped": 4,
        "model values respelled": 4,
        "subgroup values respelled": 2,
        "condition labels mapped to factors": 2,
        "SNR labels parsed": 1,
        "eer_scale": "percent (inferred: the largest EER, 12.5, is above 1)",
    }


@pytest.mark.parametrize(
    ("largest", "declared", "expected"),
    [
        ("0.4", "", ("0.4", "fraction (inferred: every EER is at most 0.5)")),
        ("0.7", 'eer_scale = "fraction"\n', ("0.7", "fraction (declared)")),
        ("0.7", 'eer_scale = "percent"\n', ("0.007", "percent (declared)")),
    ],
)
def test_the_eer_scale_is_declared_or_inferred(tmp_path: Path, largest: str, declared: str, expected: tuple) -> None:
    source = read_results(*table(tmp_path, [f"r1,E01,m,clean,,{largest},100,1000"], declared + COLUMNS))
    assert (source.frame["eer"].iloc[0], source.mapping["eer_scale"]) == expected


@pytest.mark.parametrize(
    ("mapping", "problem"),
    [
        (COLUMNS, "eer_scale is needed: the largest EER, 0.7, reads as a fraction above chance or a percent below 1 %"),
        ('eer_scale = "permille"\n' + COLUMNS, 'eer_scale must be "fraction" or "percent"'),
        ("colour = 1\n" + COLUMNS, "unknown keys colour"),
        (COLUMNS + '[values.speaker]\n"a" = "b"\n', "[values.speaker]: 'speaker' is not a results.csv column"),
        (COLUMNS + '[conditions.clean]\nnoise = "x"\n', "[conditions.'clean'] sets noise"),
        (COLUMNS + "[snr]\npattern = '(\\d+)dB'\n", "named groups (?P<noise>...) and (?P<snr>...)"),
        # a back-reference needs a backtracking engine: RE2 refuses it, in one line
        (COLUMNS + "[snr]\npattern = '(?P<noise>a)\\1(?P<snr>\\d)'\n", "not a regular expression RE2 accepts"),
    ],
)
def test_bad_mappings_are_input_errors(tmp_path: Path, mapping: str, problem: str) -> None:
    with pytest.raises(InputError) as caught:
        read_results(*table(tmp_path, ["r1,E01,m,clean,,0.7,100,1000"], mapping))
    assert problem in caught.value.problem
    assert caught.value.source == str(tmp_path / "map.toml")


@pytest.mark.slow
def test_the_synthetic_legacy_example_computes_every_paper_claim() -> None:
    spec = importlib.util.spec_from_file_location("make_legacy_example", EXAMPLES / "make_legacy_example.py")
    assert spec and spec.loader
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    # The committed files are what the script writes (deterministic).
    assert (EXAMPLES / "legacy-results.csv").read_text() == maker.table_text()
    assert (EXAMPLES / "legacy-mapping.toml").read_text() == maker.mapping_text()
    report = verify(
        AuditRequest(
            EXAMPLES / "legacy-results.csv",
            columns=EXAMPLES / "legacy-mapping.toml",
            claims=EXAMPLES / "paper-claims.toml",
        )
    )
    statuses = {claim["id"]: claim["status"] for claim in report["claims"]}
    assert len(statuses) == 22 and "not computable" not in statuses.values(), statuses
    assert report["source"]["mapping"]["eer_scale"] == "percent (declared)"
    assert not any(flag["id"] in ("schema", "percent-scale") for flag in report["flags"])


def test_a_pattern_that_backtracks_without_bound_in_python_runs_in_linear_time(tmp_path: Path) -> None:
    """(a+)+b against a run of a's without a b takes Python's re about 2^n steps; RE2 reads each label once."""
    rows = [f"r1,E16,m,{'a' * 60}! 5dB,,0.2,100,1000", "r2,E16,m,b 5dB,,0.1,100,1000"]
    mapping = COLUMNS + "[snr]\npattern = '^(?P<noise>(a+)+b|b) (?P<snr>-?\\d+)dB$'\n"
    source = read_results(*table(tmp_path, rows, mapping))
    assert source.frame["condition"].tolist() == [f"{'a' * 60}! 5dB", "b_5dB"]
    assert source.mapping["SNR labels parsed"] == 1


def test_a_percent_too_large_for_any_float_is_a_schema_finding(tmp_path: Path) -> None:
    """1e999999999 % would overflow the decimal context: it is left to the schema, which calls it not finite."""
    legacy, mapping = table(
        tmp_path, ["r1,E01,m,clean,,1e999999999,100,1000", "r2,E01,m,clean,,12.5,100,1000"], COLUMNS
    )
    report = verify(AuditRequest(legacy, columns=mapping))
    schema = next(flag for flag in report["flags"] if flag["id"] == "schema")
    assert schema["severity"] == "error" and "r1" in schema["records"]
