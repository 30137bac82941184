"""The table of contents: each level-2 heading given a unique GitHub-style anchor."""

from __future__ import annotations

import re

from reports.blocks import Block, Contents, Heading


def slug(text: str) -> str:
    """A GitHub-style heading anchor: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", text.strip().lower()))


def _with_anchors(blocks: list[Block]) -> tuple[list[Block], Contents]:
    """Level-2 headings with unique anchors (``-1``, ``-2`` on repeats, as GitHub does) and the contents."""
    seen: dict[str, int] = {}
    entries = []
    out: list[Block] = []
    for block in blocks:
        if isinstance(block, Heading) and block.level == 2:
            base = slug(block.text) or "section"
            anchor = base if base not in seen else f"{base}-{seen[base]}"
            seen[base] = seen.get(base, 0) + 1
            block = Heading(2, block.text, anchor)
            entries.append((anchor, block.text))
        out.append(block)
    return out, Contents(tuple(entries))
