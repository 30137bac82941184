"""The per-trial statistics use the declared EER variant, else the rows' own when the bootstrap offers it, and say
which next to the rows' own."""

from __future__ import annotations

import pandas as pd
import pytest

from audit.bundle_statistics import statistics_eer_method


@pytest.mark.parametrize(
    ("rows", "analysis", "method", "said"),
    [
        (
            ["legacy", "legacy"],
            {},
            "legacy",
            "legacy (the method every results row names); the aggregates use the rows' own (legacy)",
        ),
        (["legacy", "legacy"], {"eer_method": "interp"}, "interp", "interp (declared in [analysis] eer_method)"),
        (
            ["rocch"],
            {},
            "interp",
            "the bootstrap offers interp and legacy only); the aggregates use the rows' own (rocch)",
        ),
        (["legacy", "rocch"], {}, "interp", "the rows' own (legacy, rocch)"),
    ],
)
def test_the_statistics_offer_the_rows_method(rows: list[str], analysis: dict, method: str, said: str) -> None:
    chosen, line = statistics_eer_method(pd.DataFrame({"eer_method": rows}), analysis)
    assert chosen == method
    assert said in line and line.startswith(f"EER variant of these statistics: {method} (")
