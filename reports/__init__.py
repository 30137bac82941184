"""The rendered provenance report: ``report.json``, ``report.md``, ``report.html`` and ``figures/*.png``.

``write_report(report, out_dir)`` takes the plain dict that ``audit verify`` builds and writes the four
outputs, each atomically; ``finish_report(report, out_dir)`` is the one ending of a table audit (``audit verify``
and ``interbias reproduce``): the artefact-evaluation summary added, then the report written. Importing this
package imports neither matplotlib nor torch: figures import matplotlib when they are drawn.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from provenance.atomic import atomic_write_bytes, atomic_write_text
from reports.badges import artefact_evaluation_summary
from reports.document import ReportShapeError, build_document
from reports.figures import FigureOutcome, render_figures
from reports.html import render_html
from reports.markdown import render_markdown
from schemas.errors import InputError
from schemas.jsonable import json_safe

__all__ = ["ReportShapeError", "artefact_evaluation_summary", "finish_report", "report_json", "write_report"]

FIGURES_DIR = "figures"


def report_json(report: Mapping[str, Any]) -> str:
    """The report as strict JSON (sorted keys, indent 2); NaN and infinities are written as null."""
    return json.dumps(json_safe(report), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_report(report: Mapping[str, Any], out_dir: Path, figures: list[FigureOutcome] | None = None) -> list[Path]:
    """Write the report under ``out_dir`` and return the written paths (json, md, html, then figures).

    ``figures``: the report's figures when drawn already (``render_figures`` of its aggregates and curves).
    A figure skipped for lack of data is noted in the report, and a file of that name left by an earlier run
    is removed, so the folder never shows a figure the report does not.
    """
    out_dir = Path(out_dir)
    figures = render_figures(report) if figures is None else figures
    blocks = build_document(report, figures)
    title = f"Provenance report: {Path(str((report.get('source') or {}).get('path', 'results'))).name}"

    written = [out_dir / "report.json", out_dir / "report.md", out_dir / "report.html"]
    atomic_write_text(written[0], report_json(report))
    atomic_write_text(written[1], render_markdown(blocks))
    atomic_write_text(written[2], render_html(blocks, title))
    for figure in figures:
        path = out_dir / FIGURES_DIR / figure.filename
        if figure.png is None:
            path.unlink(missing_ok=True)
        else:
            atomic_write_bytes(path, figure.png)
            written.append(path)
    return written


def finish_report(
    report: dict[str, Any], out_dir: Path | None, figures: list[FigureOutcome] | None = None
) -> list[Path]:
    """Complete the report of a table audit with its artefact-evaluation summary and write it under ``out_dir``
    (nothing written without one, ``figures`` when drawn already); return the written paths. A folder that cannot
    be written is an InputError (one line, exit 2), never a traceback."""
    report["sections"].append(artefact_evaluation_summary(report))
    if out_dir is None:
        return []
    try:
        return write_report(report, out_dir, figures)
    except OSError as error:
        raise InputError(str(error.filename or out_dir), f"cannot write the report: {error.strerror}") from error
