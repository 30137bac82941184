"""Issue 41 in a bundle audit: the paired rankings and the trial-design audit reach report.json and the headline."""

from __future__ import annotations

from pathlib import Path

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
