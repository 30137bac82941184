"""How every value of the report is printed, so Markdown, HTML and figure labels agree.

Numbers follow the one rule of ``schemas.wording.format_number`` (4 significant digits, residue as ``0``), which
the audit's own lines use too. Objects print as ``key: value`` pairs,
never as raw JSON. Long lists are cut with a count of what was left out, so a flag over 4,000 records stays
readable.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from schemas import MISSING, format_number

MAX_LISTED = 10  # record ids or list items printed before "... and N more"
UNHELD = "\ufffe\uffff"  # not characters of XML (SVG) or HTML text, though UTF-8 encodes them
# The format characters (Unicode category Cf) a name keeps: the direction marks (U+200E, U+200F, U+061C), which
# right-to-left names use and which reorder nothing beyond their neighbours, and the joiners (U+200C, U+200D),
# which Persian, Indic and emoji spellings need. Every other one is written as its escape: the explicit direction
# embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), whose unclosed U+202E would reverse the
# report's own text after it ("Trojan Source"), and the invisible ones (U+200B, U+2060, U+FEFF, U+00AD), which
# would make ``m\u200b1`` look like ``m1``.
KEPT_FORMAT = "\u200e\u200f\u061c\u200c\u200d"


def visible_text(text: str, kept: str = "") -> str:
    """``text`` with each control character (U+0001, a tab, a newline; those in ``kept`` aside, for a renderer that
    turns them into its own), each of ``UNHELD`` and each format character but ``KEPT_FORMAT`` written as its
    escape: an input string shows what it holds, on the lines it asks for, in the order it is written, and leaves
    the text around it as it is; it stays valid SVG and HTML text.

    >>> visible_text("noisy\\x01\\n中"), visible_text("a\\tb\\n", kept="\\t\\n"), visible_text("\\u202eevil")
    ('noisy\\\\x01\\\\n中', 'a\\tb\\n', '\\\\u202eevil')
    >>> visible_text("m\\u200b1"), visible_text("\\u200f\\u05e9\\u05dd")
    ('m\\\\u200b1', '\\u200fשם')
    """
    if text.isprintable():
        return text
    return "".join(
        repr(char)[1:-1] if char not in kept and (_escaped_category(char) or char in UNHELD) else char for char in text
    )


def _escaped_category(char: str) -> bool:
    """A control character, or a format character a name does not keep (``KEPT_FORMAT``)."""
    category = unicodedata.category(char)
    return category == "Cc" or (category == "Cf" and char not in KEPT_FORMAT)


def format_list(items: Sequence[Any], limit: int = MAX_LISTED) -> str:
    """The first ``limit`` items, comma-separated, then how many more there are; ``(none)`` when empty."""
    if not items:
        return "(none)"
    shown = ", ".join(format_value(item) for item in items[:limit])
    hidden = len(items) - limit
    return f"{shown}, ... and {hidden} more" if hidden > 0 else shown


def format_value(value: Any) -> str:
    """One cell or inline value as text (not yet escaped for Markdown or HTML)."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_number(value)
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "; ".join(f"{key}: {format_value(item)}" for key, item in value.items()) or "(none)"
    if isinstance(value, list | tuple):
        return format_list(value)
    if hasattr(value, "item"):  # numpy scalar: print it as the Python number it holds
        return format_value(value.item())
    return str(value)
