"""Issue 41 in a bundle audit: the paired rankings and the trial-design audit reach report.json and the headline."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from audit.statistics import rankings as rankings_module
from audit.statistics import rankings_section
from audit.verify import AuditRequest, verify
from reports.document import build_document
from reports.markdown import render_markdown
from tests.provenance.synthetic_bundle import MODELS, build_bundle


def audited(tmp_path: Path, analysis: str) -> dict:
    bundle = build_bundle(tmp_path, analysis=analysis)
    return verify(AuditRequest(bundle.root / "results.csv", bundle=bundle.root, key=bundle.public_key))


def test_the_headline_says_plainly_that_few_speakers_do_not_separate_the_encoders(tmp_path: Path) -> None:
    report = audited(tmp_path, "equivalence_margin = 0.02\nn_resamples = 200")
    rankings = report["statistics"]["rankings"]
    assert len(rankings["headline"]) == 4 and rankings["family"] == "condition"
    for row in rankings["headline"]:
        assert row["verdict"].startswith("not separable at 6 speakers (MDD 0.")
        assert {name.split()[0] for name in row["encoders (EER, best first)"].split(", ")} == set(MODELS)
    assert [e["model"] for e in rankings["macro"]["encoders"]] and len(rankings["macro"]["pairs"]) == 1
    section = next(s for s in report["sections"] if s["id"] == "encoder-rankings")
    assert section["lines"][-1].startswith("The run declares no [analysis] ranking_family")
    table = section["table"]  # each pair once as text, the columns once; its numbers in the statistics
    pairs = [(setting["key"], pair) for setting in rankings["settings"] for pair in setting["pairs"]]
    assert table["n_rows"] == len(table["rows"]) == len(pairs)
    assert table["all_rows_in"] == "statistics.rankings.settings"
    assert table["columns"][-6:] == ["pair", "EER difference", "p (two-sided)", "Holm", "speakers", "MDD (80%)"]
    for row, (key, pair) in zip(table["rows"], pairs, strict=True):
        cells = dict(zip(table["columns"], row, strict=True))
        assert cells["pair"] == " - ".join(pair["encoders"]) and all(cells[k] == v for k, v in key.items())
    design = next(s for s in report["sections"] if s["id"] == "trial-design")
    assert design["status"] == "pass" and report["verdict"] == "pass"
    markdown = render_markdown(build_document(report, []))
    headline = markdown[: markdown.index("**Contents**")]
    assert "### Encoder rankings (paired, Holm)" in headline and "not separable at 6 speakers (MDD 0." in headline
    assert "Macro EER differences (paper Table 7, 95% intervals):" in headline


def test_a_declared_experiment_family_puts_every_condition_in_one_holm_family(tmp_path: Path) -> None:
    report = audited(tmp_path, 'equivalence_margin = 0.02\nn_resamples = 200\nranking_family = "experiment"')
    rankings = report["statistics"]["rankings"]
    assert list(rankings["families"]) == ["E13"] and rankings["families"]["E13"]["n_pairs"] == 4
    section = next(s for s in report["sections"] if s["id"] == "encoder-rankings")
    assert not any("declares no [analysis] ranking_family" in line for line in section["lines"])


def test_the_sections_table_keeps_the_first_rows_and_counts_every_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``MAX_PAIR_ROWS`` the section keeps the first pairs as text (what the report shows) and counts them all;
    a later setting's new key becomes a column, as a table of every row would have it."""
    monkeypatch.setattr(rankings_module, "MAX_PAIR_ROWS", 3)
    difference = {"estimate": -0.1, "low": -0.2, "high": 0.0, "n_undefined": 0}
    pair = {"encoders": ["a", "b"], "difference": difference, "p_value": 0.5, "separable": False}
    settings = [
        {"key": {"condition": "c1"}, "n_speakers": 6, "mdd": 0.2, "pairs": [pair, pair]},
        {"key": {"condition": "c2"}, "n_speakers": 6, "mdd": 0.2, "pairs": []},
        {"key": {"condition": "c3", "subgroup": "F"}, "n_speakers": 3, "mdd": None, "pairs": [pair, pair, pair]},
    ]
    rankings = {"settings": settings, "eer_method": "rocch", "level": 0.95, "n_resamples": 200, "seed": 1,
                "family": "condition", "alpha": 0.05, "power": 0.8, "skipped": [],
                "macro": {"encoders": [], "pairs": [], "summary": {}, "same_cells": True}}  # fmt: skip
    table = rankings_section(rankings, lambda value: str(value["estimate"]))["table"]
    assert table["columns"] == ["condition", "pair", "EER difference", "p (two-sided)", "Holm", "speakers",
                                "MDD (80%)", "subgroup"]  # fmt: skip
    assert table["n_rows"] == 5 and table["rows"] == [
        ["c1", "a - b", "-0.1", "0.500", "not separable", 6, "0.200", None],
        ["c1", "a - b", "-0.1", "0.500", "not separable", 6, "0.200", None],
        ["c3", "a - b", "-0.1", "0.500", "not separable", 3, "n/a", "F"],
    ]


class Lists:
    """The three things ``ranking_inputs`` reads of a bundle's scores: each record's list, its columns and scores."""

    def __init__(self, lists: dict[str, str]) -> None:
        self.trial_list = lists
        labels = np.tile([1, 0], 10)
        self._columns = {
            "label": labels,
            "enrol_speaker": np.repeat(list("abcde"), 4),
            "test_speaker": np.tile(list("abcde"), 4),
        }

    def columns(self, record: str) -> dict[str, np.ndarray]:
        return self._columns

    def scores(self, record: str) -> np.ndarray:
        return np.arange(20.0)


def test_settings_pair_encoders_on_one_list_and_name_what_they_leave_out() -> None:
    """m1 has two records in condition c (both on list L): the second is left out and named; m2 on another list in
    condition d splits that setting by list."""
    from audit.statistics.inputs import ranking_inputs

    rows = [
        {"record_id": r, "experiment": "E1", "corpus": "k", "condition": c, "model": m}
        for r, c, m in (("r1", "c", "m1"), ("r2", "c", "m2"), ("r3", "c", "m1"), ("r4", "d", "m1"), ("r5", "d", "m2"))
    ]
    lists = Lists({"r1": "L", "r2": "L", "r3": "L", "r4": "L", "r5": "M"})
    inputs, left_out = ranking_inputs(rows, lists)  # type: ignore[arg-type]
    assert left_out == ["r3"]
    assert [(dict(i.key), dict(i.records or {})) for i in inputs] == [
        ({"experiment": "E1", "corpus": "k", "condition": "c"}, {"m1": "r1", "m2": "r2"}),
        ({"experiment": "E1", "corpus": "k", "condition": "d", "trial_list": "L"}, {"m1": "r4"}),
        ({"experiment": "E1", "corpus": "k", "condition": "d", "trial_list": "M"}, {"m2": "r5"}),
    ]


def test_a_long_headline_shows_the_settings_with_a_separable_pair_first() -> None:
    rows = [{"condition": f"c{i:02d}", "verdict": "not separable at 7 speakers (MDD 0.1)"} for i in range(30)]
    rows[27]["verdict"] = "every pair separable"
    report = {"statistics": {"rankings": {"family": "condition", "headline": rows, "macro": {"pairs": []}}}}
    markdown = render_markdown(build_document(report, []))
    table = markdown[markdown.index("| condition | verdict |") :]
    assert table.splitlines()[2] == "| c27 | every pair separable |"
    assert "24 of 30 settings, those with a separable pair first; all in report.json." in markdown
    assert table.count("\n| c") == 24
