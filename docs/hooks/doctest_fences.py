"""A griffe extension for the API pages: a docstring's doctest examples (``>>>`` lines and the output under them)
become ``pycon`` code blocks, as the docstrings are written for doctest and not for Markdown."""

from __future__ import annotations

from typing import Any

import griffe


def fenced(text: str) -> str:
    """``text`` with each run of doctest lines (prompts, continuations and output up to a blank line) fenced."""
    out: list[str] = []
    inside = ""
    for line in text.splitlines():
        stripped = line.lstrip()
        if not inside and stripped.startswith(">>>"):
            inside = line[: len(line) - len(stripped)]
            out.append(f"{inside}```pycon")
        elif inside and not stripped:
            out.append(f"{inside}```")
            inside = ""
        out.append(line)
    if inside:
        out.append(f"{inside}```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fences the doctest examples of every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fenced(obj.docstring.value)
