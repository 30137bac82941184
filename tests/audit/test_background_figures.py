"""The command line draws a bundle audit's figures in a forked process while the statistics run: the written
report must be byte for byte the one drawn in process, and a failure there must surface, not vanish."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from audit.cli import audit_results
from audit.verify import verify
from reports import figures as report_figures
from reports import finish_report
from reports.figures import BackgroundFigures

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "provenance"))
from synthetic_bundle import build_bundle


def test_figures_drawn_beside_the_statistics_give_the_report_drawn_in_process(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path)
    results = bundle.root / "results.csv"
    _, written = audit_results(results, bundle=bundle.root, key=bundle.public_key, out=tmp_path / "beside")
    in_process = verify(results, bundle=bundle.root, key=bundle.public_key)
    finish_report(in_process, tmp_path / "in-process")
    assert any(path.suffix == ".png" for path in written)
    for path in written:
        assert path.read_bytes() == (tmp_path / "in-process" / path.relative_to(tmp_path / "beside")).read_bytes()


def test_a_failure_in_the_figure_process_is_raised_with_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(report: Any) -> Any:
        raise ValueError("no such figure")

    monkeypatch.setattr(report_figures, "render_figures", broken)  # the forked process inherits it
    drawing = BackgroundFigures({"aggregates": {}, "curves": []})
    try:
        with pytest.raises(RuntimeError, match=r"(?s)drawing the figures failed.*ValueError: no such figure"):
            drawing.result()
    finally:
        drawing.close()
