"""Value formatting and JSON normalisation, checked against hand-written expectations."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def test_report_json_is_sorted_indented_and_strict_with_a_container_of_plain_values_on_one_line() -> None:
    report = {
        "verdict": "pass",
        "aggregates": {"per_experiment": [{"n": 2, "eer_sd": float("nan")}], "empty": []},
        "table": {"columns": ["speaker", "eer"], "rows": [["s1", 0.1], ["é", None]]},
    }
    assert report_json(report) == (
        '{\n  "aggregates": {\n    "empty": [],\n    "per_experiment": [\n      {"eer_sd": null, "n": 2}\n    ]\n  },\n'
        '  "table": {\n    "columns": ["speaker", "eer"],\n    "rows": [\n      ["s1", 0.1],\n      ["é", null]\n'
        '    ]\n  },\n  "verdict": "pass"\n}\n'
    )


PLAIN = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)
NESTED = st.recursive(PLAIN, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                      max_size=4), max_leaves=30)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(NESTED)
def test_report_json_reads_back_as_the_standard_librarys_strict_json(value: object) -> None:
    """Whatever the nesting: the same value as ``json.dumps`` of it, strict (no NaN), keys in the same order."""
    text = report_json({"value": value})
    strict = json.dumps({"value": json_safe(value)}, sort_keys=True, allow_nan=False)
    read = json.loads(text, parse_constant=lambda name: pytest.fail(f"non-standard JSON constant {name}"))
    assert json.dumps(read, allow_nan=False) == strict


def _indented_after_json_safe(value: object, indent: str = "") -> str:
    """The layout in two walks, as ``report_json`` once made it: ``json_safe`` of everything, then the indentation
    (one line for a container that holds no container)."""
    one_line = json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True).encode
    if not isinstance(value, dict | list) or not any(
        isinstance(child, dict | list) for child in (value.values() if isinstance(value, dict) else value)
    ):
        return one_line(value)
    inner = indent + "  "
    if isinstance(value, dict):
        lines = [f"{inner}{one_line(key)}: {_indented_after_json_safe(value[key], inner)}" for key in sorted(value)]
        return "{\n" + ",\n".join(lines) + f"\n{indent}}}"
    return "[\n" + ",\n".join(inner + _indented_after_json_safe(item, inner) for item in value) + f"\n{indent}]"


ODD = (
    PLAIN
    | st.builds(np.float64, st.floats())
    | st.builds(np.int64, st.integers(-(2**63), 2**63 - 1))
    | st.lists(st.floats(), max_size=3).map(np.array)
    | st.lists(st.lists(st.integers(0, 9), min_size=2, max_size=2), max_size=3).map(
        lambda rows: np.array(rows, dtype=np.int64).reshape(-1, 2)
    )
)
ODD_NESTED = st.recursive(ODD, lambda inner: st.lists(inner, max_size=4) | st.lists(inner, max_size=3).map(tuple)
                          | st.dictionaries(st.text(max_size=3) | st.integers(0, 20), inner, max_size=4),
                          max_leaves=30)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(ODD_NESTED)
def test_report_json_in_one_walk_is_json_safe_then_indented(value: object) -> None:
    """numpy scalars and arrays (a 2-D one is a list of rows), tuples, integer keys (sorted as the text they become,
    the last of two that print alike kept), NaN: the one walk writes what json_safe and then the layout write."""
    assert report_json({"value": value}) == _indented_after_json_safe(json_safe({"value": value})) + "\n"
