"""Blocks as one self-contained HTML file: inline CSS, figures as base64 data URIs, no external resource.

Laid out for a screen of any width (a viewport meta tag; text wraps anywhere, a table cell between words unless it
holds a word of 24 characters or more, such as a 64-hex digest or a path): on a wide screen (60rem and more) every
table takes at most the page width, every column shown, its text cells wrapping and its numbers kept whole; on a
narrow one cells keep a readable width and a wide table scrolls sideways inside its own box (the page body never
overflows); the contents flow in as many columns as fit (one on a phone). In print tables take the page width and
wrap their cells, so no column is cut. Section headings carry the ids the table of contents links to; each figure
links its SVG beside the embedded PNG. Long tables, the flags beyond the first few and figure galleries are folded in
native ``<details>`` (no script) under a line saying what they hold; a printout shows them unfolded.

Every string is passed through ``html.escape``; a Content-Security-Policy that allows no script and no remote
load is a second line of defence should a string ever slip through.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence

from reports.blocks import Block, BulletList, Callout, Contents, Details, Figure, Heading, Paragraph, Table
from reports.format import visible_text

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
LONG_WORD = re.compile(r"\S{24}")  # a cell holding such a word (a digest, a path) may wrap anywhere in it
STYLE = """
body { font-family: system-ui, sans-serif; max-width: 90rem; margin: 1.5rem auto; padding: 0 1rem;
  overflow-wrap: anywhere; }
td { overflow-wrap: break-word; } td.long { overflow-wrap: anywhere; }
h1 { font-size: 1.6rem; }
h1, h2, h3, h4 { line-height: 1.2; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: .2rem; margin-top: 2rem; }
.table-box { overflow-x: auto; max-width: 100%; margin: .5rem 0 1rem; }
table { border-collapse: collapse; font-size: .85rem; max-width: 100%; }
th, td { border: 1px solid #ccc; padding: .2rem .45rem; vertical-align: top; }
th { background: #f3f3f3; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.callout { padding: .5rem .8rem; border-left: .3rem solid #888; background: #f6f6f6; font-weight: 600; }
.pass { border-color: #2e7d32; background: #e8f5e9; } .fail { border-color: #c62828; background: #ffebee; }
figure { margin: 1rem 0; } figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { font-size: .85rem; color: #555; }
nav.toc { background: #fafafa; border: 1px solid #ddd; padding: .3rem 1rem; }
nav.toc ol { margin: .3rem 0; columns: 20rem auto; column-gap: 2.5rem; } nav.toc li { break-inside: avoid; }
details.alt { font-size: .8rem; color: #444; }
details.fold { margin: .5rem 0 1rem; border: 1px solid #ddd; padding: .2rem .6rem; }
details.fold > summary { cursor: pointer; padding: .2rem 0; color: #333; }
@media (max-width: 60rem) {
  table { max-width: none; }
  th, td { min-width: 4.5rem; }
  th { overflow-wrap: normal; }
}
@media print {
  body { max-width: none; margin: 0; }
  .table-box { overflow: visible; }
  table { font-size: 7pt; width: 100%; max-width: 100%; table-layout: auto; }
  th, td { overflow-wrap: anywhere; word-break: break-word; padding: .1rem .2rem; min-width: 0; }
  td.num { white-space: normal; }
  nav.toc ol { columns: 1; }
  details.fold::details-content { content-visibility: visible; display: block; }
}
""".strip()


def _text(text: str) -> str:
    """Escaped text; input newlines kept as line breaks, other control characters as their escapes."""
    return (
        html.escape(visible_text(text, kept="\t\n\r"), quote=True)
        .replace("\r\n", "\n")
        .replace("\r", "\n")
        .replace("\n", "<br>")
    )


def _table(table: Table) -> str:
    header = "".join(f"<th>{_text(column).replace('_', '_<wbr>')}</th>" for column in table.columns)
    rows = [
        "<tr>"
        + "".join(
            f'<td class="num">{_text(cell)}</td>'
            if numeric
            else f'<td class="long">{_text(cell)}</td>'
            if LONG_WORD.search(cell)
            else f"<td>{_text(cell)}</td>"
            for cell, numeric in zip(row, table.numeric, strict=False)
        )
        + "</tr>"
        for row in table.rows
    ]
    return (
        f'<div class="table-box"><table><thead><tr>{header}</tr></thead><tbody>\n'
        + "\n".join(rows)
        + "\n</tbody></table></div>"
    )


def _block(block: Block) -> str:
    match block:
        case Heading(level, text, anchor):
            ident = f' id="{_text(anchor)}"' if anchor else ""
            return f"<h{level}{ident}>{_text(text)}</h{level}>"
        case Contents(entries):
            items = "".join(f'<li><a href="#{_text(anchor)}">{_text(title)}</a></li>' for anchor, title in entries)
            return f'<nav class="toc" aria-label="Contents"><strong>Contents</strong><ol>{items}</ol></nav>'

        case Paragraph(text):
            return f"<p>{_text(text)}</p>"
        case Callout(tone, text):
            return f'<p class="callout {tone}">{_text(text)}</p>'
        case BulletList(items):
            return "<ul>" + "".join(f"<li>{_text(item)}</li>" for item in items) + "</ul>"
        case Table():
            return _table(block)
        case Figure(_, caption, png, alt, svg):
            data = base64.b64encode(png).decode("ascii")
            described = (
                f'<details class="alt"><summary>Text alternative</summary><p>{_text(alt)}</p></details>' if alt else ""
            )
            vector = f' (<a href="figures/{_text(svg)}">SVG</a>)' if svg else ""
            return (
                f'<figure><img alt="{_text(alt or caption)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{_text(caption)}{vector}</figcaption>{described}</figure>"
            )
        case Details(summary, inner):
            body = "\n".join(_block(item) for item in inner)
            return f'<details class="fold"><summary>{_text(summary)}</summary>\n{body}\n</details>'
    raise TypeError(f"unknown block {block!r}")


def render_html(blocks: Sequence[Block], title: str) -> str:
    """The whole report as one HTML document."""
    body = "\n".join(_block(block) for block in blocks)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        f"<title>{_text(title)}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )
