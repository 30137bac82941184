"""The per-trial statistics use the rows' own EER variant when the bootstrap offers it, and say which next to the
rows' own."""

from __future__ import annotations

import pandas as pd
import pytest

from audit.statistics.bundle import statistics_eer_method


@pytest.mark.parametrize(
    ("rows", "method", "said"),
    [
        (
            ["legacy", "legacy"],
            "legacy",
            "(the method every results row names); the aggregates use the rows' own (legacy)",
        ),
        (["rocch"], "rocch", "(the method every results row names); the aggregates use the rows' own (rocch)"),
        (
            ["legacy", "rocch", "rocch"],
            "rocch",
            "(the most common of the rows' methods); the aggregates use the rows' own (legacy, rocch)",
        ),
    ],
)
def test_the_statistics_offer_the_rows_method(rows: list[str], method: str, said: str) -> None:
    chosen, line = statistics_eer_method(pd.DataFrame({"eer_method": rows}), None)
    assert chosen == method
    assert said in line and line.startswith(f"EER variant of these statistics: {method} (")


def test_a_declared_bootstrap_method_wins() -> None:
    chosen, line = statistics_eer_method(pd.DataFrame({"eer_method": ["rocch"]}), "legacy")
    assert chosen == "legacy" and "declared in [analysis]" in line
