"""Blocks as CommonMark/GitHub Markdown, with every input string escaped.

Characters that would start markup (``|`` would also end a table cell; ``_`` emphasis, ``~`` strikethrough and
``$`` math in GitHub's dialect) are backslash-escaped, ``<`` and ``>`` too so that no input string becomes raw
HTML when the Markdown is rendered, and newlines become ``<br>`` so that a cell or list item stays on its line.
A paragraph or list item loses its leading blanks (four would start a code block) and a leading list or
heading marker is made literal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from reports.blocks import Block, BulletList, Callout, Contents, Details, Figure, Heading, Paragraph, Table
from reports.format import visible_text

_SPECIAL = re.compile(r"([\\`*_~$\[\]<>|#&])")
_NEWLINE = re.compile(r"\r\n|\r|\n")
_BLOCK_START = re.compile(r"^(\d*)([-+=]|(?<=\d)[.)])")  # a list or an underline at the start of a block


# Text that escaping leaves as it is: most of a report's cells (numbers, ids, condition names), returned without the
# two substitutions (a paper-scale report's tables hold hundreds of thousands of cells).
_PLAIN = re.compile(r"[A-Za-z0-9 .,:;%()+=/-]*")


def escape_markdown(text: str) -> str:
    """``text`` as literal inline Markdown, on one line (other control characters as their escapes)."""
    if _PLAIN.fullmatch(text):
        return text
    return _NEWLINE.sub("<br>", _SPECIAL.sub(r"\\\1", visible_text(text, kept="\t\n\r")))


def _escape_block(text: str) -> str:
    """Inline escaping, leading blanks dropped and a leading list or heading marker made literal (for paragraphs
    and list items)."""
    return _BLOCK_START.sub(r"\1\\\2", escape_markdown(text.lstrip(" \t")), count=1)


def _table(table: Table) -> str:
    header = "| " + " | ".join(escape_markdown(column) for column in table.columns) + " |"
    rule = "|" + "|".join("---:" if numeric else "---" for numeric in table.numeric) + "|"
    body = ["| " + " | ".join(escape_markdown(cell) for cell in row) + " |" for row in table.rows]
    return "\n".join([header, rule, *body])


def _block(block: Block) -> str:
    match block:
        case Heading(level, text, _):
            return f"{'#' * level} {escape_markdown(text)}"  # GitHub derives the same anchor from the text
        case Contents(entries):
            return "**Contents**\n\n" + "\n".join(
                f"{number}. [{escape_markdown(title)}](#{anchor})" for number, (anchor, title) in enumerate(entries, 1)
            )
        case Paragraph(text):
            return _escape_block(text)
        case Callout(_, text):
            shown = escape_markdown(text.strip())  # a blank inside the ** would undo the emphasis
            return f"> **{shown}**" if shown else ">"
        case BulletList(items):
            return "\n".join(f"- {_escape_block(item)}" for item in items)
        case Table():
            return _table(block)
        case Figure(filename, caption, _, alt, svg):
            described = f"\n\nText alternative: {_escape_block(alt)}" if alt else ""
            vector = f" ([SVG](figures/{svg}))" if svg else ""
            return (
                f"![{escape_markdown(alt or caption)}](figures/{filename})\n\n*{escape_markdown(caption)}*{vector}"
                f"{described}"
            )
        case Details(summary, inner):
            return "\n\n".join([f"*{escape_markdown(summary.strip())}*", *(_block(item) for item in inner)])
    raise TypeError(f"unknown block {block!r}")


def render_markdown(blocks: Sequence[Block]) -> str:
    """The whole report as one Markdown document, blocks separated by blank lines."""
    return "\n\n".join(_block(block) for block in blocks) + "\n"
