"""Property-based paper-shaped tables (issue 44): random key and value columns, headers, rounding rules, precisions,
percent scale and declared subsets of a signed synthetic bundle whose configuration declares a held-out level.

Invariants: the honest table PASSes; the same table with one value changed beyond its printed precision FAILs, and
the first cause of the verdict is the binding, naming that row and column. Printed values come from an independent
oracle: Python's ``decimal`` module (half to even, half up), pandas' ``DataFrame.round`` and ``format``.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.bundle.table_binding import verify_table_binding
from audit.bundle.verified import LoadedFiles, TableBindingError
from audit.verify import AuditRequest
from audit.verify import verify as verify_api
from tests.fuzzing import examples
from tests.provenance.synthetic_bundle import SyntheticBundle, build_bundle

KEYS = (("condition",), ("level_a", "level_b"), ("condition", "factor_a", "level_a", "factor_b", "level_b"))
FLOATS = ("eer", "min_dcf", "auc")
OTHERS = ("n_target", "n_nontarget", "eer_method", "trial_list_id")
RULES = ("pandas", "half-even", "half-up", "format", "full")


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> SyntheticBundle:
    return build_bundle(tmp_path_factory.mktemp("paper"), analysis='held_out_levels = ["babble"]')


def _print(texts: pd.Series, rule: str, decimals: int, scale: int) -> pd.Series:
    """``texts`` (the signed decimal texts) times ``scale``, printed at ``decimals`` by ``rule``."""
    if rule == "full":  # what a float multiplication prints: the last place may be noise
        return texts.astype(float).mul(scale).map(repr)
    if rule == "pandas":
        return texts.astype(float).mul(scale).round(decimals).map(lambda value: f"{value:.{decimals}f}")
    if rule == "format":
        return texts.astype(float).mul(scale).map(lambda value: f"{value:.{decimals}f}")
    rounding = ROUND_HALF_EVEN if rule == "half-even" else ROUND_HALF_UP
    unit = Decimal(1).scaleb(-decimals)
    return texts.map(lambda text: str((Decimal(text) * scale).quantize(unit, rounding=rounding)))


def _changed(printed: str, signed: str, scale: int) -> str:
    """``printed`` moved one unit of its last digit (at most the sixth, so that a full print moves beyond float
    noise) away from the signed value times ``scale``: beyond half a unit of it, whichever rule printed it."""
    decimals = len(printed.partition(".")[2])
    unit = Decimal(1).scaleb(-min(decimals, 6))
    value = Decimal(printed)
    return str(value + unit if value >= Decimal(signed) * scale else value - unit)


PAPERS = st.fixed_dictionaries(
    {
        "key": st.sampled_from(KEYS),
        "floats": st.lists(st.sampled_from(FLOATS), unique=True, max_size=3),
        "others": st.lists(st.sampled_from(OTHERS), unique=True, max_size=2),
        "rules": st.fixed_dictionaries({column: st.sampled_from(RULES) for column in FLOATS}),
        "decimals": st.fixed_dictionaries({column: st.integers(2, 6) for column in FLOATS}),
        "percent": st.booleans(),
        "capitalised": st.booleans(),
        "model": st.sampled_from([None, "m1", "m2"]),
        "change": st.tuples(st.integers(0, 7), st.integers(0, 10)),
    }
).filter(lambda paper: paper["floats"] or paper["others"])


def _paper(bundle: SyntheticBundle, paper: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """The signed rows (of the declared model) and the paper's table of them, with its EER scale."""
    signed = pd.read_csv(bundle.root / "results.csv", dtype=str, keep_default_na=False)
    if paper["model"] is not None:
        signed = signed[signed["model"] == paper["model"]].reset_index(drop=True)
    columns = ["experiment", "model", *paper["key"], *paper["floats"], *paper["others"]]
    table = signed[columns].copy()
    scale = 100 if paper["percent"] else 1
    for column in paper["floats"]:
        percent = column == "eer" and scale > 1  # two of the fraction's decimals are the percent's integer digits
        decimals = paper["decimals"][column] - (2 if percent else 0)
        table[column] = _print(signed[column], paper["rules"][column], decimals, scale if percent else 1)
    return signed, table, scale


