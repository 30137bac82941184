"""The ``[analysis]`` reader: every declared value typed and bounded; each bad value is one problem line naming
the key, never an exception (the audit reads it from a bundle, where it is attacker-controlled)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.analysis import (
    _READERS,
    N_RESAMPLES_MAX,
    SEED_MAX,
    Analysis,
    CalibrationDeclaration,
    NormalisationDeclaration,
    read_analysis,
)
from tests.fuzzing import examples

ROOT = Path(__file__).resolve().parents[3]


def test_every_field_has_a_reader() -> None:
    assert set(_READERS) == {field.name for field in fields(Analysis)}


def test_the_shipped_configurations_read_without_problems() -> None:
    analysis, problems = read_analysis((ROOT / "configs" / "default.toml").read_text())
    assert problems == []
    assert analysis == Analysis(
        equivalence_margin=0.02,
        acceptable_error=0.03,
        held_out_levels=("pink-0dB", "loss-bursty-10"),
        dev_speakers=("june-wallack", "ivrvoice-ru"),
        operating_point="eer",
        n_resamples=1000,
        seed=7,
        calibration=CalibrationDeclaration("platt", "dev", 0.5),
    )
    assert read_analysis((ROOT / "configs" / "full.toml").read_text())[1] == []


def test_no_analysis_table_gives_the_defaults() -> None:
    assert read_analysis("[run]\nseed = 1\n") == (Analysis(), [])
    assert read_analysis("") == (Analysis(), [])


def test_a_target_far_and_the_bounds_themselves_are_accepted() -> None:
    text = f"[analysis]\noperating_point = 0.01\nn_resamples = {N_RESAMPLES_MAX}\nseed = {SEED_MAX}\n"
    analysis, problems = read_analysis(text)
    assert problems == []
    assert (analysis.operating_point, analysis.n_resamples, analysis.seed) == (0.01, N_RESAMPLES_MAX, SEED_MAX)
    assert read_analysis("[analysis]\nn_resamples = 1\nseed = 0\nequivalence_margin = 1\n")[1] == [
        "analysis.equivalence_margin: expected a number strictly between 0 and 1, got an integer 1"
    ]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("n_resamples = 1e8", "analysis.n_resamples: expected an integer from 1 to 100,000, got a number 100000000.0"),
        ('n_resamples = "many"', "analysis.n_resamples: expected an integer from 1 to 100,000, got a string 'many'"),
        ("n_resamples = 100001", "analysis.n_resamples: expected an integer from 1 to 100,000, got an integer 100001"),
        ("n_resamples = 0", "got an integer 0"),
        ("n_resamples = true", "got a boolean True"),
        ("seed = -1", "analysis.seed: expected an integer from 0 to 9,223,372,036,854,775,807, got an integer -1"),
        ("seed = 99999999999999999999", "analysis.seed: expected an integer from 0"),
        ("equivalence_margin = 0", "analysis.equivalence_margin: expected a number strictly between 0 and 1"),
        ("equivalence_margin = nan", "got a number nan"),
        ("equivalence_margin = inf", "got a number inf"),
        ('equivalence_margin = "0.02"', "got a string '0.02'"),
        ("acceptable_error = -0.1", "analysis.acceptable_error: expected a number strictly between 0 and 1"),
        ('operating_point = "far"', 'analysis.operating_point: expected "eer" or a target FAR'),
        ("operating_point = 1.5", "analysis.operating_point: expected a number strictly between 0 and 1"),
        ("operating_point = [0.1]", "got a list [0.1]"),
        ('held_out_levels = "pink-0dB"', "analysis.held_out_levels: expected a list of non-empty strings"),
        ('dev_speakers = ["a", 3]', "analysis.dev_speakers: expected a list of non-empty strings, got a list"),
        ('dev_speakers = [""]', "expected a list of non-empty strings"),
        ("n_resample = 100", "analysis.n_resample: unknown key (known: equivalence_margin, acceptable_error"),
        ("dev_speakers = [" + "1, " * 30 + "]", "got a list [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, ..."),
        ('calibration = "logistic"', 'analysis.calibration: expected a table { method = "logistic", fit_on = "dev" }'),
        ('calibration = { method = "bosaris", fit_on = "dev" }', 'method: expected one of "logistic", "platt"'),
        ('calibration = { method = "logistic" }', 'fit_on: expected one of "dev", got nothing'),
        ('calibration = { method = "logistic", fit_on = "eval" }', 'fit_on: expected one of "dev", got a string'),
        ('calibration = { method = "platt", fit_on = "dev", prior = 1 }', "prior: expected a number strictly"),
        ('calibration = { method = "platt", fit_on = "dev", smooth = 1 }', "unknown key 'smooth'"),
        ('calibration = { method = "logistic", fit_on = "dev" }', 'fit_on = "dev" needs the development speakers'),
        ('score_normalisation = "as-norm"', 'analysis.score_normalisation: expected a table { method = "as-norm"'),
        ('score_normalisation = { method = "z-norm", top_n = 5, cohort = ["a"] }', 'method: expected "as-norm"'),
        ('score_normalisation = { method = "as-norm", cohort = ["a"] }', "top_n: missing"),
        (
            'score_normalisation = { method = "as-norm", top_n = 1, cohort = ["a"] }',
            "top_n: expected an integer from 2",
        ),
        ('score_normalisation = { method = "as-norm", top_n = 5, cohort = [] }', "cohort: expected at least one"),
        ('score_normalisation = { method = "as-norm", top_n = 5, cohort = "a" }', "cohort: expected a list"),
        ('score_normalisation = { method = "as-norm", top_n = 5, cohort = ["a"], k = 1 }', "unknown key 'k'"),
    ],
)
def test_each_bad_value_is_one_problem_and_keeps_the_default(line: str, problem: str) -> None:
    analysis, problems = read_analysis(f"[analysis]\n{line}\n")
    assert len(problems) == 1
    assert problems[0].startswith("analysis.") and problem in problems[0]
    assert analysis == Analysis()


def test_a_declared_calibration_is_typed() -> None:
    text = '[analysis]\ndev_speakers = ["a"]\ncalibration = { method = "platt", fit_on = "dev", prior = 0.2 }\n'
    analysis, problems = read_analysis(text)
    assert problems == [] and analysis.calibration == CalibrationDeclaration("platt", "dev", 0.2)
    assert read_analysis('[analysis]\ndev_speakers = ["a"]\ncalibration = { method = "logistic", fit_on = "dev" }\n')[
        0
    ].calibration == CalibrationDeclaration("logistic", "dev", 0.5)


def test_a_declared_normalisation_is_typed() -> None:
    text = '[analysis]\nscore_normalisation = { method = "as-norm", top_n = 50, cohort = ["c1", "c2"] }\n'
    analysis, problems = read_analysis(text)
    assert problems == [] and analysis.score_normalisation == NormalisationDeclaration(("c1", "c2"), 50)
    analysis, problems = read_analysis(f'[analysis]\ndev_speakers = ["c2"]\n{text.split(chr(10))[1]}\n')
    assert problems == [
        "analysis.score_normalisation: cohort: 1 speaker also declared a development speaker (c2): the cohort is "
        "left out of every trial list"
    ]
    assert analysis.score_normalisation is None and analysis.dev_speakers == ("c2",)


def test_every_problem_is_listed() -> None:
    _, problems = read_analysis('[analysis]\nn_resamples = "many"\nseed = 1.5\nmargin = 0.1\n')
    assert [p.split(":")[0] for p in problems] == ["analysis.n_resamples", "analysis.seed", "analysis.margin"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("analysis = 3\n", "analysis: expected a table, got an integer 3"),
        ("[analysis\n", "not valid TOML"),
        ("x = " + "[" * 5000 + "]" * 5000 + "\n", "not valid TOML: nested too deeply"),
    ],
)
def test_a_config_that_is_not_a_toml_table_is_one_problem(text: str, problem: str) -> None:
    analysis, problems = read_analysis(text)
    assert analysis == Analysis()
    assert len(problems) == 1 and problems[0].startswith(problem)


def toml_value(value: Any) -> str:
    """A TOML literal for a generated value (JSON's string escapes are TOML's too)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


