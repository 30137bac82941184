"""All blocks of the report in a reviewer's reading order (``build_document``), each section placed by its id."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reports.blocks import Block, Heading
from reports.document.aggregates import _aggregates_section, _contrasts_section
from reports.document.contents import _with_anchors
from reports.document.flags import _flags_section
from reports.document.headline import _headline_section
from reports.document.run import _what_was_run
from reports.document.sections import _claims_section, _figures_section, _section_blocks
from reports.document.shape import _entries
from reports.document.verdict import _verdict_blocks
from reports.figures import FigureOutcome

BUNDLE_PREFIX = "bundle-"
BADGES_ID = "artefact-evaluation"
RUN_SECTIONS = ("rows-used", "score-join")  # sections that say what the audit read, shown with what was run


def build_document(report: Mapping[str, Any], figures: Sequence[FigureOutcome]) -> list[Block]:
    """All blocks of the report in reading order: verdict, headline results, contents, then the body and the
    appendix; a section this module does not know goes with the statistics."""
    sections = _entries(report.get("sections"), "sections")
    run = [section for section in sections if section.get("id") in RUN_SECTIONS]
    bundle = [section for section in sections if str(section.get("id", "")).startswith(BUNDLE_PREFIX)]
    badges = [section for section in sections if section.get("id") == BADGES_ID]
    others = [section for section in sections if not any(section in group for group in (run, bundle, badges))]
    placed = {str(section.get("id")) for section in others}
    body: list[Block] = [*_figures_section(figures, placed), *_flags_section(report)]
    for section in others:
        body += _section_blocks(section, figures=figures)
    body += _claims_section(report)
    for section in badges:
        body += _section_blocks(section)
    body += _what_was_run(report)
    for section in run:
        body += _section_blocks(section, 3)
    if bundle:
        body.append(Heading(2, "Appendix: bundle checks"))
        for section in bundle:
            body += _section_blocks(section, 3)
    body += [*_aggregates_section(report), *_contrasts_section(report)]
    headline = _headline_section(report)
    anchored, contents = _with_anchors([*headline, *body])
    return [*_verdict_blocks(report), *anchored[: len(headline)], contents, *anchored[len(headline) :]]
