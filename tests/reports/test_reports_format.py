"""Value formatting and JSON normalisation, checked against hand-written expectations."""

from __future__ import annotations

import json

import numpy as np
import pytest

from reports import report_json
from reports.format import format_list, format_number, format_value
from schemas.jsonable import json_safe


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.123456, "0.1235"),
        (0.18166666666666664, "0.1817"),
        (0.5, "0.5"),
        (-157.6, "-157.6"),
        (1234567.0, "1.235e+06"),
        (0.0, "0"),
        (0.00005, "5e-05"),  # a claims tolerance, not 0.0001
        (9.81e-18, "0"),  # rounding residue of a sum of EERs
        (-3e-13, "0"),
        (float("nan"), "NaN"),
        (float("inf"), "inf"),
        (float("-inf"), "-inf"),
    ],
)
def test_format_number(value: float, expected: str) -> None:
    assert format_number(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "n/a"),
        (True, "yes"),
        (12, "12"),
        (np.int64(7), "7"),
        (np.float64(0.25), "0.25"),
        ("gender=F", "gender=F"),
        ({"low": 0.123456, "high": 1}, "low: 0.1235; high: 1"),  # never raw JSON
        ({}, "(none)"),
    ],
)
def test_format_value(value: object, expected: str) -> None:
    assert format_value(value) == expected


def test_long_lists_are_cut_with_a_count() -> None:
    assert format_list([f"r{i}" for i in range(13)], limit=3) == "r0, r1, r2, ... and 10 more"
    assert format_list(["a", "b"], limit=3) == "a, b"


def test_to_jsonable_makes_strict_json() -> None:
    value = {"eer": float("nan"), "n": np.int64(3), "v": np.array([0.5, np.inf]), 1: ("x",)}
    assert json_safe(value) == {"eer": None, "n": 3, "v": [0.5, None], "1": ["x"]}
    with pytest.raises(TypeError, match="object"):
        json_safe({"bad": object()})


def test_report_json_is_sorted_indented_and_strict() -> None:
    text = report_json({"verdict": "pass", "aggregates": {"per_experiment": [{"eer_sd": float("nan")}]}})
    assert text == (
        '{\n  "aggregates": {\n    "per_experiment": [\n'
        '      {\n        "eer_sd": null\n      }\n    ]\n  },\n'
        '  "verdict": "pass"\n}\n'
    )
    json.loads(text, parse_constant=lambda name: pytest.fail(f"non-standard JSON constant {name}"))