def _audit(bundle: SyntheticBundle, paper: dict[str, Any], table: pd.DataFrame, folder: Path) -> dict[str, Any]:
    headers = {column: column.title() if paper["capitalised"] else column for column in table.columns}
    table.rename(columns=headers).to_csv(folder / "paper.csv", index=False)
    renames = "".join(f'"{header}" = "{column}"\n' for column, header in headers.items() if header != column)
    (folder / "paper.toml").write_text(
        f'eer_scale = "{"percent" if paper["percent"] else "fraction"}"\n[columns]\n{renames}'
    )
    subset = None if paper["model"] is None else f"model = {paper['model']}"
    return verify_api(
        AuditRequest(
            folder / "paper.csv", folder / "paper.toml", bundle=bundle.root, key=bundle.public_key, subset=subset
        )
    )


@pytest.mark.slow
@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paper=PAPERS)
def test_an_honest_paper_table_passes_and_one_changed_value_fails_on_the_binding(
    signed: SyntheticBundle, tmp_path_factory: pytest.TempPathFactory, paper: dict[str, Any]
) -> None:
    folder = tmp_path_factory.mktemp("table")
    rows, table, scale = _paper(signed, paper)
    report = _audit(signed, paper, table, folder)
    assert report["verdict"] == "pass", (report.get("cause"), table.head(3))
    compared = [*paper["floats"], *paper["others"]]
    row, which = paper["change"][0] % len(table), compared[paper["change"][1] % len(compared)]
    if which in FLOATS:
        column_scale = scale if which == "eer" else 1
        table.loc[row, which] = _changed(table.loc[row, which], rows.loc[row, which], column_scale)
    elif which in ("n_target", "n_nontarget"):
        table.loc[row, which] = str(int(table.loc[row, which]) + 1)
    else:
        table.loc[row, which] += "x"
    report = _audit(signed, paper, table, folder)
    assert report["verdict"] == "fail" and report["cause"]["flag"] == "table-binding", report.get("cause")
    first = report["cause"]["cases"][0]
    assert first.startswith(f"row {row + 1}, record {rows.loc[row, 'record_id']}, column {which}:"), first


TIES = st.lists(
    st.tuples(st.integers(1, 9_999), st.integers(1, 3), st.booleans()), min_size=1, max_size=6, unique_by=lambda t: t[0]
)


@settings(max_examples=examples(100), deadline=None)
@given(values=TIES, decimals=st.integers(1, 4), rule=st.sampled_from(RULES[:4]), change=st.integers(0, 5))
def test_at_printed_precision_every_rounding_rule_binds_and_one_unit_more_does_not(
    values: list[tuple[int, int, bool]], decimals: int, rule: str, change: int
) -> None:
    """Signed values with more decimals than printed, some exactly halfway (``...5``) between two printings."""
    texts = [
        f"{Decimal(10 * digits + 5).scaleb(-decimals - 1) if tie else Decimal(digits).scaleb(-decimals - places):f}"
        for digits, places, tie in values
    ]
    signed = pd.DataFrame({"record_id": [f"r{i}" for i in range(len(texts))], "eer": texts})
    table = signed.assign(eer=_print(signed["eer"], rule, decimals, 1))
    files = LoadedFiles(results=signed)
    binding, _ = verify_table_binding(table, files, None)
    assert binding.bound
    row = change % len(table)
    table.loc[row, "eer"] = _changed(table.loc[row, "eer"], texts[row], 1)
    with pytest.raises(TableBindingError) as raised:
        verify_table_binding(table, files, None)
    assert [(case["row"], case["column"]) for case in raised.value.failures] == [(row + 1, "eer")]
