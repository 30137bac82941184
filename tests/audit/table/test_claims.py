"""Claims: parsing (bad files are input errors) and checking against recomputed values worked out by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from audit.table.claims import Claim, check_claim, read_claims
from audit.verify import AuditRequest, verify
from schemas.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
FACTS: dict[str, Any] = {
    "table": {"n_records": 10, "n_trials": 5000, "checkpoint_blake3": 4},
    "per_encoder": [{"model": "CAM++", "macro_eer": 0.0982}, {"model": "ECAPA", "macro_eer": 0.1013}],
    "contrast_summary": [
        {"experiment": "E13", "model_family": "speaker", "ie_sd": 0.011, "ie_mean": 0.0026},
        {"experiment": "E14", "model_family": "speaker", "ie_sd": 0.028, "ie_mean": None},
        {"experiment": "E14", "model_family": "ssl", "ie_sd": 0.05, "ie_mean": -0.04},
    ],
    "gap_ratios": [{"experiment": "E16", "ratio": -157.61}, {"experiment": "E16", "ratio": 193.72}],
    "ie_vs_prediction": {"n": 3, "r_observed": -0.7, "r_expected_additive": -0.2, "by_family": []},
}


def claim(**fields: Any) -> Claim:
    base: dict[str, Any] = {"id": "c", "description": "", "table": "per_encoder", "field": "macro_eer",
                            "where": {}, "published": 0.098, "tolerance": 0.0005}  # fmt: skip
    return Claim(**(base | fields))


def test_reproduced_within_tolerance_and_not_beyond() -> None:
    result = check_claim(claim(where={"model": "CAM++"}), FACTS)
    assert (result["status"], result["recomputed"]) == ("reproduced", 0.0982)
    result = check_claim(claim(where={"model": "ECAPA"}, published=0.1), FACTS)  # off by 0.0013
    assert result["status"] == "not reproduced"
    assert "0.0005" in result["reason"]


def test_exact_counts_with_zero_tolerance() -> None:
    assert (
        check_claim(claim(table="table", field="checkpoint_blake3", published=4, tolerance=0), FACTS)["status"]
        == "reproduced"
    )
    assert (
        check_claim(claim(table="table", field="n_trials", published=5001, tolerance=0), FACTS)["status"]
        == "not reproduced"
    )


def test_ranges_compare_min_and_max_over_the_selected_rows() -> None:
    sd_range = claim(table="contrast_summary", field="ie_sd", where={"experiment": ["E13", "E14"],
                     "model_family": "speaker"}, published=(0.009, 0.030), tolerance=0.0005)  # fmt: skip
    result = check_claim(sd_range, FACTS)
    assert result["recomputed"] == [0.011, 0.028]
    assert result["status"] == "not reproduced"  # 0.011 is 0.002 above the published low end
    ratio = claim(table="gap_ratios", field="ratio", published=(-157.6, 193.7), tolerance=0.05)
    assert check_claim(ratio, FACTS)["status"] == "reproduced"


def test_not_computable_says_why() -> None:
    absent = check_claim(claim(where={"model": "RawNet3"}), FACTS)
    assert absent["status"] == "not computable"
    assert "0 rows match" in absent["reason"]
    speaker_e14 = {"experiment": "E14", "model_family": "speaker"}
    null = check_claim(claim(table="contrast_summary", field="ie_mean", where=speaker_e14), FACTS)
    assert null["status"] == "not computable"
    several = check_claim(claim(), FACTS)
    assert several["status"] == "not computable"
    assert "must select one" in several["reason"]


def test_one_row_tables() -> None:
    result = check_claim(claim(table="ie_vs_prediction", field="r_observed", published=-0.706), FACTS)
    assert result["status"] == "not reproduced"  # -0.7 is 0.006 away
    assert result["recomputed"] == -0.7


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "claims.toml"
    path.write_text(text)
    return path


GOOD = '[[claim]]\nid = "x"\ntable = "per_encoder"\nfield = "macro_eer"\nwhere = { model = "A" }\npublished = 0.1\n'


def test_read_claims_with_default_tolerance(tmp_path: Path) -> None:
    (parsed,) = read_claims(write(tmp_path, "default_tolerance = 0.01\n" + GOOD))
    assert parsed == Claim("x", "", "per_encoder", "macro_eer", {"model": "A"}, 0.1, 0.01)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("this is = not toml [", "not valid TOML"),
        ("title = 'no claims'\n", "expected one or more [[claim]] tables"),
        (GOOD, "needs a non-negative 'tolerance'"),
        (GOOD.replace("per_encoder", "per_model") + "tolerance = 0.1\n", "unknown table 'per_model'"),
        (GOOD.replace("macro_eer", "mean") + "tolerance = 0.1\n", "unknown field 'mean'"),
        (GOOD.replace("model =", "family =") + "tolerance = 0.1\n", "'where' may only select on model"),
        (
            GOOD.replace("0.1\n", "[0.2, 0.1]\n") + "tolerance = 0.1\n",
            "a published range must be [low, high]",
        ),
        (GOOD.replace("0.1\n", '"0.1"\n') + "tolerance = 0.1\n", "'published' must be a number"),
        (GOOD.replace('id = "x"\n', ""), "missing 'id'"),
        ((GOOD + "tolerance = 0.1\n") * 2, "duplicate claim ids: x"),
    ],
)
def test_bad_claims_files_are_input_errors(tmp_path: Path, text: str, problem: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InputError) as error:
        read_claims(path)
    assert problem in error.value.line()
    assert error.value.line().startswith(str(path))


def test_example_claims_against_the_example_table() -> None:
    """The expected statuses are those worked out by hand in examples/claims.toml's descriptions."""
    report = verify(AuditRequest(ROOT / "examples" / "results.csv", claims=ROOT / "examples" / "claims.toml"))
    statuses = {c["id"]: c["status"] for c in report["claims"]}
    assert statuses == {
        "syn-e01-mean": "reproduced",
        "syn-spk-a-macro": "reproduced",
        "syn-e14-ssl-prediction-max": "reproduced",
        "syn-e14-speaker-contrast-mean": "not reproduced",
        "syn-e16-clean-gap": "reproduced",
        "syn-e16-ratio-range": "reproduced",
        "syn-checkpoint-coverage": "reproduced",
        "syn-e17-contrast-mean": "not computable",
    }
    flags = {f["id"]: f for f in report["flags"]}
    assert flags["claims-not-reproduced"]["severity"] == "error"
    assert flags["claims-not-computable"]["details"]["claims"] == ["syn-e17-contrast-mean"]


