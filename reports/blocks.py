"""The rendered report as a flat list of blocks, built once and written out as Markdown and as HTML.

Blocks hold plain, unescaped text: each renderer escapes every string it prints, so no input string reaches a
file unescaped whichever renderer writes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Tone = Literal["pass", "fail", "error", "warning", "info", "note"]


@dataclass(frozen=True)
class Heading:
    level: int  # 1 to 4
    text: str
    anchor: str = ""  # the id a table of contents links to (sections only)


@dataclass(frozen=True)
class Contents:
    """The table of contents: (anchor, title) of each section, in order."""

    entries: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Callout:
    """A highlighted line (the verdict, a skipped figure); ``tone`` picks its colour in HTML."""

    tone: Tone
    text: str


@dataclass(frozen=True)
class BulletList:
    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """Cells already formatted as text; ``numeric`` marks the columns to right-align."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]


@dataclass(frozen=True)
class Figure:
    """A PNG written to ``figures/<filename>``; Markdown links it, HTML embeds it; both link its SVG when there is
    one (``svg_filename``)."""

    filename: str
    caption: str
    png: bytes
    alt: str = ""  # the text alternative: what the figure shows, in words and numbers
    svg_filename: str = ""


@dataclass(frozen=True)
class Details:
    """Blocks folded under one line that says what they hold and how many rows or items: a long table, the flags
    beyond the first few, a gallery of figures. HTML folds them in a closed ``<details>`` (native, no script);
    Markdown prints the line, then the blocks, in the same place."""

    summary: str
    blocks: tuple[Block, ...]


Block = Heading | Contents | Paragraph | Callout | BulletList | Table | Figure | Details
