"""The examples in the public entry points' docstrings run, and give what they say (doctest, from the repository
root, where ``configs/`` is)."""

from __future__ import annotations

import doctest
import importlib
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
MODULES = (
    "audit.metrics.point",  # eer, min_dcf, auc, grouped_metrics
    "audit.metrics.calibration",  # cllr, min_cllr, pav_llrs, act_dcf, bayes_threshold, fit_logistic_calibration
    "audit.metrics.spoofing",  # sv_eer, spf_eer, sasv_eer, a_dcf, asv_eer_threshold, min_t_dcf, t_eer
    "audit.statistics.equivalence",  # tost_verdict
    "audit.statistics.contrasts",  # bootstrap_contrast
    "audit.statistics.rankings",  # paired_rankings, minimum_detectable_differences, ranking_verdict, p_text
    "audit.scores.comparison",  # encoder_names
    "audit.scores.scoring",  # audit_scores
    "audit.bundle.verification",  # verify_bundle
    "audit.verify",  # verify
    "schemas.analysis",  # names_without_referent
    "schemas.jsonable",  # json_safe
    "schemas.wording",  # count, format_number
    pytest.param("runner.design.config", marks=pytest.mark.runner),  # load_config
    pytest.param("runner.operators.adversarial", marks=pytest.mark.runner),  # matched_noise, snr_db
)


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_of_a_module_hold(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    module = importlib.import_module(name)
    outcome = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert outcome.attempted > 0, f"{name} has no example"
    assert outcome.failed == 0, f"{outcome.failed} of {outcome.attempted} examples of {name} failed"
    assert os.getcwd() == str(ROOT)


def test_the_citation_file_has_what_the_citation_file_format_requires() -> None:
    """CITATION.cff 1.2.0's required keys, and the version and licence the package declares."""
    import tomllib

    import yaml

    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert {"cff-version", "message", "title", "authors"} <= set(citation)
    assert citation["cff-version"] == "1.2.0" and all("name" in a or "family-names" in a for a in citation["authors"])
    assert (citation["version"], citation["license"]) == (project["version"], project["license"]["text"])
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").lstrip().startswith("Apache License")
