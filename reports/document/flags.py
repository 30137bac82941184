"""The Flags section: the flags by severity, each with its message, records and details, those beyond the first
``SHOWN_FLAGS`` of a severity folded under one line naming them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reports.blocks import Block, Details, Heading, Paragraph
from reports.document.shape import _entries, as_rows
from reports.document.tables import rows_blocks
from reports.format import format_list, format_value
from schemas import count

SEVERITY_ORDER = ("error", "warning", "info")
MAX_DETAIL_ROWS = 20  # failure cases listed under one flag
SHOWN_FLAGS = 3  # flags of one severity shown in full; the others folded under a line naming them


def _flags(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return _entries(report.get("flags"), "flags")


def _flag_blocks(flag: Mapping[str, Any]) -> list[Block]:
    records = list(flag.get("records") or [])
    blocks: list[Block] = [
        Heading(4, str(flag.get("id", "(no id)"))),
        Paragraph(format_value(flag.get("message", ""))),
    ]
    if records:
        blocks.append(Paragraph(f"{count(len(records), 'record')}: {format_list(records)}"))
    details = flag.get("details") or {}
    for key, value in details.items() if isinstance(details, Mapping) else [("details", details)]:
        rows = as_rows(value)
        if rows is not None:
            blocks.append(Paragraph(f"{key} ({len(rows)}):"))
            blocks += rows_blocks(rows, MAX_DETAIL_ROWS)
        else:
            blocks.append(Paragraph(f"{key}: {format_value(value)}"))
    return blocks


def _flags_section(report: Mapping[str, Any]) -> list[Block]:
    flags = _flags(report)
    blocks: list[Block] = [Heading(2, "Flags")]
    if not flags:
        return [*blocks, Paragraph("No flags were raised.")]
    known = [severity for severity in SEVERITY_ORDER if any(flag.get("severity") == severity for flag in flags)]
    others = sorted({str(flag.get("severity")) for flag in flags} - set(SEVERITY_ORDER))
    for severity in known + others:
        group = [flag for flag in flags if str(flag.get("severity")) == severity]
        blocks.append(Heading(3, f"{severity} ({len(group)})"))
        for flag in group[:SHOWN_FLAGS]:
            blocks += _flag_blocks(flag)
        rest = group[SHOWN_FLAGS:]
        if rest:
            named = format_list([str(flag.get("id", "(no id)")) for flag in rest])
            folded = [block for flag in rest for block in _flag_blocks(flag)]
            blocks.append(Details(f"{count(len(rest), f'more {severity} flag')}: {named}", tuple(folded)))
    return blocks
