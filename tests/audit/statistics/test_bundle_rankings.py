"""Issue 41 in a bundle audit: the paired rankings and the trial-design audit reach report.json and the headline."""

from __future__ import annotations

from pathlib import Path

import numpy as np

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
