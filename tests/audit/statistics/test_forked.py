"""Work run beside the audit in a forked process (``schemas.Forked``): the command line draws a table audit's figures
and a bundle audit's that way, and the statistics compute the subgroup settings' beside the contrasts: the written
report must be the one drawn in process, byte for byte."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

import audit.statistics.section
from audit.cli import audit_results
from audit.statistics.coverage import CoverageDesign
from audit.statistics.section import statistics_section
from audit.statistics.subgroups import FixedThresholdInput, SubgroupInput
from audit.verify import AuditRequest, verify
from reports import finish_report
from schemas import Forked
from tests.provenance.synthetic_bundle import build_bundle


def test_the_subgroup_settings_computed_beside_the_contrasts_equal_those_computed_in_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    design = CoverageDesign(12, targets_per_speaker=6, nontargets_per_speaker=9)
    contrast = design.dataset(np.random.default_rng(40))
    labels, enrol, test = (np.asarray(v) for v in (contrast.labels, contrast.clusters, contrast.test_speakers))
    fields = (np.asarray(contrast.scores["clean"]), labels, enrol, test, np.asarray(contrast.subgroups))
    setting = SubgroupInput({"setting": "s"}, *fields)
    fixed = FixedThresholdInput({"setting": "s"}, *fields, dev_speakers=["0", "1", "2", "3"])

    def run() -> dict[str, object]:
        return statistics_section(
            [contrast],
            margin=0.02,
            subgroup_settings=[setting],
            fixed_threshold=[fixed],
            n_resamples=40,
            matched_simulations=3,
        )

    beside = run()
    unforked = functools.partial(Forked, fork=False)
    monkeypatch.setattr(audit.statistics.section, "Forked", lambda function, *args, fork: unforked(function, *args))
    in_line = run()
    assert beside["subgroup_gaps"] and beside["fixed_threshold"]
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
