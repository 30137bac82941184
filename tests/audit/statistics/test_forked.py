"""Work run beside the audit in a forked process (``schemas.Forked``): the command line draws a table audit's figures
and a bundle audit's that way, and the statistics compute the subgroup settings' beside the contrasts: the written
report must be the one drawn in process, byte for byte."""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import audit.statistics.section
from audit.cli import audit_results
from audit.statistics.coverage import CoverageDesign
from audit.statistics.rankings import RankingInput
from audit.statistics.section import statistics_section
from audit.statistics.subgroups import FixedThresholdInput, SubgroupInput
from audit.verify import AuditRequest, verify
from reports import finish_report
from schemas import Forked
from tests.provenance.synthetic_bundle import build_bundle


def test_the_subgroup_settings_and_ranked_draws_computed_beside_the_contrasts_equal_those_computed_in_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The subgroup settings' statistics and the ranked records' draws (two forks, the settings split by cost) give
    the statistics the in-line run gives."""
    design = CoverageDesign(12, targets_per_speaker=6, nontargets_per_speaker=9)
    contrast = design.dataset(np.random.default_rng(40))
    labels, enrol, test = (np.asarray(v) for v in (contrast.labels, contrast.clusters, contrast.test_speakers))
    clean = np.asarray(contrast.scores["clean"])
    fields = (clean, labels, enrol, test, np.asarray(contrast.subgroups))
    setting = SubgroupInput({"setting": "s"}, *fields)
    fixed = FixedThresholdInput({"setting": "s"}, *fields, dev_speakers=["0", "1", "2", "3"])
    rng = np.random.default_rng(41)
    ranked = [
        RankingInput(
            {"condition": f"c{index}"},
            {f"m{model}": clean + rng.normal(0.0, 0.2 * (model + 1), clean.size) for model in range(3)},
            labels[: clean.size - 10 * index] if index else labels,
            enrol,
            test,
            {f"m{model}": f"r{index}-{model}" for model in range(3)},
        )
        for index in range(3)
    ]
    ranked = [replace(s, scores={m: v[: np.size(s.labels)] for m, v in s.scores.items()}) for s in ranked]
    ranked = [
        replace(s, enrol_speaker=enrol[: np.size(s.labels)], test_speaker=test[: np.size(s.labels)]) for s in ranked
    ]

    def run() -> dict[str, object]:
        return statistics_section(
            [contrast],
            margin=0.02,
            subgroup_settings=[setting],
            fixed_threshold=[fixed],
            n_resamples=40,
            matched_simulations=3,
            rankings=ranked,
        )

    beside = run()
    unforked = functools.partial(Forked, fork=False)
    monkeypatch.setattr(audit.statistics.section, "Forked", lambda function, *args, fork: unforked(function, *args))
    in_line = run()
    assert beside["subgroup_gaps"] and beside["fixed_threshold"] and len(beside["rankings"]["settings"]) == 3
    assert beside == in_line


@pytest.mark.slow
def test_a_report_drawn_beside_the_statistics_is_the_report_drawn_in_process(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path)
    results = bundle.root / "results.csv"
    _, written = audit_results(AuditRequest(results, bundle=bundle.root, key=bundle.public_key), tmp_path / "beside")
    in_process = verify(AuditRequest(results, bundle=bundle.root, key=bundle.public_key))
    finish_report(in_process, tmp_path / "in-process")
    assert any(path.suffix == ".png" for path in written)
    for path in written:
        assert path.read_bytes() == (tmp_path / "in-process" / path.relative_to(tmp_path / "beside")).read_bytes()
