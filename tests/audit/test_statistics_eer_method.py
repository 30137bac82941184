"""The per-trial statistics use the rows' own EER variant when the bootstrap offers it, and say which next to the
rows' own."""

from __future__ import annotations

import pandas as pd
import pytest

from audit.bundle_statistics import statistics_eer_method


@pytest.mark.parametrize(
    ("rows", "method", "said"),
    [
        (
            ["legacy", "legacy"],
            "legacy",
            "(the method every results row names); the aggregates use the rows' own (legacy)",
        ),
        (["rocch"], "interp", "the bootstrap offers interp and legacy only); the aggregates use the rows' own (rocch)"),
        (["legacy", "rocch"], "interp", "the rows' own (legacy, rocch)"),
    ],
)
def test_the_statistics_offer_the_rows_method(rows: list[str], method: str, said: str) -> None:
    chosen, line = statistics_eer_method(pd.DataFrame({"eer_method": rows}))
    assert chosen == method
    assert said in line and line.startswith(f"EER variant of these statistics: {method} (")