def test_paper_claims_file_parses() -> None:
    claims = read_claims(ROOT / "examples" / "paper-claims.toml")
    by_id = {c.id: c for c in claims}
    assert by_id["paper-macro-campp"].published == 0.098
    assert by_id["paper-checkpoint-coverage"].published == 1878
    assert by_id["paper-e16-ratio-range"].published == (-157.6, 193.7)
    assert by_id["paper-e14-ssl-correlation"].published == -0.706


def test_a_claim_selects_one_model_condition_and_subgroup(tmp_path: Path) -> None:
    header = "record_id,experiment,model,corpus,condition,subgroup,eer,n_target,n_nontarget"
    rows = [
        "r1,vox1_O,CAM++,VoxCeleb1,clean,gender=F,0.0086,100,1000",
        "r2,vox1_O,CAM++,VoxCeleb1,clean,gender=M,0.0091,100,1000",
        "r3,vox1_O,ECAPA,VoxCeleb1,clean,gender=F,0.0102,100,1000",
    ]
    (tmp_path / "results.csv").write_text("\n".join([header, *rows]) + "\n")
    (tmp_path / "claims.toml").write_text(
        '[[claim]]\nid = "campp-f"\ntable = "records"\nfield = "eer"\npublished = 0.0086\ntolerance = 0.00005\n'
        'where = { model = "CAM++", condition = "clean", subgroup = "gender=F" }\n'
        '[[claim]]\nid = "campp-any"\ntable = "records"\nfield = "eer"\npublished = 0.0086\ntolerance = 0.00005\n'
        'where = { model = "CAM++" }\n'
    )
    report = verify(AuditRequest(tmp_path / "results.csv", claims=tmp_path / "claims.toml"))
    results = {r["id"]: r for r in report["claims"]}
    assert (results["campp-f"]["status"], results["campp-f"]["recomputed"]) == ("reproduced", 0.0086)
    assert (
        results["campp-any"]["reason"] == "2 rows of records where {'model': 'CAM++'} match; the claim must select one"
    )
