"""Canonical JSON against hand-written byte strings."""

from __future__ import annotations

import json

import numpy as np
import pytest

from provenance.canonical import CanonicalJSONError, canonical_json


def test_keys_sorted_no_whitespace_utf8() -> None:
    value = {"b": 1, "a": [True, None, "é"], "c": {"z": "x", "y": -2}}
    assert canonical_json(value) == b'{"a":[true,null,"\xc3\xa9"],"b":1,"c":{"y":-2,"z":"x"}}'


def test_floats_become_round_trip_strings() -> None:
    value = {"p": 0.01, "x": 1e-05, "one": 1.0, "third": 1 / 3, "np": np.float64(0.05), "n": np.int64(3)}
    text = canonical_json(value)
    assert text == (b'{"n":3,"np":"0.05","one":"1.0","p":"0.01","third":"0.3333333333333333","x":"1e-05"}')
    parsed = json.loads(text)
    assert float(parsed["third"]) == 1 / 3
    assert float(parsed["x"]) == 1e-05
    # A parsed canonical document re-serialises to the identical bytes.
    assert canonical_json(parsed) == text


@pytest.mark.parametrize(
    "value",
    [{"x": float("nan")}, {"x": float("inf")}, {1: "a"}, {"s": {1, 2}}, {"b": b"bytes"}],
)
def test_refuses_values_without_canonical_form(value: object) -> None:
    with pytest.raises(CanonicalJSONError):
        canonical_json(value)


def test_tuples_are_lists_and_bools_stay_bools() -> None:
    assert canonical_json((1, False, "t")) == b'[1,false,"t"]'
