"""E13's complement reference: each stratum of factor A against ``other-than-<stratum>``, the union of the other
strata. Cells and selections are worked out by hand on a small design; full.toml's E13 gains them, the embedded
default does not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from runner.design.config import load_config
from runner.design.experiments import Cell, ExperimentDesign, Factor

ROOT = Path(__file__).resolve().parents[3]
CODEC = ({"name": "codec", "kwargs": {"codec": "opus", "bitrate": 8000, "sample_rate": 16000}},)
CONDITIONS = {"clean": (), "teens": (), "twenties": (), "older": (), "opus": CODEC}
SELECTIONS = {
    "teens": (("age_bin", ("teens",)),),
    "twenties": (("age_bin", ("twenties",)),),
    "older": (("age_bin", ("fourties", "thirties")),),
}


def design(**changes: object) -> ExperimentDesign:
    base = ExperimentDesign(
        id="E13",
        title="age x codec",
        corpus="cv",
        use="interaction",
        target_trials=10,
        nontarget_trials=10,
        degrade="both",
        factor_a=Factor("age", ("teens", "twenties", "older")),
        factor_b=Factor("codec", ("opus",)),
        complement_reference=True,
    )
    return ExperimentDesign(**{**base.__dict__, **changes})  # type: ignore[arg-type]


def test_each_stratum_gets_its_complement_cells() -> None:
    cells = design().cells(CONDITIONS, SELECTIONS)
    regular = [cell for cell in cells if cell.complement_of is None]
    assert len(regular) == 4 * 2  # (none + 3 strata) x (none + opus), as without the option
    assert regular == design(complement_reference=False).cells(CONDITIONS, SELECTIONS)
    complement = {cell.condition: cell for cell in cells if cell.complement_of is not None}
    assert sorted(complement) == [
        "other-than-older",
        "other-than-older+opus",
        "other-than-teens",
        "other-than-teens+opus",
        "other-than-twenties",
        "other-than-twenties+opus",
    ]
    teens = complement["other-than-teens+opus"]
    assert teens == Cell(
        "other-than-teens+opus",
        "other-than-teens+opus",
        "other-than-teens+opus",
        CODEC,
        CODEC,
        "other-than-teens",
        "opus",
        (("age_bin", ("fourties", "thirties", "twenties")),),
        (("age_bin", ("fourties", "thirties", "twenties")),),
        None,
        "teens",
    )
    assert complement["other-than-older"].test_select == (("age_bin", ("teens", "twenties")),)
    assert complement["other-than-older"].test_chain == ()


@pytest.mark.parametrize(
    ("selections", "conditions", "problem"),
    [
        ({**SELECTIONS, "older": (("age_bin", ("teens", "thirties")),)}, CONDITIONS, "do not overlap"),
        ({**SELECTIONS, "older": (("gender", ("F",)),)}, CONDITIONS, "one and the same column"),
        ({k: v for k, v in SELECTIONS.items() if k != "older"}, CONDITIONS, "one and the same column"),
        (SELECTIONS, {**CONDITIONS, "teens": CODEC}, "apply no operator"),
    ],
)
def test_strata_that_are_not_one_populations_partition_are_refused(
    selections: dict, conditions: dict, problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        design().cells(conditions, selections)


def _with_placeholders(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("INTERBIAS_CORPORA", "INTERBIAS_CHECKPOINTS"):
        monkeypatch.setenv(name, os.environ.get(name, f"/nonexistent/{name}"))


def test_full_registry_e13_gains_18_complement_cells_and_the_default_none(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_placeholders(monkeypatch)
    full = load_config(ROOT / "configs" / "full.toml")
    [e13] = [e for e in full.experiments if e.id == "E13"]
    cells = full.experiment_cells(e13)
    # 6 strata x (none + 2 codecs) complement cells beside the (1 + 6) x (1 + 2) cells of the design
    assert len([c for c in cells if c.complement_of]) == 18 and len(cells) == 21 + 18
    assert [e.id for e in full.experiments if e.complement_reference] == ["E13"]
    default = load_config(ROOT / "configs" / "default.toml")
    assert not any(c.complement_of for e in default.experiments for c in default.experiment_cells(e))


@pytest.mark.parametrize(
    ("experiment", "value", "problem"),
    [
        ("E14", '"yes"', r"experiments\[11\]\.complement_reference: expected bool, got str 'yes'"),
        ("E16", "true", r"experiments\[13\]\.complement_reference: needs an interaction design"),
    ],
)
def test_complement_reference_is_a_boolean_of_an_interaction_design(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, experiment: str, value: str, problem: str
) -> None:
    from schemas.errors import InputError

    _with_placeholders(monkeypatch)
    text = (ROOT / "configs" / "full.toml").read_text()
    broken = text.replace(f'id = "{experiment}"\n', f'id = "{experiment}"\ncomplement_reference = {value}\n', 1)
    (tmp_path / "full.toml").write_text(broken)
    (tmp_path / "encoders.toml").write_text((ROOT / "configs" / "encoders.toml").read_text())
    with pytest.raises(InputError, match=problem):
        load_config(tmp_path / "full.toml")
