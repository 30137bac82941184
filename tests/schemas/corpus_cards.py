"""The corpus cards (``docs/corpora/*.md``) read as the independent statement of each corpus's licence: the text of
a card's **Licence** bullet, and the release a card says its tables record (``source_package = ...``)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CARDS = sorted((REPO / "docs" / "corpora").glob("*.md"))


def card_text(card: str | Path) -> str:
    """A card's text with every run of blanks and line ends made one space."""
    return " ".join((REPO / card).read_text(encoding="utf-8").split())


def licence_bullet(card: str | Path) -> str:
    """The card's **Licence** bullet (up to the next top-level bullet), blanks made one space."""
    text = (REPO / card).read_text(encoding="utf-8")
    start = text.index("- **Licence**")
    end = text.index("\n- **", start)
    return " ".join(text[start:end].split())


def recorded_release(card: str | Path) -> str | None:
    """The ``source_package`` a card says its tables record (None where it names Debian packages per row)."""
    found = re.search(r"`source_package = ([^`]+)`", card_text(card))
    return found.group(1) if found else None
