"""The report's own sections (lines, tables and the figures that belong to them), the Figures section (a gallery
shown by its first figure, the others folded) and the published claims."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from reports.blocks import Block, BulletList, Details, Figure, Heading, Paragraph
from reports.document.shape import _entries
from reports.document.tables import rows_blocks, table_blocks
from reports.figures import FigureOutcome
from reports.format import format_list, format_value
from schemas import count

GALLERY_WORDS = 2  # figures whose file names begin with the same two words (det_curves_E01, ...) are one gallery


def _figures_section(figures: Sequence[FigureOutcome], placed: Collection[str] = ()) -> list[Block]:
    """The drawn figures, each with its caption, text alternative and SVG, but those a section of ``placed`` (ids)
    shows; a gallery (figures of one kind, such as a DET figure per experiment) shown by its first with the others
    folded; then one list of those skipped and why."""
    blocks: list[Block] = [Heading(2, "Figures")]
    galleries: dict[str, list[Figure]] = {}
    for outcome in figures:
        if outcome.png is not None and outcome.section not in placed:
            svg = outcome.svg_filename if outcome.svg is not None else ""
            kind = "_".join(outcome.filename.removesuffix(".png").split("_")[:GALLERY_WORDS])
            drawn = Figure(outcome.filename, outcome.caption, outcome.png, outcome.alt, svg)
            galleries.setdefault(kind, []).append(drawn)
    for first, *rest in galleries.values():
        blocks.append(first)
        if rest:
            named = format_list([figure.filename.removesuffix(".png") for figure in rest])
            blocks.append(Details(f"{count(len(rest), 'more figure')} of this kind: {named}", tuple(rest)))
    skipped = [f"{outcome.caption}: skipped, {outcome.skipped_because}." for outcome in figures if outcome.png is None]
    if skipped:
        blocks += [Paragraph("Not drawn, for lack of data:"), BulletList(tuple(skipped))]
    return blocks


def _claims_section(report: Mapping[str, Any]) -> list[Block]:
    claims = _entries(report.get("claims"), "claims")
    if not claims:
        return []
    statuses: dict[str, int] = {}
    for claim in claims:
        status = str(claim.get("status", "not stated"))
        statuses[status] = statuses.get(status, 0) + 1
    summary = ", ".join(f"{count} {status}" for status, count in statuses.items())
    return [
        Heading(2, "Published claims"),
        Paragraph(f"{len(claims)} claims checked: {summary}."),
        *rows_blocks(claims),
    ]


def _section_blocks(section: Mapping[str, Any], level: int = 2, figures: Sequence[FigureOutcome] = ()) -> list[Block]:
    """A section's heading, lines and table, then its further tables (``tables``: each a ``title`` and ``rows``)
    and the drawn figures that belong to it (``FigureOutcome.section``)."""
    title = str(section.get("title") or section.get("id") or "(untitled section)")
    status = section.get("status")
    blocks: list[Block] = [Heading(level, f"{title} (status: {status})" if status else title)]
    lines = section.get("lines") or []
    if lines:
        blocks.append(BulletList(tuple(format_value(line) for line in lines)))
    blocks += _section_table_blocks(section.get("table"), f"section {section.get('id')!r} table")
    for extra in _entries(section.get("tables"), f"section {section.get('id')!r} tables"):
        blocks += [Paragraph(str(extra.get("title") or "")), *_section_table_blocks(extra.get("rows"), "its rows")]
    for outcome in figures:
        if outcome.png is not None and outcome.section and outcome.section == str(section.get("id")):
            svg = outcome.svg_filename if outcome.svg is not None else ""
            blocks.append(Figure(outcome.filename, outcome.caption, outcome.png, outcome.alt, svg))
    return blocks


def _section_table_blocks(table: Any, where: str) -> list[Block]:
    """A section's table: ``{columns, rows}`` (rows as objects or lists; ``n_rows``, when given, counts the rows of
    which ``rows`` holds the first, and ``all_rows_in`` names where report.json holds every one), or a plain list of
    row objects."""
    if table is None or table == [] or table == {}:
        return []
    if not isinstance(table, Mapping):
        return rows_blocks(_entries(table, where))
    rows = table.get("rows") or []
    columns = [str(column) for column in table.get("columns") or []]
    if not rows:
        return []
    if not columns:
        return rows_blocks(_entries(rows, f"{where} rows"))
    values = [[row.get(column) for column in columns] if isinstance(row, Mapping) else list(row) for row in rows]
    n_rows = table.get("n_rows")
    return table_blocks(columns, values, n_rows=n_rows if isinstance(n_rows, int) and n_rows > len(values) else None)