TOML_VALUES = st.recursive(
    st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from(["eer", "many", "0.02", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=2),
    max_leaves=6,
)
KEYS = st.sampled_from(sorted(_READERS)) | st.text(min_size=1, max_size=6)


def check_typed(analysis: Analysis) -> None:
    """Every value of the right type and within its bounds, whatever the input."""
    for name in ("equivalence_margin", "acceptable_error"):
        value = getattr(analysis, name)
        assert value is None or (type(value) is float and 0 < value < 1)
    for name in ("held_out_levels", "dev_speakers"):
        assert all(isinstance(item, str) and item for item in getattr(analysis, name))
    assert analysis.operating_point == "eer" or (
        type(analysis.operating_point) is float and 0 < analysis.operating_point < 1
    )
    assert type(analysis.n_resamples) is int and 1 <= analysis.n_resamples <= N_RESAMPLES_MAX
    assert type(analysis.seed) is int and 0 <= analysis.seed <= SEED_MAX


@settings(max_examples=examples(300), deadline=None)
@given(table=st.dictionaries(KEYS, TOML_VALUES, max_size=5))
def test_any_analysis_table_is_typed_or_a_problem_per_key(table: dict[str, Any]) -> None:
    """Property: no exception; each key is either taken as given or named in exactly one problem."""
    text = "[analysis]\n" + "".join(f"{json.dumps(key)} = {toml_value(value)}\n" for key, value in table.items())
    analysis, problems = read_analysis(text)
    check_typed(analysis)
    if problems and problems[0].startswith("not valid TOML"):
        return
    for key, value in table.items():
        shown = key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)  # TOML's bare or quoted key
        named = [problem for problem in problems if problem.startswith(f"analysis.{shown}: ")]
        assert len(named) <= 1
        if key in _READERS and not named:
            assert getattr(analysis, key) == (tuple(value) if isinstance(value, list) else value)
        assert named or key in _READERS
    assert len(problems) <= len(table)


@settings(max_examples=examples(200), deadline=None)
@given(text=st.text(max_size=200) | st.text(alphabet="[]{}=\"'.,\n analysis0123456789e-+", max_size=80))
def test_any_text_gives_an_analysis_and_problems(text: str) -> None:
    analysis, problems = read_analysis(text)
    check_typed(analysis)
    assert all(isinstance(problem, str) and "\n" not in problem for problem in problems)
